import CPadLinux
import Glibc
public import Logging
public import PadCore

/// Brings a recorded pad back as a virtual one and plays its input with the recorded timing.
///
/// - A recording with a hidraw node (and its report descriptor) is replayed through uhid: the kernel's driver
///   binds it as it bound the real pad (its probe's feature requests are answered from the recording) and makes
///   the evdev nodes itself; the recorded input reports are played.
/// - Otherwise each recorded evdev node is made again through uinput with its recorded capabilities and ranges,
///   each axis where it stood when recording started (`evdev-abs ... value=`), and its events are played (the first
///   frame, at time 0, holds what was held then; a catch-up after dropped events is played as the state it is).
///
/// Only the physical side of a recording is replayed. What games send the replayed pad is reported: output reports
/// through uhid, force feedback (played as ff-memless would) through uinput. Confined to the loop's thread.
public final class PadReplayer {
    public enum Route: Sendable, Hashable {
        case uhid
        case uinput
    }

    /// What happens during a replay, for the command to print.
    public enum Happening: Sendable, Hashable {
        /// The virtual pad is ready (the driver bound it); playing starts now.
        case ready(VirtualPadNodes)
        /// A feedback line the recording holds, at its time.
        case recordedFeedback(String)
        /// An output report something sent the replayed pad now (uhid).
        case outputReport([UInt8])
        /// Force feedback something plays on the replayed pad now (uinput: the motors' combined output changed).
        case feedback(FeedbackEvent)
        /// Every entry was played.
        case finished
    }

    public let route: Route
    private let recording: PadRecording
    private let speed: Double
    private let delayMilliseconds: UInt64
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let onHappening: (Happening) -> Void
    private var uhid: UhidDevice?
    private var uhidWatch: LoopWatch?
    private var uevents: KernelUeventMonitor?
    private var ueventWatch: LoopWatch?
    private var uinputDevices: [Int: UinputHandle] = [:]
    private var playTimer: LoopTimer?
    private var readinessDeadline: LoopTimer?
    private var hidrawIndex: Int?
    /// The uhid device's sysfs name up to its instance number ("0005:054C:0CE6."), to know its bind announcement.
    private var hidDevicePrefix = ""
    /// The replayed pad's `phys`: "padbridge-replay/ID" (printable ASCII, short enough for uhid's and uinput's
    /// 64 bytes), by which its HID device is told from another with the same ids (a `padbridge virtual` DualSense).
    private let physicalPath: String
    private var playing = false
    private var startedAt = MonotonicInstant.now()
    private var nextEntry = 0
    private var closed = false

    /// One uinput device (a class, so the dictionary holds it: the device itself cannot be copied), and the
    /// force feedback it plays when it was recorded with some.
    private final class UinputHandle {
        var device: UinputDevice?
        var forceFeedback: UinputForceFeedback?
        var watch: LoopWatch?
        init(_ device: consuming UinputDevice) { self.device = consume device }

        func serviceForceFeedback() throws(DeviceAccessError) {
            guard let events = try device?.readEvents(), !events.isEmpty, let forceFeedback else { return }
            try device?.serviceForceFeedback(events, with: forceFeedback)
        }

        func close(loop: DeviceEventLoop) {
            watch?.cancel()
            watch = nil
            forceFeedback?.close()
            forceFeedback = nil
            device.take()?.close()
        }
    }

    /// Creates the virtual pad; playing starts `delayMilliseconds` after it is ready (call `loop.run()`). `speed` 2
    /// plays twice as fast.
    public init(
        recording: PadRecording, speed: Double, delayMilliseconds: UInt64 = 0, loop: DeviceEventLoop, logger: Logger,
        onHappening: @escaping (Happening) -> Void
    ) throws(DeviceAccessError) {
        self.recording = recording
        self.speed = speed > 0 ? speed : 1
        self.delayMilliseconds = delayMilliseconds
        self.loop = loop
        self.logger = logger
        self.onHappening = onHappening
        physicalPath = "padbridge-replay/"
            + String(decoding: recording.identity.id.utf8.filter { (0x21..<0x7F).contains($0) }.prefix(40), as: UTF8.self)
        let hidraw = recording.hidrawNodes.first { $0.side == .physical && !$0.reportDescriptor.isEmpty }
        route = hidraw == nil ? .uinput : .uhid
        playTimer = loop.makeTimer { [weak self] () throws(DeviceAccessError) in try self?.playDue() }
        if let hidraw {
            hidrawIndex = hidraw.index
            try createHID(hidraw)
        } else {
            try createEvdevNodes()
        }
    }

    // MARK: uhid

    /// The recorded pad node (the driver's main input device), whose name, bus and version the HID device takes.
    private var padNode: RecordedEvdevNode? {
        recording.evdevNodes.first { $0.side == .physical && $0.role == "pad" }
    }

    private func createHID(_ node: RecordedHidrawNode) throws(DeviceAccessError) {
        let device = try UhidDevice()
        let relay = Relay()
        uhidWatch = try loop.makeWatch(device.descriptorForPolling, path: "/dev/uhid") { _ throws(DeviceAccessError) in
            try relay.replayer?.serviceHID()
        }
        let monitor = try KernelUeventMonitor()
        let ueventDescriptor = monitor.descriptor
        uevents = consume monitor
        ueventWatch = try loop.makeWatch(ueventDescriptor, path: "kernel uevents") { _ in relay.replayer?.noticeBinds() }
        let reference = padNode
        let bus = reference?.bus ?? recording.identity.bus.kernelBusType
        // sysfs names HID devices BUS:VENDOR:PRODUCT.INSTANCE in uppercase hex (0005:054C:0CE6.0001).
        hidDevicePrefix =
            [bus, recording.identity.vendor, recording.identity.product].map(NumberText.hex4).joined(separator: ":")
            .uppercased() + "."
        let name = reference?.name ?? recording.evdevNodes.first { $0.side == .physical }?.name ?? recording.identity.name
        let description = UhidRequest.DeviceDescription(
            name: name, phys: physicalPath, uniq: reference?.uniq ?? "",
            bus: bus, vendor: UInt32(recording.identity.vendor), product: UInt32(recording.identity.product),
            version: UInt32(reference?.version ?? recording.identity.version),
            reportDescriptor: Array(node.reportDescriptor.prefix(Int(CPadLinux_UHID_DATA_MAX))))
        try device.send(UhidRequest.create(description))
        uhid = consume device
        relay.replayer = self
        // A HID device no driver takes (no hid-playstation, say) is still played after 5 s, with a note.
        readinessDeadline = loop.makeTimer { [weak self] in
            guard let self, !self.playing else { return }
            self.logger.warning(
                "no driver bound the replayed pad within 5 s (for a PlayStation pad: `sudo modprobe hid-playstation`); playing anyway")
            self.startPlaying(nodes: VirtualPadNodes(eventNodes: [], hidrawNode: nil, sysfsPath: ""))
        }
        readinessDeadline?.schedule(at: MonotonicInstant.now().adding(milliseconds: 5000))
    }

    private final class Relay {
        weak var replayer: PadReplayer?
    }

    private func serviceHID() throws(DeviceAccessError) {
        while let event = try uhid?.nextEvent() {
            switch event {
            case let .getReport(id, reportNumber, reportType):
                let node = recording.hidrawNodes.first { $0.index == hidrawIndex }
                if reportType == UhidEvent.featureReportType, let report = node?.featureReports[reportNumber] {
                    try uhid?.send(UhidRequest.getReportReply(id: id, error: 0, report: report))
                } else {
                    try uhid?.send(UhidRequest.getReportReply(id: id, error: UInt16(EIO), report: []))
                }
            case let .setReport(id, _, _, _):
                try uhid?.send(UhidRequest.setReportReply(id: id, error: 0))
            case let .output(report, reportType) where reportType == UhidEvent.outputReportType:
                onHappening(.outputReport(report))
            default:
                break
            }
        }
    }

    /// Where uhid's devices appear in sysfs.
    private static let uhidDevices = "/sys/devices/virtual/misc/uhid"

    private func noticeBinds() {
        guard let drained = uevents?.drain(), !playing else { return }
        var candidates = drained.announcements.filter { $0.action == "bind" }.map(\.sysfsPath)
        if drained.overflowed {
            // The kernel dropped announcements, perhaps the bind: look at the uhid devices themselves.
            candidates += SysfsInputDevices.directoryEntries(Self.uhidDevices).map { "\(Self.uhidDevices)/\($0)" }
        }
        if let bound = candidates.first(where: isReplayedHIDDeviceBound) { startPlaying(nodes: hidNodes(sysfsPath: bound)) }
    }

    /// Whether `sysfsPath` is this replay's uhid device (its ids and its phys) and a driver has bound it.
    private func isReplayedHIDDeviceBound(_ sysfsPath: String) -> Bool {
        let name = sysfsPath.split(separator: "/").last.map(String.init) ?? ""
        guard sysfsPath.hasPrefix(Self.uhidDevices + "/"), name.hasPrefix(hidDevicePrefix),
            SysfsInputDevices.resolvedPath("\(sysfsPath)/driver") != nil
        else { return false }
        let properties = SysfsInputDevices.readAttribute("\(sysfsPath)/uevent")?.split(separator: "\n") ?? []
        return properties.contains { $0 == "HID_PHYS=\(physicalPath)" }
    }

    /// The nodes the driver made for the HID device at `sysfsPath`: its input devices' event nodes and its hidraw node.
    private func hidNodes(sysfsPath: String) -> VirtualPadNodes {
        let inputs = SysfsInputDevices.directoryEntries("\(sysfsPath)/input").sorted(by: SysfsInputDevices.naturalOrder)
        let events = inputs.flatMap { SysfsInputDevices.eventNodes(ofInputDevice: "\(sysfsPath)/input/\($0)") }
        return VirtualPadNodes(
            eventNodes: events, hidrawNode: SysfsInputDevices.hidrawNode(ofHIDDevice: sysfsPath), sysfsPath: sysfsPath)
    }

    // MARK: uinput

    private func createEvdevNodes() throws(DeviceAccessError) {
        var nodes: [String] = []
        var sysfs = ""
        for node in recording.evdevNodes where node.side == .physical {
            let device = try UinputDevice()
            var playsForceFeedback = false
            for property in node.properties { try device.enableProperty(Int32(property)) }
            for (type, codes) in node.codes.sorted(by: { $0.key < $1.key }) {
                switch Int32(type) {
                case EV_KEY:
                    try device.enableEventType(EV_KEY)
                    for code in codes { try device.enableKey(Int32(code)) }
                case EV_ABS:
                    try device.enableEventType(EV_ABS)
                    for code in codes {
                        let info = node.absoluteInfo[code] ?? EvdevAbsoluteInfo(minimum: 0, maximum: 0)
                        // Where the axis stood when recording started (a stick held then is held from the start).
                        try device.enableAxis(
                            Int32(code), minimum: info.minimum, maximum: info.maximum, fuzz: info.fuzz, flat: info.flat,
                            resolution: info.resolution, value: info.value)
                    }
                case EV_FF:
                    // What the pad declared and padbridge can play (rumble, periodic, gain); the rest is refused.
                    let playable = codes.filter { UinputForceFeedback.playableCodes.contains(Int32($0)) }
                    if playable.count < codes.count {
                        logger.debug("not replaying force-feedback types padbridge cannot play", metadata: [
                            "node": "\(node.index)", "codes": "\(codes.filter { !playable.contains($0) })",
                        ])
                    }
                    guard !playable.isEmpty else { continue }
                    try device.enableEventType(EV_FF)
                    for code in playable { try device.enableForceFeedback(Int32(code)) }
                    playsForceFeedback = true
                default:
                    // LEDs, relative axes and the rest are not made again (yet).
                    logger.debug("not replaying an event type", metadata: ["node": "\(node.index)", "type": "\(type)"])
                }
            }
            try device.setPhysicalPath(physicalPath)
            try device.setUp(
                name: node.name, bus: node.bus, vendor: node.vendor, product: node.product, version: node.version,
                effectSlots: playsForceFeedback ? UInt32(ForceFeedbackMixer.effectSlots) : 0)
            try device.create()
            sysfs = "/sys/devices/virtual/input/\(try device.systemName())"
            nodes += SysfsInputDevices.eventNodes(ofInputDevice: sysfs)
            let descriptor = device.descriptorForPolling
            let handle = UinputHandle(device)
            uinputDevices[node.index] = handle
            if playsForceFeedback {
                handle.forceFeedback = try UinputForceFeedback(loop: loop, logger: logger) { [weak self] rumble in
                    self?.onHappening(.feedback(.rumble(rumble)))
                }
                handle.watch = try loop.makeWatch(descriptor, path: "/dev/uinput") { [weak handle] _ throws(DeviceAccessError) in
                    try handle?.serviceForceFeedback()
                }
            }
        }
        let ready = VirtualPadNodes(eventNodes: nodes, hidrawNode: nil, sysfsPath: sysfs)
        loop.deferWork { [weak self] in self?.startPlaying(nodes: ready) }
    }

    // MARK: Playing

    private func startPlaying(nodes: VirtualPadNodes) {
        guard !playing, !closed else { return }
        playing = true
        readinessDeadline?.close()
        readinessDeadline = nil
        onHappening(.ready(nodes))
        startedAt = MonotonicInstant.now().adding(milliseconds: delayMilliseconds)
        do {
            try playDue()
        } catch {
            logger.error("replay stopped: \(error)")
            onHappening(.finished)
        }
    }

    /// When the entry at `microseconds` is due. Saturating: a speed that stretches the recording past the clock's
    /// range plays it at the end of time, it does not trap (the command refuses such speeds anyway).
    private func dueInstant(_ microseconds: Int64) -> MonotonicInstant {
        let offset = Double(max(0, microseconds)) * 1000 / speed
        let limit = Double(UInt64.max / 2)
        let nanoseconds = offset.isFinite && offset < limit ? UInt64(offset) : UInt64.max / 2
        let (due, overflow) = startedAt.nanoseconds.addingReportingOverflow(nanoseconds)
        return MonotonicInstant(nanoseconds: overflow ? UInt64.max / 2 : due)
    }

    private func playDue() throws(DeviceAccessError) {
        guard playing, !closed else { return }
        let now = MonotonicInstant.now()
        var pending: [Int: [input_event]] = [:]
        while nextEntry < recording.entries.count, dueInstant(recording.entries[nextEntry].microseconds) <= now {
            switch recording.entries[nextEntry] {
            case let .evdev(_, node, type, code, value):
                pending[node, default: []].append(
                    input_event(time: timeval(), type: type, code: code, value: value))
            case let .hidrawInput(_, node, report):
                if node == hidrawIndex {
                    let event = report.withUnsafeBytes { UhidRequest.input($0) }
                    try uhid?.send(event)
                }
            case let .feedback(_, side, line):
                if side == .physical { onHappening(.recordedFeedback(line)) }
            }
            nextEntry += 1
        }
        for (node, events) in pending {
            try uinputDevices[node]?.device?.write(events)
        }
        if nextEntry < recording.entries.count {
            playTimer?.schedule(at: dueInstant(recording.entries[nextEntry].microseconds))
        } else {
            onHappening(.finished)
        }
    }

    /// Destroys the virtual pad (its inputs released by the kernel). Idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        playTimer?.close()
        readinessDeadline?.close()
        uhidWatch?.cancel()
        ueventWatch?.cancel()
        uevents.take()?.close()
        if let device = uhid.take() {
            try? device.send(UhidRequest.destroy())
            device.close()
        }
        for handle in uinputDevices.values { handle.close(loop: loop) }
        uinputDevices.removeAll()
    }

    deinit { close() }
}
