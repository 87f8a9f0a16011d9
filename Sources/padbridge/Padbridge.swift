public import ArgumentParser
public import Logging

@main
struct Padbridge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "padbridge",
        abstract: "A Linux gamepad bridge with controller feedback.",
        discussion: """
            Virtual pads: an Xbox 360 pad through /dev/uinput and a DualSense through /dev/uhid that the \
            kernel's hid-playstation driver binds. Pad events go in as JSON lines, feedback comes out as JSON lines.
            Feedback to physical pads: rumble, lightbar, player LEDs, mic LED and adaptive triggers, over hidraw \
            (DualSense, DualShock 4) or evdev force feedback.
            Diagnostics: `list` shows the connected pads, `monitor` what one does, `doctor` what to fix.
            """,
        subcommands: [
            ListCommand.self, MonitorCommand.self, DoctorCommand.self, VirtualCommand.self, FeedbackCommand.self,
            RemapCommand.self, ServeCommand.self, PairCommand.self, PairingWindowCommand.self, ConnectCommand.self,
            RecordCommand.self, ReplayCommand.self, HideServiceCommand.self, SDLProbeCommand.self,
        ]
    )
}

/// Flags every command shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    /// Bootstraps logging to standard error. Only the executable does this; libraries take a Logger.
    func makeLogger(label: String) -> Logger {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
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
