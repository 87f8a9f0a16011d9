import CPadLinux
import Glibc
public import Logging
public import PadCore

/// A hidraw node as a recording declares it: its HID report descriptor and the feature reports it answered (what a
/// replay needs for the driver's probe). Read once, before recording starts: each feature report is a request to the
/// pad (over Bluetooth a round trip, seconds when unanswered), which must not stall a running loop.
public struct HidrawDeclaration: Sendable, Hashable {
    public var path: String
    public var reportDescriptor: [UInt8]
    /// Report ID → the bytes the pad returned (byte 0 = the ID).
    public var featureReports: [UInt8: [UInt8]]

    /// Opens `path` and reads its descriptor and every feature report the descriptor declares (blocking; those the
    /// pad does not answer are left out). Fails when the node cannot be opened or has no readable descriptor.
    public static func read(path: String, logger: Logger) throws(DeviceAccessError) -> HidrawDeclaration {
        let device = try HidrawDevice(path: path)
        let descriptor = try device.reportDescriptor()
        var features: [UInt8: [UInt8]] = [:]
        for (id, length) in HIDReportDescriptorSummary(descriptor).featureReportLengths.sorted(by: { $0.key < $1.key })
        where id != 0 {
            do {
                features[id] = try device.featureReport(id, length: min(length, PadRecordingFormat.maximumReportBytes))
            } catch {
                logger.debug("feature report not readable", metadata: ["report": "\(id)", "error": "\(error)"])
            }
        }
        return HidrawDeclaration(path: path, reportDescriptor: descriptor, featureReports: features)
    }
}

/// Where a recorder's header and entries go, in some format (`PadRecordingTextOutput`, `EvemuRecordingOutput`).
public protocol PadRecordingOutput: AnyObject {
    /// The pad and its nodes; called once, first.
    func begin(_ header: PadRecording)
    /// One entry; entries of one read batch come together, then `flush()`.
    func append(_ entry: RecordedEntry)
    /// The end of a batch: write what `append` gathered.
    func flush()
}

/// Records a pad: reads each node's declarations once (the hidraw node's report descriptor and feature reports are
/// read beforehand: `HidrawDeclaration`), then streams every evdev event and hidraw input report, on one clock
/// (CLOCK_MONOTONIC; evdev events carry the kernel's stamp, hidraw reports the time they were read), to a
/// `PadRecordingOutput`.
///
/// What the pad holds when recording starts (keys down, axes away from 0, touch contacts) is the recording's first
/// frame, at time 0, so a replay (or evemu-play) starts from the pad's state. When the kernel dropped events because
/// the recorder fell behind, libevdev's catch-up is recorded as it is handed on (the SYN_DROPPED event, then the
/// device's whole state, then SYN_REPORT): a release that was dropped is in the recording as that state.
///
/// The recorder reads a node itself without taking it from others (no grab), unless the node's events are
/// `.supplied` by its owner (a bridge that grabbed it: a grabbed node's events reach only the grabbing handle).
/// Feedback is recorded when its owner reports it (`recordFeedback`). Confined to the loop's thread; `close()` ends it.
public final class PadRecorder {
    /// An evdev node to record.
    public struct EvdevNode: Sendable, Hashable {
        public enum Events: Sendable, Hashable {
            /// The recorder reads the node.
            case read
            /// The node's owner hands its events to `recordEvents(_:node:)`.
            case supplied
        }

        public var path: String
        /// "pad", "motion", "touchpad", ...; empty: judged from the node's capabilities when it is opened.
        public var role: String
        public var side: RecordedSide
        public var events: Events

        public init(path: String, role: String, side: RecordedSide = .physical, events: Events = .read) {
            self.path = path
            self.role = role
            self.side = side
            self.events = events
        }
    }

    /// The recording's header, as written.
    public let header: PadRecording
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let output: any PadRecordingOutput
    private let onUnplugged: () -> Void
    private let start = MonotonicInstant.now()
    private var lastMicroseconds: Int64 = 0
    /// The nodes it reads itself, by node index.
    private var evdevReaders: [(node: Int, reader: WatchedEvdevDevice)] = []
    private var hidraw: HidrawDevice?
    private var hidrawWatch: LoopWatch?
    private let hidrawIndex: Int
    private var reportBuffer = [UInt8](repeating: 0, count: PadRecordingFormat.maximumReportBytes)
    public private(set) var entryCount = 0
    /// Closed: nothing more is recorded, supplied or not.
    public private(set) var isClosed = false

    /// Opens every node, gives `output` the header, then the pad's state now as the first frame. `hidraw`, read
    /// beforehand (its feature reports can take seconds: not on a running loop), is opened again to read its input
    /// reports. `onUnplugged` runs once when a node it reads goes away.
    public init(
        identity: RecordedPadIdentity, evdevNodes: [EvdevNode], hidraw: HidrawDeclaration?,
        loop: DeviceEventLoop, logger: Logger,
        output: any PadRecordingOutput, onUnplugged: @escaping () -> Void
    ) throws(DeviceAccessError) {
        self.loop = loop
        self.logger = logger
        self.output = output
        self.onUnplugged = onUnplugged
        // The readers are watched as they are opened; the loop calls them only once it runs, after the header.
        let relay = Relay()
        var readers: [(node: Int, reader: WatchedEvdevDevice)] = []
        var recordedEvdev: [RecordedEvdevNode] = []
        var startingState: [(node: Int, events: [EvdevEvent])] = []
        for (index, node) in evdevNodes.enumerated() {
            let device = try EvdevDevice(path: node.path)
            try device.useMonotonicClock()
            let info = device.info()
            startingState.append((index, device.state(restIncluded: false)))
            let role = node.role.isEmpty ? Self.role(codes: info.codes, properties: device.properties) : node.role
            recordedEvdev.append(
                RecordedEvdevNode(
                    index: index, side: node.side, role: role, path: node.path, name: info.name, bus: info.bus,
                    vendor: info.vendor, product: info.product, version: info.version, phys: info.phys,
                    uniq: info.uniq, properties: device.properties, codes: info.codes,
                    absoluteInfo: info.absoluteInfo))
            guard node.events == .read else {
                device.close()
                continue
            }
            readers.append((index,
                try loop.watch(device) { result in
                    switch result {
                    case .events(let readings):
                        relay.recorder?.recordEvents(readings, node: index, clock: .monotonic)
                    case .unplugged:
                        relay.recorder?.unplugged()
                    }
                }))
        }
        evdevReaders = readers
        hidrawIndex = evdevNodes.count
        var recordedHidraw: [RecordedHidrawNode] = []
        if let hidraw {
            let device = try HidrawDevice(path: hidraw.path)
            recordedHidraw.append(
                RecordedHidrawNode(
                    index: hidrawIndex, side: .physical, path: hidraw.path, reportDescriptor: hidraw.reportDescriptor,
                    featureReports: hidraw.featureReports))
            hidrawWatch = try loop.makeWatch(device.descriptorForPolling, path: hidraw.path) { _ throws(DeviceAccessError) in
                try relay.recorder?.readReports()
            }
            self.hidraw = consume device
        }
        header = PadRecording(identity: identity, evdevNodes: recordedEvdev, hidrawNodes: recordedHidraw)
        relay.recorder = self
        output.begin(header)
        let now = Self.nowMicroseconds()
        for (node, events) in startingState where !events.isEmpty {
            for event in events {
                entryCount += 1
                output.append(
                    .evdev(microseconds: elapsed(now, now: now), node: node, type: event.type, code: event.code, value: event.value))
            }
        }
        flush()
    }

    /// What a node carries, judged from its declarations as discovery judges it.
    static func role(codes: [UInt16: [UInt16]], properties: [UInt16]) -> String {
        let capabilities = InputDeviceCapabilities(
            events: InputCapabilityBitmap(codes: codes.keys), keys: InputCapabilityBitmap(codes: codes[1] ?? []),
            absolutes: InputCapabilityBitmap(codes: codes[3] ?? []), properties: InputCapabilityBitmap(codes: properties))
        return EvdevNodeRole(capabilities: capabilities).rawValue
    }

    /// Lets the readers, made before the recorder exists, reach it.
    private final class Relay {
        weak var recorder: PadRecorder?
    }

    /// CLOCK_MONOTONIC now, in microseconds.
    private static func nowMicroseconds() -> Int64 { Int64(MonotonicInstant.now().nanoseconds / 1000) }

    /// Microseconds since the recording started, never before the previous entry's (evdev stamps and hidraw read
    /// times interleave); a stamp later than `now` (from a clock that is not the recording's) counts as `now`.
    private func elapsed(_ instantMicroseconds: Int64, now: Int64) -> Int64 {
        let microseconds = max(lastMicroseconds, min(instantMicroseconds, now) - Int64(start.nanoseconds / 1000))
        lastMicroseconds = microseconds
        return microseconds
    }

    private func flush() {
        output.flush()
    }

    /// The clock of supplied events' stamps.
    public enum EventClock: Sendable, Hashable {
        case monotonic
        /// evdev's default, CLOCK_REALTIME: converted to the recording's clock at the time of the batch.
        case realtime
    }

    /// Records events read from evdev node `node` as one batch: by this recorder (stamps on CLOCK_MONOTONIC, the
    /// nodes it reads are switched to it), or by the node's owner (a node recorded as `.supplied`, whose stamps are
    /// on `clock`: a node nobody switched is on CLOCK_REALTIME). The clocks are read once a batch, not per event.
    public func recordEvents(_ readings: [EvdevReading], node: Int, clock: EventClock = .realtime) {
        guard !isClosed else { return }
        let now = Self.nowMicroseconds()
        // What to subtract from a stamp to get CLOCK_MONOTONIC.
        var offset: Int64 = 0
        if clock == .realtime {
            var realtime = timespec()
            clock_gettime(CLOCK_REALTIME, &realtime)
            offset = Int64(realtime.tv_sec) * 1_000_000 + Int64(realtime.tv_nsec) / 1000 - now
        }
        // libevdev's catch-up after SYN_DROPPED included: the state after the gap (a release the kernel dropped is
        // there), which a replay through uinput plays as it is (repeated values are ignored there).
        for reading in readings {
            let event = reading.event
            entryCount += 1
            output.append(
                .evdev(
                    microseconds: elapsed(event.timestampMicroseconds - offset, now: now), node: node, type: event.type,
                    code: event.code, value: event.value))
        }
        flush()
    }

    private func readReports() throws(DeviceAccessError) {
        defer { flush() }
        while true {
            let result: Result<Int?, DeviceAccessError> = reportBuffer.withUnsafeMutableBytes { buffer in
                do throws(DeviceAccessError) {
                    return .success(try hidraw?.readInputReport(into: buffer) ?? nil)
                } catch {
                    return .failure(error)
                }
            }
            let count: Int?
            switch result {
            case .success(let read): count = read
            case .failure(let error) where error.code == .gone:
                unplugged()
                return
            case .failure(let error): throw error
            }
            guard let count, count > 0 else { return }
            let now = Self.nowMicroseconds()
            entryCount += 1
            let report = Array(reportBuffer.prefix(count))
            output.append(.hidrawInput(microseconds: elapsed(now, now: now), node: hidrawIndex, report: report))
        }
    }

    /// Records feedback (`padbridge feedback`'s JSON line) that reached the pad (`side` physical) or that a game
    /// sent a bridge's virtual pad (`side` virtual), on the recording's clock.
    public func recordFeedback(line: String, side: RecordedSide) {
        guard !isClosed else { return }
        let now = Self.nowMicroseconds()
        entryCount += 1
        output.append(.feedback(microseconds: elapsed(now, now: now), side: side, line: line))
        flush()
    }

    private func unplugged() {
        guard !isClosed else { return }
        close()
        onUnplugged()
    }

    /// Records what the nodes still hold (read by the kernel, not yet by this recorder), then closes them: a
    /// recording ended by a signal keeps everything that happened before it.
    public func finish() {
        for (index, reader) in evdevReaders {
            let result = try? reader.withDevice { (device) throws(DeviceAccessError) in try device.readAvailable() }
            if case .events(let readings)? = result { recordEvents(readings, node: index, clock: .monotonic) }
        }
        try? readReports()
        close()
    }

    /// Stops reading and closes every node. Idempotent.
    public func close() {
        isClosed = true
        evdevReaders.forEach { $0.reader.close() }
        evdevReaders.removeAll()
        hidrawWatch?.cancel()
        hidrawWatch = nil
        hidraw.take()?.close()
    }

    deinit { close() }
}

/// A recording in padbridge's own format (`PadRecordingFormat`): each batch's lines in one `write` (one write(2),
/// not one per event).
public final class PadRecordingTextOutput: PadRecordingOutput {
    private let write: (String) -> Void
    private var pending = ""

    public init(write: @escaping (String) -> Void) { self.write = write }

    public func begin(_ header: PadRecording) { write(PadRecordingFormat.header(of: header)) }

    public func append(_ entry: RecordedEntry) { pending += PadRecordingFormat.line(entry) }

    public func flush() {
        guard !pending.isEmpty else { return }
        write(pending)
        pending.removeAll(keepingCapacity: true)
    }
}

/// A recording's evdev nodes in evemu's format (`EvemuFormat`), one file per node: `writers[index]` receives node
/// `index`'s description and events (with libevdev's names as comments, as evemu-record writes them). Hidraw
/// reports and feedback are left out: evemu's format has no place for them.
public final class EvemuRecordingOutput: PadRecordingOutput {
    private let writers: [Int: (String) -> Void]
    private var pending: [Int: String] = [:]

    public init(writers: [Int: (String) -> Void]) { self.writers = writers }

    public func begin(_ header: PadRecording) {
        for node in header.evdevNodes { writers[node.index]?(EvemuFormat.description(of: node, padID: header.identity.id)) }
    }

    public func append(_ entry: RecordedEntry) {
        guard case let .evdev(microseconds, node, type, code, value) = entry, writers[node] != nil else { return }
        pending[node, default: ""] += EvemuFormat.eventLine(
            microseconds: microseconds, type: type, code: code, value: value,
            comment: "\(EvtestFormat.typeName(type)) / \(EvtestFormat.codeName(type, code)) \(value)")
    }

    public func flush() {
        for (node, text) in pending where !text.isEmpty { writers[node]?(text) }
        pending.removeAll(keepingCapacity: true)
    }
}
