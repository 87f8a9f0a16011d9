import ArgumentParser
import Glibc
import Logging
import PadCore
import PadJSONLines
import PadLinux

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

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if raw && json { throw ValidationError("--raw and --json are two different outputs; choose one.") }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.monitor")
        signal(SIGPIPE, SIG_IGN)
        let controllers = try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads)
        let controller = try Self.choose(pad, from: controllers)
        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }

        let session = try MonitorSession(
            controller: controller, output: raw ? .raw : json ? .json : .readable, loop: loop, logger: logger)
        if grab { try session.grabAll() }
        var statisticsTimer: LoopDeadline?
        if stats {
            statisticsTimer = try loop.repeating(everyMilliseconds: 1000) { [session] in
                session.printStatistics(overMicroseconds: 1_000_000)
            }
        }
        defer { statisticsTimer?.cancel() }
        LineOutput.standardError.write(
            "padbridge: monitoring \(controller.name) [\(controller.fingerprint)] on "
                + controller.nodes.evdev.map(\.path).joined(separator: ", ")
                + (grab ? " (grabbed)" : "") + "; SIGINT or SIGTERM ends")
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
            table.forEach(LineOutput.standardError.write)
            LineOutput.standardError.write("Which pad? Enter its # (0-\(controllers.count - 1)) or ID: ")
            guard let answer = readLine(), !answer.isEmpty else { throw ValidationError("No pad chosen.") }
            do {
                return try PadSelector(answer).resolve(in: controllers)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }
}

/// One monitored pad: its event nodes watched on the loop, their events assembled into snapshots, and the
/// changes printed.
private final class MonitorSessionState {
    let controller: Controller
    let output: MonitorOutput
    var assembler: EvdevSnapshotAssembler
    var printed: PadSnapshot
    var statistics = ReportIntervalStatistics()
    var eventsInFrame = 0
    var watched: [WatchedEvdevDevice] = []
    let multipleNodes: Bool

    /// The assembler is replaced once the nodes' capabilities are known, before any event is handled.
    init(controller: Controller, output: MonitorOutput) {
        self.controller = controller
        self.output = output
        assembler = EvdevSnapshotAssembler(layout: .linuxGamepadConvention, absoluteInfo: [:])
        printed = assembler.snapshot
        multipleNodes = controller.nodes.evdev.count > 1
    }
}

enum MonitorOutput {
    case readable, json, raw
}

struct MonitorSession {
    private let state: MonitorSessionState
    private let loop: DeviceEventLoop

    init(controller: Controller, output: MonitorOutput, loop: DeviceEventLoop, logger: Logger) throws {
        self.loop = loop
        let state = MonitorSessionState(controller: controller, output: output)
        self.state = state
        // Watch every node (events are handled only once the loop runs), then read their capabilities: the layout
        // and the scaling need them, and their current state seeds the first snapshot.
        for node in controller.nodes.evdev {
            state.watched.append(
                try loop.watch(try EvdevDevice(path: node.path)) { result in
                    switch result {
                    case let .events(readings): MonitorSession.handle(readings, from: node, state: state)
                    case .unplugged:
                        LineOutput.standardError.write(
                            "padbridge: \(state.controller.name) [\(state.controller.fingerprint)] was unplugged "
                                + "(\(node.path) is gone); monitor ends")
                        loop.stop()
                    }
                })
        }
        var absoluteInfo: [EvdevNodeRole: [UInt16: EvdevAbsoluteInfo]] = [:]
        var pressed: [EvdevNodeRole: [UInt16]] = [:]
        var padKeys: [UInt16] = [], padAbsolutes: [UInt16] = []
        var headers: [String] = []
        for (node, watched) in zip(controller.nodes.evdev, state.watched) {
            guard
                let (info, held) = try watched.withDevice({ device in
                    let info = device.info()
                    let held = (info.codes[EvdevCode.evKey] ?? []).filter {
                        (device.currentValue(type: EvdevCode.evKey, code: $0) ?? 0) != 0
                    }
                    return (info, held)
                })
            else { continue }
            absoluteInfo[node.role] = info.absoluteInfo
            pressed[node.role] = held
            if node.role == .pad {
                padKeys = info.codes[EvdevCode.evKey] ?? []
                padAbsolutes = info.codes[EvdevCode.evAbs] ?? []
            }
            if output == .raw {
                if state.multipleNodes { headers.append("# \(node.path) (\(node.role.rawValue) node)") }
                headers += EvtestFormat.headerLines(info)
            }
        }
        // Without absinfo: SDL 2.26 (Debian 12's) numbers every hat as a hat, as `list` does from udev's records.
        let layout = SDLControllerJoin.layout(for: controller, padKeyCodes: padKeys, padAbsoluteCodes: padAbsolutes)
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: absoluteInfo)
        for node in controller.nodes.evdev { assembler.seed(node.role, pressedKeys: pressed[node.role] ?? []) }
        state.assembler = assembler
        if output == .raw {
            headers.append("Testing ... (interrupt to exit)")
            LineOutput.standardOutput.write(headers.joined(separator: "\n"))
        } else {
            // What is already held when monitor starts is part of the pad's state: print it first, as one frame
            // (a forwarded pad must show it too).
            var lines: [String] = []
            SnapshotDiff.forEachEvent(from: .neutral, to: assembler.snapshot) { change in
                lines.append(
                    output == .json ? PadEventLines.line(for: change) : "at start  " + MonitorText.describe(change))
            }
            if !lines.isEmpty { LineOutput.standardOutput.write(lines.joined(separator: "\n")) }
        }
        state.printed = assembler.snapshot
    }

    func grabAll() throws {
        for device in state.watched { try device.grab() }
    }

    private static func handle(_ readings: [EvdevReading], from node: EvdevNode, state: MonitorSessionState) {
        var lines: [String] = []
        for reading in readings {
            let event = reading.event
            if state.output == .raw {
                let line = EvtestFormat.eventLine(event)
                lines.append(state.multipleNodes ? "[\(node.path)] " + line : line)
            }
            if node.role == .pad && event.type != EvdevCode.evSyn { state.eventsInFrame += 1 }
            switch state.assembler.apply(event, from: node.role) {
            case .pending, .dropped:
                continue
            case .frameCompleted:
                if node.role == .pad {
                    state.statistics.recordFrame(atMicroseconds: event.timestampMicroseconds, events: state.eventsInFrame)
                    state.eventsInFrame = 0
                }
                guard state.output != .raw else { continue }
                let now = state.assembler.snapshot
                SnapshotDiff.forEachEvent(from: state.printed, to: now) { change in
                    lines.append(
                        state.output == .json
                            ? PadEventLines.line(for: change)
                            : MonitorText.line(for: change, seconds: event.seconds, microseconds: event.microseconds))
                }
                state.printed = now
            }
        }
        // One write per batch: a frame's lines reach a reader (`padbridge virtual`) in one read, as one frame.
        if !lines.isEmpty { LineOutput.standardOutput.write(lines.joined(separator: "\n")) }
    }

    func printStatistics(overMicroseconds window: Int64) {
        defer { state.statistics.startWindow() }
        guard let summary = state.statistics.summary(overMicroseconds: window) else { return }
        func figure(_ value: Double) -> String { MonitorText.decimal(value, places: 2) }
        LineOutput.standardError.write(
            "padbridge: \(figure(summary.framesPerSecond)) reports/s, \(figure(summary.eventsPerSecond)) events/s, "
                + "interval min \(figure(summary.minimumIntervalMilliseconds)) ms avg "
                + "\(figure(summary.averageIntervalMilliseconds)) ms max \(figure(summary.maximumIntervalMilliseconds)) ms")
    }

    func finish() {
        for device in state.watched { device.close() }
        state.watched = []
    }
}
