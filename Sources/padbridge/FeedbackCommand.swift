import ArgumentParser
import Glibc
import Logging
import PadCore
import PadJSONLines
import PadLinux
import PadSessions

struct FeedbackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback",
        abstract: "Set a physical pad's rumble, lightbar, player LEDs, mic LED and adaptive triggers.",
        discussion: """
            PAD is an index or ID (or a unique start of one) as `padbridge list` prints them, or a device path: a \
            DualSense or DualShock 4 hidraw node (/dev/hidrawN: every output) or any pad's evdev node with force \
            feedback (/dev/input/eventN: rumble only). A pad chosen by index or ID gets its feedback through its \
            hidraw node where it has one that takes feedback (DualSense, DualShock 4), else its pad event node.

            One-shot mode applies the options and exits. Lightbar, LEDs and triggers stay as set; rumble never \
            outlives the command: with --duration it stops after that long, without it runs until SIGINT/SIGTERM. \
            Options for outputs the pad does not have (a lightbar on an Xbox pad) are refused, naming the pad and \
            what it has, and nothing is sent.

            --stdin applies feedback JSON lines (what `padbridge virtual` prints) until end of input, SIGINT or \
            SIGTERM, then leaves the pad quiet: rumble off, triggers off, lightbar and player LEDs as they were.
              padbridge virtual --type dualsense | padbridge feedback /dev/hidraw3 --stdin
            """
    )

    @Argument(help: "The pad: index, ID or ID prefix (see `padbridge list`), /dev/hidrawN or /dev/input/eventN.")
    var pad: String

    @Option(name: .long, help: ArgumentHelp("Rumble: strong and weak motor, each 0...1.", valueName: "STRONG,WEAK"))
    var rumble: String?

    @Option(name: .long, help: ArgumentHelp("Stop the rumble after this many milliseconds.", valueName: "MS"))
    var duration: Int?

    @Option(name: .long, help: ArgumentHelp("Lightbar colour in hex.", valueName: "RRGGBB"))
    var lightbar: String?

    @Option(name: .long, help: ArgumentHelp("Player LEDs as the kernel and SDL show player 1...5.", valueName: "N"))
    var player: Int?

    @Option(
        name: .customLong("player-leds"),
        help: ArgumentHelp("Player LEDs as a bit mask 0...31 (bit 0 = leftmost LED).", valueName: "MASK"))
    var playerLeds: String?

    @Option(name: .customLong("mic-led"), help: ArgumentHelp("The microphone-mute LED: on or off.", valueName: "on|off"))
    var micLed: String?

    @Option(
        name: .customLong("trigger"),
        help: ArgumentHelp(
            "An adaptive-trigger effect, e.g. right:weapon:2:6:8. EFFECT: off, feedback:START:STRENGTH, "
                + "weapon:START:END:STRENGTH, vibration:POSITION:AMPLITUDE:FREQUENCY, raw:HEX22.",
            valueName: "left|right:EFFECT"))
    var triggers: [String] = []

    @Flag(name: .customLong("stdin"), help: "Apply feedback JSON lines from standard input until it ends.")
    var fromStandardInput = false

    @OptionGroup var global: GlobalOptions

    /// The one-shot request: what to set and how long the rumble lasts. Pure; throws `ValidationError`.
    func plan() throws -> (feedback: Feedback, rumbleMilliseconds: UInt64?) {
        var feedback = Feedback()
        if let rumble {
            let parts = rumble.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let strong = Double(parts[0]), let weak = Double(parts[1]),
                (0...1).contains(strong), (0...1).contains(weak)
            else {
                throw ValidationError("--rumble takes STRONG,WEAK, each 0...1 (e.g. 0.5,0.25); got \"\(rumble)\".")
            }
            feedback.rumble = Rumble(strong: strong, weak: weak)
        }
        var milliseconds: UInt64?
        if let duration {
            guard feedback.rumble != nil else { throw ValidationError("--duration applies to --rumble only.") }
            guard (1...3_600_000).contains(duration) else {
                throw ValidationError("--duration must be 1...3600000 milliseconds; got \(duration).")
            }
            milliseconds = UInt64(duration)
        }
        if let lightbar {
            let digits = lightbar.hasPrefix("#") ? String(lightbar.dropFirst()) : lightbar
            guard digits.utf8.count == 6, let value = UInt32(digits, radix: 16) else {
                throw ValidationError("--lightbar takes six hex digits RRGGBB (e.g. ff0040); got \"\(lightbar)\".")
            }
            feedback.lightbar = LightbarColor(
                red: UInt8(value >> 16 & 0xFF), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
        }
        if player != nil && playerLeds != nil {
            throw ValidationError("--player and --player-leds both set the player LEDs: give one of them.")
        }
        if let player {
            guard (1...5).contains(player) else { throw ValidationError("--player must be 1...5; got \(player).") }
            feedback.playerLeds = PlayerLedPatterns.player[player - 1]
        }
        if let playerLeds {
            let value = playerLeds.lowercased().hasPrefix("0x")
                ? Int(playerLeds.dropFirst(2), radix: 16) : Int(playerLeds)
            guard let value, (0...31).contains(value) else {
                throw ValidationError("--player-leds must be a mask 0...31 (or 0x00...0x1f); got \"\(playerLeds)\".")
            }
            feedback.playerLeds = UInt8(value)
        }
        if let micLed {
            switch micLed.lowercased() {
            case "on": feedback.micLed = true
            case "off": feedback.micLed = false
            default: throw ValidationError("--mic-led takes on or off; got \"\(micLed)\".")
            }
        }
        for trigger in triggers {
            guard let colon = trigger.firstIndex(of: ":"), let side = TriggerSide(rawValue: String(trigger[..<colon]))
            else {
                throw ValidationError("--trigger takes left:EFFECT or right:EFFECT (e.g. right:weapon:2:6:8); got \"\(trigger)\".")
            }
            do {
                feedback[trigger: side] = try TriggerEffect(commandLine: String(trigger[trigger.index(after: colon)...]))
            } catch {
                throw ValidationError("--trigger \(trigger): \(error)")
            }
        }
        return (feedback, milliseconds)
    }

    func validate() throws {
        if pad.hasPrefix("/") {
            let name = pad.split(separator: "/").last.map(String.init) ?? ""
            let resolvedName = Self.resolve(pad).split(separator: "/").last.map(String.init) ?? ""
            guard [name, resolvedName].contains(where: { $0.hasPrefix("hidraw") || $0.hasPrefix("event") }) else {
                throw ValidationError(
                    "PAD \"\(pad)\" is neither a hidraw node (/dev/hidrawN) nor an event node (/dev/input/eventN); "
                        + "`padbridge list` shows the pads, their indexes, IDs and nodes.")
            }
        }
        let (feedback, _) = try plan()
        if fromStandardInput && !feedback.isEmpty {
            throw ValidationError("--stdin takes its feedback from standard input only: drop the other feedback options.")
        }
        if !fromStandardInput && feedback.isEmpty {
            throw ValidationError(
                "Nothing to do: give --rumble, --lightbar, --player, --player-leds, --mic-led, --trigger or --stdin.")
        }
    }

    /// The node feedback goes to: PAD itself when it is a path; for an index or ID, the node that takes the pad's
    /// feedback (`Controller.feedbackNodePath`: a PlayStation pad's hidraw node, else its force-feedback event node).
    func feedbackNode(logger: Logger) throws -> (path: String, controller: Controller?) {
        if pad.hasPrefix("/") { return (Self.resolve(pad), nil) }
        let controller = try MonitorCommand.choose(pad, from: try ControllerCatalog.discover(logger: logger, sdlSource: .padbridgeHelper))
        guard let path = controller.feedbackNodePath else {
            throw ValidationError(
                "\(controller.name) [\(controller.fingerprint)] takes no feedback padbridge can give: it has no force "
                    + "feedback (rumble) and no hidraw node of a DualSense or DualShock 4.")
        }
        logger.info("\(controller.name) [\(controller.fingerprint)]: feedback through \(path)")
        return (path, controller)
    }

    /// One-shot options asking for outputs the pad does not have are refused before anything is written, naming the
    /// pad and what it has (a lightbar on an Xbox pad, say); nothing is sent then, not even the parts it has.
    /// The message ends with what the sink says it drives, which tells a part the pad lacks from one padbridge may
    /// not write (xpad's LED ring without a udev rule for it).
    func refuseWhatThePadLacks(
        _ feedback: Feedback, opened: OpenedFeedbackSink, path: String, controller: Controller?, logger: Logger
    ) throws {
        let supported = opened.sink.supported
        let missing = FeedbackParts(of: feedback).subtracting(supported)
        guard !missing.isEmpty else { return }
        let named = controller ?? Self.controller(withNode: path, logger: logger)
        let pad = named.map { "\($0.name) [\($0.fingerprint)] (\(path))" } ?? path
        let has = FeedbackDrainRunner.names(supported)
        throw ValidationError(
            "\(pad) has no \(FeedbackDrainRunner.names(missing).joined(separator: ", ")): padbridge can give it "
                + "\(has.isEmpty ? "nothing" : has.joined(separator: ", ")) only (\(opened.summary)). Drop "
                + "\(Self.options(for: missing).joined(separator: ", ")).")
    }

    /// The controller `padbridge list` shows with `path` among its nodes; nil when discovery fails or none has it.
    static func controller(withNode path: String, logger: Logger) -> Controller? {
        let controllers = try? ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads, sdlSource: .padbridgeHelper)
        return controllers?.first { $0.nodes.allPaths.map(resolve).contains(path) }
    }

    static func options(for parts: FeedbackParts) -> [String] {
        let table: [(FeedbackParts, String)] = [
            (.rumble, "--rumble"), (.lightbar, "--lightbar"), (.playerLeds, "--player/--player-leds"),
            (.micLed, "--mic-led"), ([.leftTrigger, .rightTrigger], "--trigger"),
        ]
        return table.filter { !parts.intersection($0.0).isEmpty }.map(\.1)
    }

    static func resolve(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.feedback")
        signal(SIGPIPE, SIG_IGN)
        let loop = try DeviceEventLoop()
        var onSignal: (() -> Void)?
        // SIGHUP (the terminal closed) ends it as SIGTERM does: rumble never outlives the command.
        try loop.watchSignals([SIGINT, SIGTERM, SIGHUP]) { signal in
            logger.info("received signal \(signal)")
            if let onSignal { onSignal() } else { loop.stop() }
        }

        let (path, controller) = try feedbackNode(logger: logger)
        let opened = try PhysicalFeedbackSinks.open(path: path)
        if !fromStandardInput {
            do {
                try refuseWhatThePadLacks(
                    try plan().feedback, opened: opened, path: path, controller: controller, logger: logger)
            } catch {
                opened.sink.close()
                throw error
            }
        }
        logger.info("\(path): \(opened.summary); initial state \(opened.initialState.events)")
        var failure: DeviceAccessError?
        var padWentAway = false
        // One-shot: a write the pad refused is reported (exit status 1); --stdin runs for a session and writes again.
        let runner = try FeedbackDrainRunner(
            sink: opened.sink, restoring: opened.initialState, loop: loop, logger: logger,
            onWriteError: fromStandardInput ? .retry : .end
        ) { error in
            failure = error
            padWentAway = error == nil
            loop.stop()
        }

        if fromStandardInput {
            var lineNumber = 0
            var closing = false
            let finish = {
                if !closing {
                    closing = true
                    runner.close()
                }
                loop.stop()
            }
            onSignal = finish
            try loop.watchStandardInputLines(
                { line in
                    lineNumber += 1
                    if closing || line.allSatisfy(\.isWhitespace) { return }
                    do throws(JSONLineError) {
                        runner.submit(Feedback(try FeedbackLines.event(from: line)))
                    } catch {
                        StatusOutput.say(.lineIgnored, "line \(lineNumber): \(error.message); line ignored", ["line": EventValue(lineNumber)])
                    }
                },
                onOverlongLine: {
                    lineNumber += 1
                    StatusOutput.say(
                        .lineIgnored,
                        "line \(lineNumber): longer than \(DeviceEventLoop.maximumLineBytes) bytes (no newline?); line ignored",
                        ["line": EventValue(lineNumber)])
                },
                onEndOfFile: {
                    logger.debug("end of input after \(lineNumber) lines")
                    finish()
                })
            try loop.run()
            runner.close()
        } else {
            let (feedback, milliseconds) = try plan()
            var finishing = false
            runner.onIdle = { if finishing { loop.stop() } }
            let rumbleUntilSignal = milliseconds == nil && feedback.rumble.map { !$0.isOff } == true
            finishing = !rumbleUntilSignal
            var signals = 0
            onSignal = {
                signals += 1
                if signals > 1 { loop.stop(); return }
                finishing = true
                runner.submit(Feedback(rumble: .off))
                if runner.isIdle { loop.stop() }
            }
            runner.submit(feedback, rumbleDurationMilliseconds: milliseconds)
            if rumbleUntilSignal { logger.info("rumbling until SIGINT or SIGTERM") }
            try loop.run()
            // Rumble never outlives the command, however it ended (a second signal skips the paced stop).
            runner.stopRumbleNow()
            opened.sink.close()
        }
        if let failure { throw failure }
        if padWentAway && !fromStandardInput { throw ExitCode(1) }
    }
}
