import CPadLinux
import Glibc
public import Logging
public import PadCore

/// Records a pad in `PadRecordingFormat`: reads each node's declarations and the hidraw node's report descriptor
/// and feature reports once, then streams every evdev event and hidraw input report it reads, on one clock
/// (CLOCK_MONOTONIC; evdev events carry the kernel's stamp, hidraw reports the time they were read).
///
/// Reading never takes the pad from others (no grab). Confined to the loop's thread; `close()` ends it.
public final class PadRecorder {
    /// The recording's header, as written.
    public let header: PadRecording
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let write: (String) -> Void
    private let onUnplugged: () -> Void
    private let start = MonotonicInstant.now()
    private var lastMicroseconds: Int64 = 0
    private var evdevReaders: [WatchedEvdevDevice] = []
    private var hidraw: HidrawDevice?
    private var hasHidraw = false
    private var hidrawWatch: DeviceEventLoop.WatchToken?
    private let hidrawIndex: Int
    private var reportBuffer = [UInt8](repeating: 0, count: PadRecordingFormat.maximumReportBytes)
    public private(set) var entryCount = 0
    /// Lines of the current read batch: written with one write(2) per batch, not one per event.
    private var pending = ""

    /// Opens every node and writes the header through `write`. `onUnplugged` runs once when a node goes away.
    public init(
        identity: RecordedPadIdentity, evdevNodes: [(path: String, role: String)], hidrawNode: String?,
        side: RecordedSide = .physical, loop: DeviceEventLoop, logger: Logger,
        write: @escaping (String) -> Void, onUnplugged: @escaping () -> Void
    ) throws(DeviceAccessError) {
        self.loop = loop
        self.logger = logger
        self.write = write
        self.onUnplugged = onUnplugged
        // The readers are watched as they are opened; the loop calls them only once it runs, after the header.
        let relay = Relay()
        var readers: [WatchedEvdevDevice] = []
        var recordedEvdev: [RecordedEvdevNode] = []
        for (index, node) in evdevNodes.enumerated() {
            let device = try EvdevDevice(path: node.path)
            try device.useMonotonicClock()
            let info = device.info()
            recordedEvdev.append(
                RecordedEvdevNode(
                    index: index, side: side, role: node.role, path: node.path, name: info.name, bus: info.bus,
                    vendor: info.vendor, product: info.product, version: info.version, phys: info.phys,
                    uniq: info.uniq, properties: device.properties, codes: info.codes,
                    absoluteInfo: info.absoluteInfo))
            readers.append(
                try loop.watch(device) { result in
                    switch result {
                    case .events(let readings):
                        guard let recorder = relay.recorder else { return }
                        for reading in readings where !reading.isResync { recorder.recordEvent(reading.event, node: index) }
                        recorder.flush()
                    case .unplugged:
                        relay.recorder?.unplugged()
                    }
                })
        }
        evdevReaders = readers
        hidrawIndex = evdevNodes.count
        var recordedHidraw: [RecordedHidrawNode] = []
        if let hidrawNode {
            let device = try HidrawDevice(path: hidrawNode)
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
            recordedHidraw.append(
                RecordedHidrawNode(
                    index: hidrawIndex, side: side, path: hidrawNode, reportDescriptor: descriptor,
                    featureReports: features))
            hidrawWatch = try loop.watch(device.descriptorForPolling, path: hidrawNode) { _ throws(DeviceAccessError) in
                try relay.recorder?.readReports()
            }
            hidraw = consume device
            hasHidraw = true
        }
        header = PadRecording(identity: identity, evdevNodes: recordedEvdev, hidrawNodes: recordedHidraw)
        relay.recorder = self
        write(PadRecordingFormat.header(of: header))
    }

    /// Lets the readers, made before the recorder exists, reach it.
    private final class Relay {
        weak var recorder: PadRecorder?
    }

    /// Microseconds since the recording started, never before the previous entry's (evdev stamps and hidraw read
    /// times interleave).
    private func elapsed(_ instantMicroseconds: Int64) -> Int64 {
        let microseconds = max(lastMicroseconds, instantMicroseconds - Int64(start.nanoseconds / 1000))
        lastMicroseconds = microseconds
        return microseconds
    }

    private func recordEvent(_ event: EvdevEvent, node: Int) {
        let entry = RecordedEntry.evdev(
            microseconds: elapsed(event.timestampMicroseconds), node: node, type: event.type, code: event.code,
            value: event.value)
        entryCount += 1
        pending += PadRecordingFormat.line(entry)
    }

    private func flush() {
        guard !pending.isEmpty else { return }
        write(pending)
        pending.removeAll(keepingCapacity: true)
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
            let now = Int64(MonotonicInstant.now().nanoseconds / 1000)
            entryCount += 1
            let report = Array(reportBuffer.prefix(count))
            pending += PadRecordingFormat.line(.hidrawInput(microseconds: elapsed(now), node: hidrawIndex, report: report))
        }
    }

    /// Records feedback that reached the pad (`padbridge feedback`'s JSON line), on the recording's clock.
    public func recordFeedback(line: String, side: RecordedSide = .physical) {
        let now = Int64(MonotonicInstant.now().nanoseconds / 1000)
        entryCount += 1
        pending += PadRecordingFormat.line(.feedback(microseconds: elapsed(now), side: side, line: line))
        flush()
    }

    private func unplugged() {
        guard !evdevReaders.isEmpty || hasHidraw else { return }
        close()
        onUnplugged()
    }

    /// Records what the nodes still hold (read by the kernel, not yet by this recorder), then closes them: a
    /// recording ended by a signal keeps everything that happened before it.
    public func finish() {
        for (index, reader) in evdevReaders.enumerated() {
            let result = try? reader.withDevice { (device) throws(DeviceAccessError) in try device.readAvailable() }
            if case .events(let readings)?? = result {
                for reading in readings where !reading.isResync { recordEvent(reading.event, node: index) }
            }
        }
        flush()
        try? readReports()
        close()
    }

    /// Stops reading and closes every node. Idempotent.
    public func close() {
        evdevReaders.forEach { $0.close() }
        evdevReaders.removeAll()
        if let hidrawWatch { loop.removeWatch(hidrawWatch) }
        hidrawWatch = nil
        hidraw.take()?.close()
        hasHidraw = false
    }

    deinit { close() }
}
