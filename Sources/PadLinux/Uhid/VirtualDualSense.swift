import CPadLinux
import Glibc
public import Logging
public import PadCore

/// A DualSense made with uhid and bound by the kernel's own hid-playstation driver, so every reader sees a real
/// one: the gamepad, "Motion Sensors" and "Touchpad" evdev nodes, LEDs, a battery and a hidraw node SDL and Steam
/// drive directly.
///
/// - The Bluetooth bus is the default: SDL 2.26's HIDAPI driver takes a uhid DualSense only on Bluetooth (on USB it
///   falls back to the evdev node, without touchpad, sensors or LED).
/// - It answers the probe's feature reports (0x09 pairing with a MAC derived from `seed`, 0x20 firmware, 0x05
///   calibration), refuses every other GET/SET_REPORT at once with EIO (an unanswered one stalls the caller 5 s).
/// - Output reports (rumble, lightbar, player and mic LEDs, trigger effects) reach `onFeedback`, one event per field.
/// - Input: while the device is open it re-sends the current state every 20 ms like a real pad (SDL relies on the
///   stream), and at once when `apply` changes it.
/// - Sensor clock (`VirtualSensorClock`): it steps as the source's sensor clock did (`MotionSample.
///   timestampMicroseconds`: a forwarded or remapped pad's MSC_TIMESTAMP, `virtual`'s "timestamp"), so games and
///   Steam integrate gyro as on the source, whenever the frames arrive; a source without one (0) gets the time the
///   reports go out. It starts at 3.4 s: a real pad's clock has run a while by the time it connects, and SDL on
///   Bluetooth holds back its LED reset until the sensor clock passes 10 200 000 ticks (1/3 µs each, so 3.4 s);
///   starting there lets SDL set the lightbar right away.
public final class VirtualDualSense: VirtualPad {
    public var kind: VirtualPadKind { .dualSense }

    static let defaultName = "Sony Interactive Entertainment DualSense Wireless Controller"
    static let heartbeatMilliseconds: UInt64 = 20
    static let sensorClockHeadStartMicroseconds: UInt64 = 3_400_000

    /// The MAC as the kernel prints `uniq`: "aa:bb:cc:dd:ee:ff".
    public var macAddress: String { identity.uniq }

    let identity: DualSenseIdentity
    let transport: HIDTransport
    let name: String
    let physicalPath: String
    private var device: UhidDevice?
    private let devicePath: String
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let onFeedback: (FeedbackEvent) -> Void
    private var onReady: ((VirtualPadNodes) -> Void)?
    private var deviceWatch: LoopWatch?
    private var heartbeat: LoopTimer?
    /// Fires once, 5 s after UHID_START, to say why no driver probed the pad (hid-playstation not loaded).
    private var probeWatchdog: LoopTimer?
    private var sensorClock = VirtualSensorClock(
        startingAtMicroseconds: VirtualDualSense.sensorClockHeadStartMicroseconds,
        arrivalMicroseconds: MonotonicInstant.now().microseconds)

    private var isStarted = false
    private var isOpen = false
    private var calibrationServed = false
    /// Kernel device announcements, watched from creation until the driver has made every node.
    private var uevents: KernelUeventMonitor?
    private var ueventWatch: LoopWatch?
    /// HID devices the kernel announced as bound to a driver ("bind" uevents, sent once the driver's probe has
    /// returned): until then hid-core drops input reports, so the pad is not ready before its device is here.
    private var boundDevices: Set<String> = []
    /// The uevent socket overflowed, so a bind may have been missed: readiness then goes by sysfs alone.
    private var missedAnnouncements = false
    private var current = PadSnapshot.neutral
    private var lastSent: PadSnapshot?
    private var sequence: UInt8 = 0
    private var reportBuffer: [UInt8]

    /// Creates the device; the kernel probes it once the loop runs (call `run()` promptly: the probe's feature
    /// requests time out after 5 s). `onReady` runs once hid-playstation has made all nodes.
    /// `physicalPath`: the pad's `phys` (default "padbridge/MAC").
    public static func create(
        name: String?, seed: String, bus: HIDTransport = .bluetooth, physicalPath: String? = nil,
        loop: DeviceEventLoop, logger: Logger,
        onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) -> VirtualDualSense {
        try create(name: name, seed: seed, bus: bus, physicalPath: physicalPath, devicePath: "/dev/uhid", loop: loop,
                   logger: logger, onFeedback: onFeedback, onReady: onReady)
    }

    static func create(
        name: String?, seed: String, bus: HIDTransport, physicalPath: String? = nil, devicePath: StaticString,
        loop: DeviceEventLoop, logger: Logger,
        onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) -> VirtualDualSense {
        let device = try UhidDevice(path: devicePath)
        let identity = DualSenseIdentity(seed: seed)
        let pad = VirtualDualSense(
            device: device, name: name ?? defaultName, identity: identity, physicalPath: physicalPath ?? "padbridge/\(identity.uniq)",
            transport: bus, loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
        try pad.startServicing()
        try pad.sendCreate()
        logger.info("creating virtual DualSense", metadata: [
            "mac": "\(pad.macAddress)", "bus": "\(bus == .bluetooth ? "bluetooth" : "usb")",
        ])
        return pad
    }

    private init(
        device: consuming UhidDevice, name: String, identity: DualSenseIdentity, physicalPath: String,
        transport: HIDTransport,
        loop: DeviceEventLoop, logger: Logger, onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) {
        devicePath = "\(device.path)"
        self.device = consume device
        self.name = name
        self.identity = identity
        self.physicalPath = physicalPath
        self.transport = transport
        self.loop = loop
        self.logger = logger
        self.onFeedback = onFeedback
        self.onReady = onReady
        reportBuffer = [UInt8](repeating: 0, count: DualSenseInputReport.size(for: transport))
    }

    /// Services the descriptor from before UHID_CREATE2: the probe's GET_REPORTs must be answered.
    private func startServicing() throws(DeviceAccessError) {
        guard let descriptor = device?.descriptorForPolling else { return }
        deviceWatch = try loop.makeWatch(descriptor, path: devicePath) { [weak self] _ throws(DeviceAccessError) in
            try self?.serviceEvents()
        }
        // Opened before UHID_CREATE2, so no announcement of our nodes can be missed.
        let monitor = try KernelUeventMonitor()
        let ueventDescriptor = monitor.descriptor
        uevents = consume monitor
        ueventWatch = try loop.makeWatch(ueventDescriptor, path: "kernel uevents") { [weak self] _ in
            guard let self else { return }
            guard let drained = self.uevents?.drain() else { return }
            for announcement in drained.announcements where announcement.action == "bind" {
                self.boundDevices.insert(announcement.sysfsPath)
            }
            if drained.overflowed { self.missedAnnouncements = true }
            if self.calibrationServed { self.checkReadiness() }
        }
        heartbeat = loop.makeTimer { [weak self] () throws(DeviceAccessError) in
            try self?.heartbeatFired()
        }
        probeWatchdog = loop.makeTimer { [weak self] in
            guard let self, !self.calibrationServed else { return }
            self.logger.info(
                "no driver has probed the virtual DualSense: is hid-playstation loaded? Run `sudo modprobe hid-playstation`",
                metadata: ["mac": "\(self.macAddress)"])
        }
    }

    private func sendCreate() throws(DeviceAccessError) {
        let description = UhidRequest.DeviceDescription(
            name: name, phys: physicalPath, uniq: identity.uniq,
            bus: UInt16(transport == .bluetooth ? BUS_BLUETOOTH : BUS_USB),
            vendor: DualSenseDescriptor.vendorID, product: DualSenseDescriptor.productID,
            version: DualSenseDescriptor.version(for: transport),
            reportDescriptor: DualSenseDescriptor.bytes(for: transport))
        try device?.send(UhidRequest.create(description))
    }

    public func apply(_ snapshot: PadSnapshot) throws(DeviceAccessError) {
        current = snapshot
        guard isStarted, snapshot != lastSent else { return }
        try sendCurrentState()
    }

    public func close() {
        guard device != nil else { return }
        if isStarted {
            current = current.released
            do {
                try sendCurrentState()
            } catch {
                logger.debug("could not release the DualSense's inputs before closing", metadata: ["error": "\(error)"])
            }
        }
        deviceWatch?.cancel()
        deviceWatch = nil
        heartbeat?.close()
        heartbeat = nil
        probeWatchdog?.close()
        probeWatchdog = nil
        stopWatchingUevents()
        device.take()?.close()
        isStarted = false
        isOpen = false
        logger.info("destroyed virtual DualSense", metadata: ["mac": "\(macAddress)"])
    }

    deinit { close() }

    // MARK: - Input reports

    private func sendCurrentState() throws(DeviceAccessError) {
        guard device != nil else { return }
        var stamped = current
        stamped.motion.timestampMicroseconds = sensorClock.stamp(
            sourceMicroseconds: current.motion.timestampMicroseconds, arrivalMicroseconds: MonotonicInstant.now().microseconds)
        let sequence = self.sequence
        let event = reportBuffer.withUnsafeMutableBytes { buffer in
            let count = DualSenseInputReport.encode(stamped, transport: transport, sequence: sequence, into: buffer)
            return UhidRequest.input(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        self.sequence &+= 1
        try device?.send(event)
        lastSent = current
    }

    private func heartbeatFired() throws(DeviceAccessError) {
        if isOpen { try sendCurrentState() }
    }

    // MARK: - Kernel requests

    private func serviceEvents() throws(DeviceAccessError) {
        while let event = try device?.nextEvent() {
            try handle(event)
            if onReady != nil, calibrationServed { checkReadiness() }
        }
    }

    private func handle(_ event: UhidEvent) throws(DeviceAccessError) {
        switch event {
        case let .start(flags):
            logger.debug("uhid start", metadata: ["flags": "\(flags)"])
            isStarted = true
            if !calibrationServed {
                probeWatchdog?.schedule(at: MonotonicInstant.now().adding(milliseconds: 5000))
            }
        case .stop:
            isStarted = false
            isOpen = false
            heartbeat?.cancel()
        case .open:
            isOpen = true
            heartbeat?.scheduleRepeating(everyMilliseconds: Self.heartbeatMilliseconds)
            if isStarted { try sendCurrentState() }
        case .close:
            isOpen = false
            heartbeat?.cancel()
        case let .getReport(id, reportNumber, reportType):
            try answerGetReport(id: id, reportNumber: reportNumber, reportType: reportType)
        case let .setReport(id, reportNumber, _, _):
            logger.debug("refusing SET_REPORT", metadata: ["report": "\(reportNumber)"])
            try device?.send(UhidRequest.setReportReply(id: id, error: UInt16(EIO)))
        case let .output(report, reportType):
            guard reportType == UhidEvent.outputReportType else { return }
            deliverOutput(report)
        case .other:
            break
        }
    }

    private func answerGetReport(id: UInt32, reportNumber: UInt8, reportType: UInt8) throws(DeviceAccessError) {
        let reply = reportType == UhidEvent.featureReportType
            ? DualSenseFeatureReport.reply(to: reportNumber, identity: identity, transport: transport) : nil
        if let reply {
            try device?.send(UhidRequest.getReportReply(id: id, error: 0, report: reply))
            if reportNumber == DualSenseFeatureReport.calibrationID && !calibrationServed {
                calibrationServed = true
                probeWatchdog?.cancel()
            }
        } else {
            logger.debug("refusing GET_REPORT", metadata: ["report": "\(reportNumber)", "type": "\(reportType)"])
            try device?.send(UhidRequest.getReportReply(id: id, error: UInt16(EIO), report: []))
        }
    }

    private func deliverOutput(_ report: [UInt8]) {
        let feedback: Feedback
        do {
            feedback = try report.withUnsafeBytes { (bytes) throws(ReportDecodingError) in
                try DualSenseOutputReport.decode(bytes)
            }
        } catch {
            // Includes SDL's deliberately CRC-less Bluetooth "tickle" report.
            logger.debug("dropping output report", metadata: ["size": "\(report.count)", "error": "\(error)"])
            return
        }
        for event in feedback.events { onFeedback(event) }
    }

    // MARK: - Readiness

    private func stopWatchingUevents() {
        ueventWatch?.cancel()
        ueventWatch = nil
        uevents.take()?.close()
    }

    /// Fires `onReady` once sysfs shows the gamepad, motion-sensor and touchpad nodes with our MAC and the hidraw
    /// node of our HID device, and the kernel has announced the device bound (hid-playstation's probe has returned:
    /// the nodes appear during the probe, and a report sent then is dropped).
    private func checkReadiness() {
        guard let onReady else { return }
        let devices = SysfsInputDevices.inputDevices(withUniq: identity.uniq)
        let expected = [name, "\(name) Motion Sensors", "\(name) Touchpad"]
        var ordered: [SysfsInputDevices.InputDevice] = []
        for wanted in expected {
            guard let match = devices.first(where: { $0.name == wanted }), match.eventNode != nil else { return }
            ordered.append(match)
        }
        ordered += devices.filter { !expected.contains($0.name) && $0.eventNode != nil }
        guard let hidDevice = SysfsInputDevices.hidDevice(ofInputDevice: ordered[0].sysfsPath),
            let hidraw = SysfsInputDevices.hidrawNode(ofHIDDevice: hidDevice),
            boundDevices.contains(hidDevice) || missedAnnouncements
        else { return }
        let nodes = VirtualPadNodes(
            eventNodes: ordered.compactMap(\.eventNode), hidrawNode: hidraw, sysfsPath: hidDevice)
        self.onReady = nil
        stopWatchingUevents()
        logger.info("virtual DualSense ready", metadata: [
            "mac": "\(macAddress)", "nodes": "\(nodes.eventNodes.joined(separator: ","))", "hidraw": "\(hidraw)",
        ])
        onReady(nodes)
    }
}
