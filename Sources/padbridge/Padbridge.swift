public import ArgumentParser
public import Logging

@main
struct Padbridge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "padbridge",
        abstract: "A Linux gamepad bridge with controller feedback: forward pads, remap them, see what they do.",
        discussion: """
            Forwarding: a pad plugged into this machine shows up as a virtual pad on another, the one running the \
            games, and rumble, lightbar, LEDs and trigger effects come back to it. On the host, once: \
            `padbridge serve --pair` (it shows a pairing code); here, once: `padbridge hosts` (the hosts announced \
            on the LAN) and `padbridge pair gaming-pc CODE`; then every time: `padbridge connect gaming-pc --all`.

            Remapping: a pad is grabbed and shown to games as a virtual Xbox 360 pad or DualSense, through a \
            profile (buttons, sticks, triggers, turbo, layers, gyro), feedback going back to it. For example \
            `padbridge remap --all`: every pad, each with its own profile from ~/.config/padbridge/profiles/.

            Diagnostics: `list` shows the connected pads, `monitor` what one does, `doctor` what to fix (device \
            access, modules, udev rules), `record` and `replay` capture a pad and bring it back. For example \
            `padbridge monitor 0 --view`: the first pad, live and full-screen.

            Each command has its own help (`padbridge help remap`) and manual page (`man padbridge-remap`). The \
            services (padbridge-serve, padbridge-connect@HOST, padbridge-remap) are in docs/install.md.
            """,
        version: padbridgeVersion,
        subcommands: [SDLProbeCommand.self, HideServiceCommand.self],
        groupedSubcommands: [
            CommandGroup(
                name: "Forwarding",
                subcommands: [
                    HostsCommand.self, ConnectCommand.self, ServeCommand.self, PairCommand.self, PairingWindowCommand.self,
                    StatusCommand.self, ClientsCommand.self, RevokeCommand.self, ConsoleCommand.self,
                ]),
            CommandGroup(name: "Remapping", subcommands: [RemapCommand.self]),
            CommandGroup(name: "Emulators", subcommands: [DSUCommand.self]),
            CommandGroup(
                name: "Diagnostics",
                subcommands: [
                    ListCommand.self, MonitorCommand.self, DoctorCommand.self, RecordCommand.self, ReplayCommand.self,
                ]),
            CommandGroup(name: "Virtual pads and feedback", subcommands: [VirtualCommand.self, FeedbackCommand.self]),
        ]
    )

    /// ArgumentParser's main, except that a command that chose `--events json` says why it failed as a `failed` event.
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if StatusOutput.format == .json, code != .success, !(error is ExitCode) {
                StatusOutput.say(.failed, message(for: error), ["exitCode": EventValue(code.rawValue)])
                exit(withError: ExitCode(code.rawValue))
            }
            exit(withError: error)
        }
    }
}

/// Flags every command shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What is said on standard error: text (sentences) or json (one object per line, each naming its event; "
                + "docs/diagnostics.md lists them).",
            valueName: "format"))
    var events: EventFormat = .text

    /// Bootstraps logging to standard error, and the status lines' format. Only the executable does this; libraries
    /// take a Logger.
    func makeLogger(label: String) -> Logger {
        let level = logLevel
        let format = events
        StatusOutput.format = format
        LoggingSystem.bootstrap { label in
            var handler = EventLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {
    // Spelled out, as for VirtualPadKind (VirtualCommand.swift): the defaults are slow to build at every start.
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    public static var allValueDescriptions: [String: String] { [:] }
    public var defaultValueDescription: String { rawValue }
}
