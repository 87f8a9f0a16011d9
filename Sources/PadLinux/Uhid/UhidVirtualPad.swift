import CPadLinux
import Glibc
public import Logging
public import PadCore

/// A pad made with uhid and bound by the kernel's own driver for the pad it emulates (`EmulatedHIDPad`: a
/// DualSense through hid-playstation, a DualShock 4 through hid-sony or hid-playstation, an Xbox Series pad
/// through hid-microsoft), so every reader sees a real one: the driver's evdev nodes, LEDs, a battery and a hidraw
/// node SDL and Steam drive directly.
///
/// - It services the device from before UHID_CREATE2: the emulation answers the probe's GET_REPORTs and refuses
///   every other request at once with EIO (an unanswered one stalls the caller 5 s).
/// - Output reports reach the emulation, and what they mean reaches `onFeedback`, one event per field; the input
///   reports an emulation answers with (a Switch Pro's subcommand replies) go out at once.
/// - Input: while the device is open it re-sends the current state at the emulation's heartbeat like a real pad
///   (SDL relies on the stream), and at once when `apply` changes it, unless the emulation keeps to its pace
///   (`sendsChangesAtOnce`: a Switch Pro).
/// - Sensor clock (`VirtualSensorClock`): it steps as the source's sensor clock did (`MotionSample.
///   timestampMicroseconds`: a forwarded or remapped pad's MSC_TIMESTAMP, `virtual`'s "timestamp"), so games and
///   Steam integrate gyro as on the source, whenever the frames arrive; a source without one (0) gets the time the
///   reports go out. It starts at 3.4 s: a real pad's clock has run a while by the time it connects, and SDL on
///   Bluetooth holds back a DualSense's LED reset until the sensor clock passes 10 200 000 ticks (1/3 µs each, so
///   3.4 s); starting there lets SDL set the lightbar right away.
/// - Ready (`onReady`) once the emulation's probe questions are answered, sysfs shows an event node for each input
///   device the driver makes (by `uniq`) and the hidraw node of the HID device, and the kernel has announced the
///   device bound (the driver's probe has returned: the nodes appear during the probe, and a report sent then is
///   dropped).
public final class UhidVirtualPad<Emulation: EmulatedHIDPad>: VirtualPad {
    public var kind: VirtualPadKind { emulation.kind }

    static var sensorClockHeadStartMicroseconds: UInt64 { 3_400_000 }

    /// The pad's Bluetooth address as the kernel prints `uniq`: "aa:bb:cc:dd:ee:ff".
    public var macAddress: String { description.uniq }

    private var emulation: Emulation
    let description: HIDDeviceDescription
    private var device: UhidDevice?
    private let devicePath: String
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let onFeedback: (FeedbackEvent) -> Void
    private var onReady: ((VirtualPadNodes) -> Void)?
    private var deviceWatch: LoopWatch?
    private var heartbeat: LoopTimer?
    /// The reports a pad whose reports are its clock owes at each heartbeat (`EmulatedHIDPad.reportsAreItsClock`).
    private var pace: ReportPace
    /// Fires once, 5 s after UHID_START, to say why no driver probed the pad (its driver not loaded).
    private var probeWatchdog: LoopTimer?
    private var sensorClock = VirtualSensorClock(
        startingAtMicroseconds: sensorClockHeadStartMicroseconds,
        arrivalMicroseconds: MonotonicInstant.now().microseconds)

    private var isStarted = false
    private var isOpen = false
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
    private var reportBuffer: [UInt8]

    /// Creates the device; the kernel probes it once the loop runs (call `run()` promptly: the probe's feature
    /// requests time out after 5 s). `onReady` runs once the driver has made all nodes.
    public static func create(
        _ emulation: Emulation, loop: DeviceEventLoop, logger: Logger,
        onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) -> UhidVirtualPad {
        try create(emulation, devicePath: "/dev/uhid", loop: loop, logger: logger, onFeedback: onFeedback,
                   onReady: onReady)
    }

    static func create(
        _ emulation: Emulation, devicePath: StaticString, loop: DeviceEventLoop, logger: Logger,
        onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) -> UhidVirtualPad {
        let device = try UhidDevice(path: devicePath)
        let pad = UhidVirtualPad(
            device: device, emulation: emulation, loop: loop, logger: logger, onFeedback: onFeedback,
            onReady: onReady)
        try pad.startServicing()
        try pad.sendCreate()
        logger.info("creating virtual \(emulation.kind.displayName)", metadata: [
            "mac": "\(pad.macAddress)", "bus": "\(emulation.description.transport == .bluetooth ? "bluetooth" : "usb")",
        ])
        return pad
    }

    private init(
        device: consuming UhidDevice, emulation: Emulation,
        loop: DeviceEventLoop, logger: Logger, onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) {
        devicePath = "\(device.path)"
        self.device = consume device
        self.emulation = emulation
        description = emulation.description
        self.loop = loop
        self.logger = logger
        self.onFeedback = onFeedback
        self.onReady = onReady
        reportBuffer = [UInt8](repeating: 0, count: emulation.inputReportCapacity)
        pace = ReportPace(periodMilliseconds: emulation.heartbeatMilliseconds)
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
            if self.emulation.probeAnswered { self.checkReadiness() }
        }
        heartbeat = loop.makeTimer { [weak self] () throws(DeviceAccessError) in
            try self?.heartbeatFired()
        }
        probeWatchdog = loop.makeTimer { [weak self] in
            guard let self, self.onReady != nil else { return }
            self.logger.info(
                "no driver has probed the virtual \(self.kind.displayName): \(self.kind.missingDriverAdvice)",
                metadata: ["mac": "\(self.macAddress)"])
        }
    }

    private func sendCreate() throws(DeviceAccessError) {
        let request = UhidRequest.DeviceDescription(
            name: description.name, phys: description.physicalPath, uniq: description.uniq,
            bus: UInt16(description.transport == .bluetooth ? BUS_BLUETOOTH : BUS_USB),
            vendor: description.vendorID, product: description.productID, version: description.version,
            reportDescriptor: description.reportDescriptor)
        try device?.send(UhidRequest.create(request))
    }

    public func apply(_ snapshot: PadSnapshot) throws(DeviceAccessError) {
        current = snapshot
        guard isStarted, emulation.sendsChangesAtOnce, snapshot != lastSent else { return }
        try sendCurrentState()
    }

    public func close() {
        guard device != nil else { return }
        if isStarted {
            current = current.released
            do {
                try sendCurrentState()
            } catch {
                logger.debug("could not release the pad's inputs before closing", metadata: ["error": "\(error)"])
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
        logger.info("destroyed virtual \(kind.displayName)", metadata: ["mac": "\(macAddress)"])
    }

    deinit { close() }

    // MARK: - Input reports

    private func sendCurrentState() throws(DeviceAccessError) {
        guard device != nil, emulation.isStreaming else { return }
        var stamped = current
        stamped.motion.timestampMicroseconds = sensorClock.stamp(
            sourceMicroseconds: current.motion.timestampMicroseconds, arrivalMicroseconds: MonotonicInstant.now().microseconds)
        let event = reportBuffer.withUnsafeMutableBytes { buffer in
            let count = emulation.encodeInput(stamped, into: buffer)
            return UhidRequest.input(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        try device?.send(event)
        lastSent = current
    }

    private func heartbeatFired() throws(DeviceAccessError) {
        guard isOpen else { return }
        let reports = emulation.reportsAreItsClock ? pace.reportsOwed(atNanoseconds: MonotonicInstant.now().nanoseconds) : 1
        for _ in 0..<reports { try sendCurrentState() }
    }

    // MARK: - Kernel requests

    private func serviceEvents() throws(DeviceAccessError) {
        while let event = try device?.nextEvent() {
            try handle(event)
            if onReady != nil, emulation.probeAnswered { checkReadiness() }
        }
    }

    private func handle(_ event: UhidEvent) throws(DeviceAccessError) {
        switch event {
        case let .start(flags):
            logger.debug("uhid start", metadata: ["flags": "\(flags)"])
            isStarted = true
            if onReady != nil {
                probeWatchdog?.schedule(at: MonotonicInstant.now().adding(milliseconds: 5000))
            }
        case .stop:
            isStarted = false
            isOpen = false
            heartbeat?.cancel()
        case .open:
            isOpen = true
            heartbeat?.scheduleRepeating(everyMilliseconds: emulation.heartbeatMilliseconds)
            pace.start(atNanoseconds: MonotonicInstant.now().nanoseconds)
            if isStarted { try sendCurrentState() }
        case .close:
            isOpen = false
            heartbeat?.cancel()
        case let .getReport(id, reportNumber, reportType):
            try answerGetReport(id: id, reportNumber: reportNumber, reportType: reportType)
        case let .setReport(id, reportNumber, reportType, report):
            let response = reportType == UhidEvent.featureReportType
                ? emulation.receiveFeature(reportNumber, data: report) : nil
            if response == nil { logger.debug("refusing SET_REPORT", metadata: ["report": "\(reportNumber)"]) }
            try device?.send(UhidRequest.setReportReply(id: id, error: response != nil ? 0 : UInt16(EIO)))
            if let response { try deliver(response) }
        case let .output(report, reportType):
            guard reportType == UhidEvent.outputReportType, !report.isEmpty else { return }
            try deliverOutput(report)
        case .other:
            break
        }
    }

    private func answerGetReport(id: UInt32, reportNumber: UInt8, reportType: UInt8) throws(DeviceAccessError) {
        let reply = reportType == UhidEvent.featureReportType ? emulation.featureReply(to: reportNumber) : nil
        if let reply {
            try device?.send(UhidRequest.getReportReply(id: id, error: 0, report: reply))
            if emulation.probeAnswered { probeWatchdog?.cancel() }
        } else {
            logger.debug("refusing GET_REPORT", metadata: ["report": "\(reportNumber)", "type": "\(reportType)"])
            try device?.send(UhidRequest.getReportReply(id: id, error: UInt16(EIO), report: []))
        }
    }

    private func deliverOutput(_ report: [UInt8]) throws(DeviceAccessError) {
        let response = emulation.receiveOutput(report, showing: current)
        if response.feedback.isEmpty && response.inputReports.isEmpty {
            logger.debug("output report without meaning", metadata: [
                "report": "\(report[0])", "size": "\(report.count)",
            ])
        }
        try deliver(response)
    }

    private func deliver(_ response: EmulatedPadResponse) throws(DeviceAccessError) {
        for reply in response.inputReports {
            let event = reply.withUnsafeBytes { UhidRequest.input($0) }
            try device?.send(event)
        }
        for event in response.feedback { onFeedback(event) }
    }

    // MARK: - Readiness

    private func stopWatchingUevents() {
        ueventWatch?.cancel()
        ueventWatch = nil
        uevents.take()?.close()
    }

    private func checkReadiness() {
        guard let onReady else { return }
        let devices = SysfsInputDevices.inputDevices(withUniq: description.uniq)
        let expected = emulation.inputDeviceNames(forPadNamed: description.name)
        var ordered: [SysfsInputDevices.InputDevice] = []
        for wanted in expected {
            guard let match = devices.first(where: { $0.name == wanted }), match.eventNode != nil else { return }
            ordered.append(match)
        }
        ordered += devices.filter { !expected.contains($0.name) && $0.eventNode != nil }
        // A pad whose driver makes no input device (a Steam Deck's vendor interface) is found by its uniq alone.
        let hidDevice = ordered.first.flatMap { SysfsInputDevices.hidDevice(ofInputDevice: $0.sysfsPath) }
            ?? (expected.isEmpty ? SysfsInputDevices.hidDevice(withUniq: description.uniq) : nil)
        guard let hidDevice,
            let hidraw = SysfsInputDevices.hidrawNode(ofHIDDevice: hidDevice),
            boundDevices.contains(hidDevice) || missedAnnouncements
        else { return }
        let nodes = VirtualPadNodes(
            eventNodes: ordered.compactMap(\.eventNode), hidrawNode: hidraw, sysfsPath: hidDevice)
        self.onReady = nil
        probeWatchdog?.cancel()
        stopWatchingUevents()
        logger.info("virtual \(kind.displayName) ready", metadata: [
            "mac": "\(macAddress)", "nodes": "\(nodes.eventNodes.joined(separator: ","))", "hidraw": "\(hidraw)",
        ])
        onReady(nodes)
    }
}

/// A DualSense made with uhid and bound by hid-playstation (see `UhidVirtualPad`, `EmulatedDualSense`).
///
/// The Bluetooth bus is the default: SDL 2.26's HIDAPI driver takes a uhid DualSense only on Bluetooth (on USB it
/// falls back to the evdev node, without touchpad, sensors or LED).
public typealias VirtualDualSense = UhidVirtualPad<EmulatedDualSense>

extension UhidVirtualPad where Emulation == EmulatedDualSense {
    /// `physicalPath`: the pad's `phys` (default "padbridge/MAC").
    public static func create(
        name: String?, seed: String, bus: HIDTransport = .bluetooth, physicalPath: String? = nil,
        loop: DeviceEventLoop, logger: Logger,
        onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) -> VirtualDualSense {
        try create(EmulatedDualSense(name: name, seed: seed, transport: bus, physicalPath: physicalPath),
                   loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
    }

    static func create(
        name: String?, seed: String, bus: HIDTransport, physicalPath: String? = nil, devicePath: StaticString,
        loop: DeviceEventLoop, logger: Logger,
        onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) -> VirtualDualSense {
        try create(EmulatedDualSense(name: name, seed: seed, transport: bus, physicalPath: physicalPath),
                   devicePath: devicePath, loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
    }
}
