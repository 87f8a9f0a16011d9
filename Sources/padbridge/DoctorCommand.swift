import ArgumentParser
import Logging
import PadCore
import PadDNSSD
import PadLinux
import PadSessions

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check that this machine is set up for padbridge, and say what to fix.",
        discussion: """
            Checks /dev/uinput and /dev/uhid (present, writable), the kernel modules, the udev rules, and for each \
            pad: its event nodes readable, its hidraw node writable where feedback goes through it, and whether \
            another program has grabbed it (checked by grabbing it for an instant). Also whether avahi-daemon answers \
            (for `serve` to announce itself and `hosts` to find hosts; advice only: addresses work without it).
            With --profile FILE, also what that remap profile makes: checked as remap checks it, and the virtual \
            keyboard and mouse it drives, with what drives each key, button, wheel and the pointer.
            Exit status 1 when something blocks padbridge's main uses (virtual pads, a grabbed pad, a broken \
            --profile), else 0.
            """
    )

    @Option(
        name: .long, help: ArgumentHelp("Also check this remap profile and say what it makes.", valueName: "file"),
        completion: .file(extensions: ["toml"]))
    var profile: String?

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.doctor")
        let controllers: [Controller]
        do {
            controllers = try ControllerCatalog.discover(logger: logger, sdlSource: .padbridgeHelper)
        } catch {
            logger.warning("could not list the pads (\(error)); checking the rest")
            controllers = []
        }
        var findings = SetupInspection(facts: LiveSystemFacts()).findings(for: controllers) + [Self.dnssdFinding(logger: logger)]
        if let profile { findings += Self.profileFindings(profile) }
        let output = LineOutput.standardOutput
        for finding in findings {
            output.write(Self.label(finding.severity).padding(toWidth: 8) + finding.subject + ": " + finding.finding)
            if let fix = finding.fix, finding.severity != .ok {
                output.write(String(repeating: " ", count: 8) + "fix: " + fix)
            }
        }
        let problems = findings.filter { $0.severity == .problem }.count
        let advice = findings.filter { $0.severity == .advice }.count
        if problems > 0 {
            output.write("\(problems) problem\(problems == 1 ? "" : "s") block padbridge; see \"fix\" above.")
            throw ExitCode(1)
        }
        output.write(
            advice == 0
                ? "Everything padbridge needs is in place (\(controllers.count) pad\(controllers.count == 1 ? "" : "s") found)."
                : "Nothing blocks padbridge; \(advice) piece\(advice == 1 ? "" : "s") of advice above.")
    }

    /// A remap profile: refused as remap would refuse it (a problem), else what it makes.
    static func profileFindings(_ path: String) -> [SetupFinding] {
        let subject = "profile \(path)"
        let profile: RemapProfile
        do {
            profile = try RemapCommand.loadProfile(path, for: .everything)
        } catch {
            return [SetupFinding(.problem, subject, "\(error)", fix: "correct the line named, then run doctor --profile again")]
        }
        let summary = profile.desktopSummary
        guard !summary.isEmpty else {
            return [SetupFinding(.ok, subject, "valid; it drives the virtual pad only (no keyboard or mouse)")]
        }
        return [SetupFinding(.ok, subject, "valid; besides the virtual pad (none with remap --as none) it makes:")]
            + summary.map { SetupFinding(.ok, subject, $0) }
    }

    /// DNS-SD: advice when it does not work (forwarding by address does not need it).
    static func dnssdFinding(logger: Logger) -> SetupFinding {
        let subject = "avahi-daemon"
        guard let loop = try? DeviceEventLoop() else {
            return SetupFinding(.advice, subject, "not checked: no event loop could be made")
        }
        guard let problem = DNSSDAvailability.problem(loop: loop, logger: logger) else {
            return SetupFinding(
                .ok, subject, "answers: `padbridge serve` announces itself on the LAN and `padbridge hosts` lists hosts")
        }
        switch problem.code {
        case .libraryMissing:
            return SetupFinding(
                .advice, subject,
                "Avahi's client library is not installed (\(problem.reason)): `serve` is not announced on the LAN and "
                    + "`hosts` finds nothing; hosts are reached by address",
                fix: "sudo apt install avahi-daemon libavahi-client3")
        case .daemonNotRunning:
            return SetupFinding(
                .advice, subject,
                "not running (\(problem.reason)): `serve` is not announced on the LAN and `hosts` finds nothing; hosts "
                    + "are reached by address",
                fix: "sudo systemctl enable --now avahi-daemon (not installed: sudo apt install avahi-daemon)")
        case .failed:
            return SetupFinding(.advice, subject, "does not work here: \(problem.reason)")
        }
    }

    static func label(_ severity: SetupFinding.Severity) -> String {
        switch severity {
        case .ok: "ok"
        case .advice: "advice"
        case .problem: "PROBLEM"
        }
    }
}

extension String {
    /// The string followed by spaces up to `width` characters, with at least one space.
    func padding(toWidth width: Int) -> String {
        self + String(repeating: " ", count: Swift.max(1, width - count))
    }
}
