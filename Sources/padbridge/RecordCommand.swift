import PadJSONLines
import ArgumentParser
import Glibc
import Logging
import PadCore
import PadLinux
import PadSessions

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record everything a pad does to a file that `padbridge replay` brings back.",
        discussion: """
            Writes the pad's identity, each event node's capabilities and ranges, the hidraw node's report \
            descriptor and feature reports, then every evdev event and hidraw input report, timestamped on one \
            clock (microseconds), in padbridge's recording format (docs/diagnostics.md, "Recording a pad"): plain text, one \
            line per fact, versioned; it compresses, diffs and greps.
            PAD as for `monitor`. The pad is not grabbed: games keep using it while it is recorded.
            Ends on SIGINT or SIGTERM, after --duration, or when the pad is unplugged.
            --evemu writes evemu's format instead (evemu-device, evemu-play and evemu-describe read it), one file \
            per event node: the pad node to FILE, the others to FILE with their role before the extension \
            (pad.evemu, pad.motion.evemu); hidraw reports have no place there. --from converts a recording made \
            earlier. The feedback games send a pad is recorded by the bridge that receives it: \
            `padbridge remap --record FILE`.
            """
    )

    @Argument(help: "The pad: index, ID or ID prefix, or device path (see `padbridge list`).")
    var pad: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("The file to write (default: standard output).", valueName: "file"))
    var output: String?

    @Option(name: .long, help: "Stop after this many seconds.")
    var duration: Double?

    @Flag(name: .long, help: "Write evemu's format: one file per event node (the pad node to -o FILE, the others beside it).")
    var evemu = false

    @Option(name: .long, help: ArgumentHelp("With --evemu: convert this padbridge recording instead of recording a pad.", valueName: "recording"))
    var from: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if let duration, !TimeOption.isSeconds(duration, positive: true) {
            throw ValidationError("--duration must be a number of seconds above 0 and up to \(TimeOption.maximumSecondsText).")
        }
        if from != nil {
            if !evemu { throw ValidationError("--from converts a recording to evemu's format: add --evemu.") }
            if pad != nil || duration != nil { throw ValidationError("--from converts a file: give no PAD or --duration with it.") }
        }
    }

    /// Where each event node's evemu file goes: standard output for a pad with one node and no -o.
    static func evemuDestinations(output: String?, roles: [String]) throws -> [RecordingFile] {
        guard let output else {
            guard roles.count <= 1 else {
                throw ValidationError(
                    "--evemu writes one file per event node and this pad has \(roles.count) "
                        + "(\(roles.joined(separator: ", "))): name the first with -o FILE, the others go beside it.")
            }
            return roles.map { _ in .standardOutput() }
        }
        return try EvemuFormat.fileNames(base: output, roles: roles).map(RecordingFile.init(path:))
    }

    /// The pad's hidraw node as the recording declares it, read now (before anything runs on the loop); nil when
    /// the pad has none, or when it cannot be read (a generic pad whose hidraw node is not open to the user, as the
    /// Xbox One pad over Bluetooth, the Switch Pro or 8BitDo pads are): then the event nodes are recorded alone,
    /// which is said once, with what it means.
    static func hidrawDeclaration(of controller: Controller, for name: String, logger: Logger) -> HidrawDeclaration? {
        guard let path = controller.nodes.hidraw else { return nil }
        do {
            return try HidrawDeclaration.read(path: path, logger: logger)
        } catch {
            StatusOutput.say(
                .hidrawNotRecorded,
                "\(name) holds the event nodes of \(controller.name) only, not its hidraw node (\(error)); "
                    + "a replay brings the pad back through /dev/uinput, without its raw HID reports")
            return nil
        }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.record")
        signal(SIGPIPE, SIG_IGN)
        if let from { return try convert(from) }
        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }
        let controller = try MonitorCommand.choose(
            pad, from: try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads, sdlSource: .padbridgeHelper))

        // Written under temporary names until recording has begun: a pad that cannot be opened leaves an earlier
        // recording of the same name as it was.
        let destinations: [RecordingFile] =
            evemu
            ? try Self.evemuDestinations(output: output, roles: controller.nodes.evdev.map(\.role.rawValue))
            : [try output.map(RecordingFile.init(path:)) ?? .standardOutput()]
        defer { destinations.forEach { $0.close() } }
        let recordingOutput: any PadRecordingOutput =
            evemu
            ? EvemuRecordingOutput(
                writers: Dictionary(uniqueKeysWithValues: destinations.enumerated().map { ($0, $1.write) }))
            : PadRecordingTextOutput(write: destinations[0].write)
        var writeFailure: StatusEvent?
        for destination in destinations {
            destination.onWriteFailed = { message in
                if writeFailure == nil { writeFailure = message }
                loop.stop()
            }
        }

        let identity = RecordedPadIdentity(controller)
        var unplugged = false
        let recorder = try PadRecorder(
            identity: identity, evdevNodes: controller.nodes.evdev.map { .init(path: $0.path, role: $0.role.rawValue) },
            hidraw: evemu ? nil : Self.hidrawDeclaration(of: controller, for: destinations[0].name, logger: logger),
            loop: loop, logger: logger, output: recordingOutput,
            onUnplugged: {
                unplugged = true
                loop.stop()
            })
        defer { recorder.close() }
        for destination in destinations { try destination.commit() }
        var deadline: LoopDeadline?
        if let duration {
            deadline = loop.deadline(afterMilliseconds: UInt64(duration * 1000)) { loop.stop() }
        }
        let started = MonotonicInstant.now()
        StatusOutput.say(
            .recording,
            "recording \(controller.name) [\(controller.fingerprint)] to "
                + "\(destinations.map(\.name).joined(separator: ", ")) "
                + "(\(controller.nodes.allPaths.joined(separator: ", "))); SIGINT or SIGTERM ends",
            [
                "pad": .string(controller.fingerprint.rawValue), "name": .string(controller.name),
                "files": EventValue(strings: destinations.map(\.name)), "nodes": EventValue(strings: controller.nodes.allPaths),
            ])
        try loop.run()
        deadline?.cancel()
        if let writeFailure { StatusOutput.say(writeFailure) } else { recorder.finish() }
        recorder.close()
        let seconds = Double(MonotonicInstant.now().nanoseconds - started.nanoseconds) / 1e9
        StatusOutput.say(
            .recorded,
            "recorded \(recorder.entryCount) entries in \(NumberText.fixed(seconds, places: 1)) s"
                + (unplugged ? " (the pad was unplugged)" : ""),
            ["entries": EventValue(recorder.entryCount), "unplugged": .bool(unplugged)])
    }

    /// `--from FILE --evemu`: each event node of a recording as an evemu file.
    private func convert(_ path: String) throws {
        let recording = try ReplayCommand.readRecording(path)
        let nodes = recording.evdevNodes.sorted { $0.index < $1.index }
        guard !nodes.isEmpty else {
            throw CommandFailure("\(path) has no event node: nothing for evemu's format")
        }
        let roles = nodes.map { $0.side == .physical ? $0.role : "\($0.side.rawValue)-\($0.role)" }
        let destinations = try Self.evemuDestinations(output: output, roles: roles)
        defer { destinations.forEach { $0.close() } }
        for (position, node) in nodes.enumerated() {
            destinations[position].write(EvemuFormat.text(of: recording, node: node.index) ?? "")
            try destinations[position].commit()
            let events = recording.entries.count { if case .evdev(_, node.index, _, _, _) = $0 { true } else { false } }
            StatusOutput.say(
                .wrote, "wrote \(destinations[position].name) (\(roles[position]), \(events) events)",
                ["file": .string(destinations[position].name), "role": .string(roles[position]), "events": EventValue(events)])
        }
    }
}

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Bring a recorded pad back as a virtual one and play what it did.",
        discussion: """
            A recording with a hidraw node comes back through /dev/uhid with its own report descriptor, so the \
            kernel's driver binds it as it bound the real pad (hid-playstation for a DualSense); otherwise each \
            event node comes back through /dev/uinput with its recorded capabilities. Input plays with its \
            recorded timing (--speed 2: twice as fast); it ends when all is played, or with --hold keeps the pad \
            in its last state until SIGINT or SIGTERM. Once the pad exists, "padbridge: ready {...}" goes to \
            standard error. On standard output, the feedback the recording holds ("recorded ...") and what games \
            send the replayed pad now ("now ...": output reports through uhid, force feedback through uinput), so a \
            difference shows.
            """
    )

    @Argument(help: "A recording made by `padbridge record`.")
    var file: String

    @Option(name: .long, help: "Playback speed: 2 plays twice as fast, 0.5 half as fast.")
    var speed: Double = 1

    @Option(name: .long, help: "Seconds between the pad being ready and playing (time for a game to find it).")
    var delay: Double = 0

    @Flag(name: .long, help: "Keep the pad, in its last recorded state, after playing, until SIGINT or SIGTERM.")
    var hold = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if !(speed >= TimeOption.slowestSpeed && speed <= TimeOption.fastestSpeed) {
            throw ValidationError(
                "--speed must be a number from \(TimeOption.slowestSpeed) to \(Int(TimeOption.fastestSpeed)) (1 is the recorded pace).")
        }
        if !TimeOption.isSeconds(delay, positive: false) {
            throw ValidationError("--delay must be a number of seconds from 0 up to \(TimeOption.maximumSecondsText).")
        }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.replay")
        signal(SIGPIPE, SIG_IGN)
        let recording = try Self.readRecording(file)
        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }
        // Feedback lines are a by-product: when their reader goes away the replay goes on.
        var printing = true
        func print(_ line: String) {
            guard printing, !LineOutput.standardOutput.write(line) else { return }
            printing = false
            StatusOutput.say(LineOutput.readerWentAway("feedback is no longer printed"))
        }
        let kind: VirtualPadKind = recording.identity.kind == .dualSense ? .dualSense : .xbox360
        var lastStateShown: LoopDeadline?
        let replayer = try PadReplayer(
            recording: recording, speed: speed, delayMilliseconds: UInt64(delay * 1000), loop: loop, logger: logger
        ) { happening in
            switch happening {
            case .ready(let nodes):
                StatusOutput.say(ReadyLine.event(kind: kind, nodes: nodes, mac: nil, source: recording.identity.id))
            case .recordedFeedback(let line):
                print("recorded \(line)")
            case .outputReport(let report):
                print("now \(ReplayCommand.describe(report))")
            case .feedback(let event):
                print("now \(FeedbackLines.line(for: event))")
            case .finished:
                StatusOutput.say(
                    .replayFinished,
                    "replay finished (\(recording.entries.count) entries, "
                        + "\(NumberText.fixed(Double(recording.durationMicroseconds) / 1e6 / speed, places: 1)) s)"
                        + (hold ? "; holding the pad until SIGINT or SIGTERM" : ""),
                    ["entries": EventValue(recording.entries.count), "holding": .bool(hold)])
                // The last state stays for the grace a bridge gives its release: a reader that has not read the
                // last events yet would lose them with the node.
                if !hold {
                    lastStateShown = loop.deadline(afterMilliseconds: ReleaseThenStop.defaultGraceMilliseconds) {
                        loop.stop()
                    }
                    if lastStateShown == nil { loop.stop() }
                }
            }
        }
        defer { replayer.close() }
        StatusOutput.say(
            .replaying,
            "replaying \(recording.identity.name) [\(recording.identity.id)] through "
                + (replayer.route == .uhid ? "/dev/uhid" : "/dev/uinput") + "; SIGINT or SIGTERM ends",
            ["pad": .string(recording.identity.id), "name": .string(recording.identity.name)])
        try loop.run()
    }

    /// The recording in `path`, or an error naming the file and the line.
    static func readRecording(_ path: String) throws -> PadRecording {
        let text: String
        do {
            text = try TextFile.contents(atPath: path)
        } catch {
            throw CommandFailure("\(error)")
        }
        do {
            return try PadRecordingFormat.recording(from: text)
        } catch {
            throw CommandFailure("\(path): \(error) (a recording from `padbridge record`; docs/diagnostics.md, \"Recording a pad\")")
        }
    }

    /// An output report as feedback lines when padbridge reads its kind (DualSense, DualShock 4), else as hex.
    static func describe(_ report: [UInt8]) -> String {
        let decoded: Feedback? =
            (try? report.withUnsafeBytes { (bytes) throws(ReportDecodingError) in try DualSenseOutputReport.decode(bytes) })
            ?? (try? report.withUnsafeBytes { (bytes) throws(ReportDecodingError) in try DualShock4OutputReport.decode(bytes) })
        if let decoded, !decoded.events.isEmpty {
            return decoded.events.map(FeedbackLines.line(for:)).joined(separator: " ")
        }
        return "output \(HexBytes.encode(report))"
    }
}

/// The bounds of the time options (`--duration`, `--delay`, `--speed`): values outside them would not fit the
/// timers' nanoseconds (infinite, 1e20 s, a speed that stretches a recording past 2^64 ns) and are refused by name.
enum TimeOption {
    /// A year.
    static let maximumSeconds: Double = 365 * 24 * 3600
    static let maximumSecondsText = "31536000 (a year)"
    static let slowestSpeed = 0.01
    static let fastestSpeed: Double = 1000

    /// Whether `seconds` is a finite number of seconds up to a year (above 0 when `positive`, else 0 or more).
    static func isSeconds(_ seconds: Double, positive: Bool) -> Bool {
        (positive ? seconds > 0 : seconds >= 0) && seconds <= maximumSeconds
    }
}
