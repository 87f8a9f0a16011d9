import ArgumentParser
import Glibc
import Logging
import PadCore
import PadJSONLines
import PadLinux
import PadSessions

struct MonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Print what a pad does: one line per change, JSON lines, or the raw kernel events as evtest shows them.",
        discussion: """
            PAD is an index or ID (or a unique start of one) as `padbridge list` prints them, or one of the pad's \
            device paths (/dev/input/eventN, /dev/hidrawN). Without PAD: the only pad, or, on a terminal, a choice.
            Every event node of the pad is read (a DualSense: its pad, motion-sensor and touchpad nodes), as one pad.
            --json prints the lines `padbridge virtual` reads, one frame per write, so
              padbridge monitor --json PAD | padbridge virtual --type dualsense
            forwards a pad. --stats adds a line per second on standard error: reports per second and the interval \
            between them (min/avg/max, from the kernel's timestamps), i.e. the pad's polling rate.
            --view draws the whole pad full-screen instead; with --profile FILE (a remap profile) each stick box \
            shows the profile's deadzone as ':' cells, and a line shows what the profile makes of both sticks; a \
            profile that drives a keyboard and mouse shows the keys and buttons it holds and how far it moved the \
            pointer and the wheel (nothing is pressed for real).
            Ends on SIGINT or SIGTERM, or when the pad is unplugged (exit status 0 either way).
            """
    )

    @Argument(help: "The pad: index, ID or ID prefix, or device path (see `padbridge list`).")
    var pad: String?

    @Flag(name: .long, help: "Print the kernel's events in evtest's format, for every node of the pad.")
    var raw = false

    @Flag(name: .long, help: "Print JSON lines (the input format of `padbridge virtual`).")
    var json = false

    @Flag(name: .long, help: "Grab the pad's event nodes (EVIOCGRAB): other programs see nothing while monitor runs.")
    var grab = false

    @Flag(name: .long, help: "Print the report rate and interval (min/avg/max) every second on standard error.")
    var stats = false

    @Flag(name: .long, help: "Show the whole pad full-screen, live (sticks, triggers, buttons, touchpad, motion, battery, report rate); q quits.")
    var view = false

    @Option(
        name: .long, help: ArgumentHelp("With --view: show this remap profile's stick deadzones and what it makes of each stick.", valueName: "file"),
        completion: .file(extensions: ["toml"]))
    var profile: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if raw && json { throw ValidationError("--raw and --json are two different outputs; choose one.") }
        if profile != nil && !view { throw ValidationError("--profile shows a profile's deadzones in the picture: add --view.") }
        if view && (raw || json || stats) {
            throw ValidationError("--view is a picture of its own; leave out --raw, --json and --stats.")
        }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.monitor")
        signal(SIGPIPE, SIG_IGN)
        // Signals are blocked first, before discovery (which may start SDL's threads): see `watchSignals`.
        // A profile is checked before any device is opened, as remap checks it.
        let remapProfile = try profile.map { path in try RemapCommand.loadProfile(path, for: .everything) }
        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }
        let controllers = try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads, sdlSource: .padbridgeHelper)
        let controller = try Self.choose(pad, from: controllers)
        if view {
            return try MonitorView.run(controller: controller, grab: grab, profile: remapProfile, loop: loop)
        }

        let session = try MonitorSession(
            controller: controller, output: raw ? .raw : json ? .json : .readable, grab: grab, loop: loop)
        // A pipeline whose reader died (`monitor --json --grab 0 | padbridge virtual ...`): end, giving the grab back.
        session.onOutputClosed = {
            StatusOutput.say(LineOutput.readerWentAway("monitor ends"))
            loop.stop()
        }
        var statisticsTimer: LoopDeadline?
        if stats {
            statisticsTimer = loop.repeating(everyMilliseconds: 1000) { [session] in
                session.printStatistics(overMicroseconds: 1_000_000)
            }
        }
        defer { statisticsTimer?.cancel() }
        StatusOutput.say(
            .monitoring,
            "monitoring \(controller.name) [\(controller.fingerprint)] on "
                + controller.nodes.evdev.map(\.path).joined(separator: ", ")
                + (grab ? " (grabbed)" : "") + "; SIGINT or SIGTERM ends",
            [
                "pad": .string(controller.fingerprint.rawValue), "name": .string(controller.name),
                "nodes": EventValue(strings: controller.nodes.evdev.map(\.path)), "grabbed": .bool(grab),
            ])
        try loop.run()
        session.finish()
    }

    /// The pad PAD names; without PAD the only one, or (on a terminal) the one the user picks.
    static func choose(_ argument: String?, from controllers: [Controller]) throws -> Controller {
        if let argument {
            do {
                return try PadSelector(argument).resolve(in: controllers)
            } catch {
                throw ValidationError(error.description)
            }
        }
        switch controllers.count {
        case 0: throw ValidationError(PadSelectionError.noControllers.description)
        case 1: return controllers[0]
        default:
            let table = ControllerPresentation.table(controllers)
            guard isatty(STDIN_FILENO) == 1 else {
                throw ValidationError(
                    "\(controllers.count) pads are connected; name one (index, ID or device path):\n"
                        + table.joined(separator: "\n"))
            }
            table.forEach { LineOutput.standardError.write($0) }
            LineOutput.standardError.write("Which pad? Enter its # (0-\(controllers.count - 1)) or ID: ")
            guard let answer = readLineInterruptibly(), !answer.isEmpty else { throw ValidationError("No pad chosen.") }
            do {
                return try PadSelector(answer).resolve(in: controllers)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }
}

/// Reads a line of the user's answer with SIGINT and SIGTERM unblocked on this thread: the commands block them for
/// their event loop before discovery, and Ctrl-C at a prompt must still end the command (their default action).
func readLineInterruptibly() -> String? {
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGINT)
    sigaddset(&signals, SIGTERM)
    var previous = sigset_t()
    pthread_sigmask(SIG_UNBLOCK, &signals, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return readLine()
}

enum MonitorOutput {
    case readable, json, raw
    /// `--view`: nothing printed; each new snapshot goes to `onSnapshot`.
    case view
}

/// One monitored pad: a `ControllerReader` whose frames are printed as changes (readable or JSON lines), or whose
/// raw events are printed as evtest does; and the report-rate statistics of its pad node.
final class MonitorSession {
    private let reader: ControllerReader
    private let output: MonitorOutput
    private var printed: PadSnapshot
    private var statistics = ReportIntervalStatistics()
    private var eventsInFrame = 0
    /// `.view`: called with each frame's snapshot.
    var onSnapshot: ((PadSnapshot) -> Void)?
    /// `.view`: why monitor ended, when the pad was unplugged.
    private(set) var unpluggedMessage: StatusEvent?
    /// Called once when standard output is gone (EPIPE: the reader went away).
    var onOutputClosed: (() -> Void)?
    private var outputClosed = false
    var snapshot: PadSnapshot { reader.snapshot }

    init(controller: Controller, output: MonitorOutput, grab: Bool, loop: DeviceEventLoop) throws {
        reader = try ControllerReader(controller: controller, grab: grab, loop: loop) { pad in
            ControllerLayouts.layout(for: controller, padNode: pad)
        }
        self.output = output
        printed = .neutral
        let multipleNodes = controller.nodes.evdev.count > 1

        if output == .raw {
            var headers: [String] = []
            for (node, info) in zip(controller.nodes.evdev, reader.nodeInfo) {
                if multipleNodes { headers.append("# \(node.path) (\(node.role.rawValue) node)") }
                headers += EvtestFormat.headerLines(info)
            }
            headers.append("Testing ... (interrupt to exit)")
            print(headers.joined(separator: "\n"))
            reader.onEvents = { [unowned self] node, readings in
                let lines = readings.map { reading in
                    let line = EvtestFormat.eventLine(reading.event)
                    return multipleNodes ? "[\(node.path)] " + line : line
                }
                self.print(lines.joined(separator: "\n"))
            }
        } else if output != .view {
            // What is already held when monitor starts is part of the pad's state: print it first, as one frame
            // (a forwarded pad must show it too).
            var lines: [String] = []
            SnapshotDiff.forEachEvent(from: .neutral, to: reader.snapshot) { change in
                lines.append(
                    output == .json ? PadEventLines.line(for: change) : "at start  " + MonitorText.describe(change))
            }
            if !lines.isEmpty { print(lines.joined(separator: "\n")) }
            printed = reader.snapshot
        }
        reader.onEvents = { [unowned self, previous = reader.onEvents] node, readings in
            previous?(node, readings)
            if node.role == .pad { self.count(readings) }
        }
        reader.onFrame = { [unowned self] snapshot, event in self.printChanges(to: snapshot, at: event) }
        reader.onUnplugged = { [unowned self] node in
            let said = StatusEvent(
                .padUnplugged,
                "\(controller.name) [\(controller.fingerprint)] was unplugged (\(node.path) is gone); monitor ends",
                ["pad": .string(controller.fingerprint.rawValue), "node": .string(node.path)])
            // The view owns the terminal until it ends: its caller prints the message after.
            if output == .view { self.unpluggedMessage = said } else { StatusOutput.say(said) }
            loop.stop()
        }
    }

    /// Counts the pad node's events and frames for the statistics (kernel timestamps of its SYN_REPORTs).
    private func count(_ readings: [EvdevReading]) {
        for reading in readings {
            let event = reading.event
            if event.type != EvdevCode.evSyn {
                eventsInFrame += 1
            } else if event.code == EvdevCode.synReport {
                statistics.recordFrame(atMicroseconds: event.timestampMicroseconds, events: eventsInFrame)
                eventsInFrame = 0
            }
        }
    }

    private func printChanges(to snapshot: PadSnapshot, at event: EvdevEvent) {
        if output == .view {
            onSnapshot?(snapshot)
            return
        }
        guard output != .raw else { return }
        var lines: [String] = []
        SnapshotDiff.forEachEvent(from: printed, to: snapshot) { change in
            lines.append(
                output == .json
                    ? PadEventLines.line(for: change)
                    : MonitorText.line(for: change, seconds: event.seconds, microseconds: event.microseconds))
        }
        printed = snapshot
        // One write per frame: its lines reach a reader (`padbridge virtual`) in one read, as one frame.
        if !lines.isEmpty { print(lines.joined(separator: "\n")) }
    }

    /// Writes `text` as a line to standard output; when its reader is gone, says so once (`onOutputClosed`).
    private func print(_ text: String) {
        guard !outputClosed else { return }
        if !LineOutput.standardOutput.write(text) {
            outputClosed = true
            onOutputClosed?()
        }
    }

    /// The report rate over the window since the last call, and a new window.
    func takeStatistics(overMicroseconds window: Int64) -> ReportIntervalStatistics.Summary? {
        defer { statistics.startWindow() }
        return statistics.summary(overMicroseconds: window)
    }

    func printStatistics(overMicroseconds window: Int64) {
        guard let summary = takeStatistics(overMicroseconds: window) else { return }
        func figure(_ value: Double) -> String { NumberText.fixed(value, places: 2) }
        StatusOutput.say(
            .statistics,
            "\(figure(summary.framesPerSecond)) reports/s, \(figure(summary.eventsPerSecond)) events/s, "
                + "interval min \(figure(summary.minimumIntervalMilliseconds)) ms avg "
                + "\(figure(summary.averageIntervalMilliseconds)) ms max \(figure(summary.maximumIntervalMilliseconds)) ms",
            ["reportsPerSecond": .string(figure(summary.framesPerSecond)), "eventsPerSecond": .string(figure(summary.eventsPerSecond))])
    }

    func finish() { reader.close() }
}
