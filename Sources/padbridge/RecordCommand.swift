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
            clock (microseconds), in padbridge's recording format (README, "Recording a pad"): plain text, one \
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
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds.") }
        if from != nil {
            if !evemu { throw ValidationError("--from converts a recording to evemu's format: add --evemu.") }
            if pad != nil || duration != nil { throw ValidationError("--from converts a file: give no PAD or --duration with it.") }
        }
    }

    /// Opens `path` for writing (created 0644, emptied), or says why not.
    static func openForWriting(_ path: String) throws -> LineOutput {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return LineOutput(descriptor: descriptor)
    }

    /// A file written to, or standard output, and its name for messages.
    typealias Destination = (name: String, sink: LineOutput)

    /// Where each event node's evemu file goes: standard output for a pad with one node and no -o.
    static func evemuDestinations(output: String?, roles: [String]) throws -> [Destination] {
        guard let output else {
            guard roles.count <= 1 else {
                throw ValidationError(
                    "--evemu writes one file per event node and this pad has \(roles.count) "
                        + "(\(roles.joined(separator: ", "))): name the first with -o FILE, the others go beside it.")
            }
            return roles.map { _ in ("standard output", .standardOutput) }
        }
        return try EvemuFormat.fileNames(base: output, roles: roles).map { ($0, try openForWriting($0)) }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.record")
        signal(SIGPIPE, SIG_IGN)
        if let from { return try convert(from) }
        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }
        let controller = try MonitorCommand.choose(
            pad, from: try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads, sdlSource: .padbridgeHelper))

        let destinations: [Destination]
        let recordingOutput: any PadRecordingOutput
        if evemu {
            destinations = try Self.evemuDestinations(output: output, roles: controller.nodes.evdev.map(\.role.rawValue))
            recordingOutput = EvemuRecordingOutput(
                writers: Dictionary(uniqueKeysWithValues: destinations.enumerated().map { index, destination in
                    (index, { destination.sink.writeRaw($0) })
                }))
        } else {
            let sink = try output.map(Self.openForWriting) ?? .standardOutput
            destinations = [(output ?? "standard output", sink)]
            recordingOutput = PadRecordingTextOutput(write: { sink.writeRaw($0) })
        }
        defer { if output != nil { destinations.forEach { close($0.sink.descriptor) } } }

        let identity = RecordedPadIdentity(controller)
        var unplugged = false
        let recorder = try PadRecorder(
            identity: identity, evdevNodes: controller.nodes.evdev.map { .init(path: $0.path, role: $0.role.rawValue) },
            hidrawNode: controller.nodes.hidraw, loop: loop, logger: logger,
            output: recordingOutput,
            onUnplugged: {
                unplugged = true
                loop.stop()
            })
        defer { recorder.close() }
        var deadline: LoopDeadline?
        if let duration {
            deadline = try loop.deadline(afterMilliseconds: UInt64(duration * 1000)) { loop.stop() }
        }
        let started = MonotonicInstant.now()
        LineOutput.standardError.write(
            "padbridge: recording \(controller.name) [\(controller.fingerprint)] to "
                + "\(destinations.map(\.name).joined(separator: ", ")) "
                + "(\(controller.nodes.allPaths.joined(separator: ", "))); SIGINT or SIGTERM ends")
        try loop.run()
        deadline?.cancel()
        recorder.finish()
        let seconds = Double(MonotonicInstant.now().nanoseconds - started.nanoseconds) / 1e9
        LineOutput.standardError.write(
            "padbridge: recorded \(recorder.entryCount) entries in \(NumberText.fixed(seconds, places: 1)) s"
                + (unplugged ? " (the pad was unplugged)" : ""))
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
        defer { if output != nil { destinations.forEach { close($0.sink.descriptor) } } }
        for (position, node) in nodes.enumerated() {
            destinations[position].sink.writeRaw(EvemuFormat.text(of: recording, node: node.index) ?? "")
            let events = recording.entries.count { if case .evdev(_, node.index, _, _, _) = $0 { true } else { false } }
            LineOutput.standardError.write(
                "padbridge: wrote \(destinations[position].name) (\(roles[position]), \(events) events)")
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
        if !(speed > 0) { throw ValidationError("--speed must be a positive number (1 is the recorded pace).") }
        if !(delay >= 0) { throw ValidationError("--delay must be zero or more seconds.") }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.replay")
        signal(SIGPIPE, SIG_IGN)
        let recording = try Self.readRecording(file)
        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }
        let output = LineOutput.standardOutput
        let kind: VirtualPadKind = recording.identity.kind == .dualSense ? .dualSense : .xbox360
        let replayer = try PadReplayer(
            recording: recording, speed: speed, delayMilliseconds: UInt64(delay * 1000), loop: loop, logger: logger
        ) { happening in
            switch happening {
            case .ready(let nodes):
                LineOutput.standardError.write(
                    "padbridge: ready " + ReadyLine.json(kind: kind, nodes: nodes, mac: nil, source: recording.identity.id))
            case .recordedFeedback(let line):
                output.write("recorded \(line)")
            case .outputReport(let report):
                output.write("now \(ReplayCommand.describe(report))")
            case .feedback(let event):
                output.write("now \(FeedbackLines.line(for: event))")
            case .finished:
                LineOutput.standardError.write(
                    "padbridge: replay finished (\(recording.entries.count) entries, "
                        + "\(NumberText.fixed(Double(recording.durationMicroseconds) / 1e6 / speed, places: 1)) s)"
                        + (hold ? "; holding the pad until SIGINT or SIGTERM" : ""))
                if !hold { loop.stop() }
            }
        }
        defer { replayer.close() }
        LineOutput.standardError.write(
            "padbridge: replaying \(recording.identity.name) [\(recording.identity.id)] through "
                + (replayer.route == .uhid ? "/dev/uhid" : "/dev/uinput") + "; SIGINT or SIGTERM ends")
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
            throw CommandFailure("\(path): \(error) (a recording from `padbridge record`; README, \"Recording a pad\")")
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
