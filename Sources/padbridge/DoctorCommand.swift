import ArgumentParser
import Logging
import PadCore
import PadLinux
import PadSessions

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check that this machine is set up for padbridge, and say what to fix.",
        discussion: """
            Checks /dev/uinput and /dev/uhid (present, writable), the kernel modules, the udev rules, and for each \
            pad: its event nodes readable, its hidraw node writable where feedback goes through it, and whether \
            another program has grabbed it (checked by grabbing it for an instant).
            Exit status 1 when something blocks padbridge's main uses (virtual pads, a grabbed pad), else 0.
            """
    )

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
        let findings = SetupInspection(facts: LiveSystemFacts()).findings(for: controllers)
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
