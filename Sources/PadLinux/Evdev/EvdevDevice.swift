import CLibEvdev
import Glibc
public import PadCore
import SystemPackage

/// One event as an `EvdevDevice` hands it on.
public struct EvdevReading: Sendable, Hashable {
    public var event: EvdevEvent
    /// Part of libevdev's catch-up after the kernel dropped events (its buffer for this reader overflowed): the
    /// SYN_DROPPED event itself, then the events that take the reader from the state it last saw to the device's
    /// state now, ending with SYN_REPORT. A consumer treats them as one full-state frame, not as the input that
    /// happened (the presses and releases in between are lost).
    public var isResync: Bool

    public init(_ event: EvdevEvent, isResync: Bool = false) {
        self.event = event
        self.isResync = isResync
    }
}

/// What one read of an event node gave.
public enum EvdevReadResult: Sendable, Hashable {
    /// The events read, in order (empty when none were queued).
    case events([EvdevReading])
    /// The node went away (ENODEV): the pad was unplugged or its driver unbound. A lifecycle event: the device reads
    /// nothing more; close it.
    case unplugged
}

/// Owns one `/dev/input/eventN` descriptor, opened read-only, non-blocking, close-on-exec, and the libevdev handle
/// (`struct libevdev *`) reading it: the device's identity and capabilities, exclusive grabs, and reading with
/// libevdev's recovery from dropped events.
///
/// The raw descriptor never leaves this type. Not `Sendable`: libevdev handles are not thread-safe.
public struct EvdevDevice: ~Copyable {
    public let path: String
    private let descriptor: FileDescriptor
    private let handle: OpaquePointer
    /// Where `readAvailable` reads to: allocated once, so a read allocates nothing.
    private let readBuffer: UnsafeMutableBufferPointer<input_event>

    /// Opens `path`. Fails with a remedy: EACCES → install the udev rule, ENOENT → connect the pad, ENOTTY → not an
    /// event node.
    public init(path: String) throws(DeviceAccessError) {
        let descriptor = try FileDescriptor.openDeviceNode(atPath: path, access: .readOnly)
        var handle: OpaquePointer?
        let status = libevdev_new_from_fd(descriptor.rawValue, &handle)
        guard status == 0, let handle else {
            try? descriptor.close()
            let failure = Errno(rawValue: status < 0 ? -status : EINVAL)
            var error = DeviceAccessError(
                code: DeviceAccessError.code(for: failure), path: path,
                operation: "libevdev_new_from_fd (reading the device's capabilities)", cause: failure)
            if failure == .inappropriateIOCTLForDevice { error.operation += "; not an evdev event node" }
            if failure == .noDevice { error.code = .gone }
            throw error
        }
        self.path = path
        self.descriptor = descriptor
        self.handle = handle
        readBuffer = .allocate(capacity: Self.readCapacity)
    }

    /// Stamps this reader's events with CLOCK_MONOTONIC (`MonotonicInstant`'s clock) instead of the wall clock
    /// (EVIOCSCLOCKID through libevdev), so they share one clock with reads of other nodes.
    public func useMonotonicClock() throws(DeviceAccessError) {
        let status = libevdev_set_clock_id(handle, CLOCK_MONOTONIC)
        guard status == 0 else {
            let failure = Errno(rawValue: -status)
            throw DeviceAccessError(
                code: DeviceAccessError.code(for: failure), path: path, operation: "ioctl(EVIOCSCLOCKID)",
                cause: failure)
        }
    }

    /// Frees the libevdev handle and closes the descriptor (releasing a grab).
    public consuming func close() {}

    deinit {
        libevdev_free(handle)
        try? descriptor.close()
        readBuffer.deallocate()
    }

    /// `body(self)`: lets an owner that holds the device in an optional lend it out (`device?.passed(to: body)`).
    func passed<Result>(
        to body: (borrowing EvdevDevice) throws(DeviceAccessError) -> Result
    ) throws(DeviceAccessError) -> Result {
        try body(self)
    }

    /// For registering with the event loop only.
    var descriptorForPolling: FileDescriptor { descriptor }

    // MARK: - Identity

    public var name: String { String(cString: libevdev_get_name(handle)) }
    public var phys: String? { libevdev_get_phys(handle).map { String(cString: $0) } }
    public var uniq: String? { libevdev_get_uniq(handle).map { String(cString: $0) } }
    /// `BUS_USB` (0x03), `BUS_BLUETOOTH` (0x05), `BUS_VIRTUAL` (0x06), ...
    public var bus: UInt16 { UInt16(truncatingIfNeeded: libevdev_get_id_bustype(handle)) }
    public var vendor: UInt16 { UInt16(truncatingIfNeeded: libevdev_get_id_vendor(handle)) }
    public var product: UInt16 { UInt16(truncatingIfNeeded: libevdev_get_id_product(handle)) }
    public var version: UInt16 { UInt16(truncatingIfNeeded: libevdev_get_id_version(handle)) }
    /// The evdev protocol version (EVIOCGVERSION), 0x010001 on current kernels.
    public var driverVersion: Int32 { libevdev_get_driver_version(handle) }

    // MARK: - Capabilities and state

    public func has(type: UInt16) -> Bool { libevdev_has_event_type(handle, UInt32(type)) != 0 }

    public func has(type: UInt16, code: UInt16) -> Bool {
        libevdev_has_event_code(handle, UInt32(type), UInt32(code)) != 0
    }

    /// The event types the device declares, ascending (EV_SYN included).
    public var eventTypes: [UInt16] {
        (0...UInt16(EV_MAX)).filter { has(type: $0) }
    }

    /// The codes of `type` the device declares, ascending.
    public func codes(ofType type: UInt16) -> [UInt16] {
        let maximum = libevdev_event_type_get_max(UInt32(type))
        guard maximum >= 0, has(type: type) else { return [] }
        return (0...UInt16(maximum)).filter { has(type: type, code: $0) }
    }

    /// An absolute axis's range and current value, nil if the device has no such axis.
    public func absoluteInfo(_ code: UInt16) -> EvdevAbsoluteInfo? {
        guard let info = libevdev_get_abs_info(handle, UInt32(code))?.pointee else { return nil }
        return EvdevAbsoluteInfo(
            value: info.value, minimum: info.minimum, maximum: info.maximum, fuzz: info.fuzz, flat: info.flat,
            resolution: info.resolution)
    }

    /// The device's value for `code` now: asked of the kernel for keys (EVIOCGKEY) and absolute axes (EVIOCGABS);
    /// for switches, LEDs and sounds, libevdev's view as of opening or the last catch-up. Nil if the device has no
    /// such code.
    public func currentValue(type: UInt16, code: UInt16) -> Int32? {
        guard libevdev_has_event_code(handle, UInt32(type), UInt32(code)) != 0 else { return nil }
        switch type {
        case EvdevCode.evKey:
            return pressedKeys().map { $0.contains(code) ? 1 : 0 }
        case EvdevCode.evAbs:
            var axis = input_absinfo()
            guard case .success = descriptor.control(.evdevAxis(Int32(code)), &axis) else { return nil }
            return axis.value
        default:
            var value: Int32 = 0
            return libevdev_fetch_event_value(handle, UInt32(type), UInt32(code), &value) != 0 ? value : nil
        }
    }

    /// The keys held down now, ascending, in one EVIOCGKEY; nil if the kernel refused (the node went away).
    public func pressedKeys() -> [UInt16]? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(KEY_MAX) / 8 + 1) { bits in
            bits.initialize(repeating: 0)
            let raw = UnsafeMutableRawBufferPointer(bits)
            guard case .success = descriptor.control(.evdevKeyState(length: raw.count), raw.baseAddress) else {
                return nil
            }
            return (0...UInt16(KEY_MAX)).filter { bits[Int($0 / 8)] & (1 << ($0 % 8)) != 0 }
        }
    }

    /// Input properties (INPUT_PROP_POINTER, INPUT_PROP_BUTTONPAD, INPUT_PROP_ACCELEROMETER, ...), ascending.
    public var properties: [UInt16] {
        (0...UInt16(INPUT_PROP_MAX)).filter { libevdev_has_property(handle, UInt32($0)) != 0 }
    }

    /// Key-repeat delay and period in milliseconds, for devices with EV_REP.
    public var keyRepeat: (delay: Int32, period: Int32)? {
        var delay: Int32 = 0, period: Int32 = 0
        return libevdev_get_repeat(handle, &delay, &period) == 0 ? (delay, period) : nil
    }

    /// Everything an `evtest`-style listing or a fingerprint needs, read once.
    public func info() -> EvdevDeviceInfo {
        var codes: [UInt16: [UInt16]] = [:]
        var absolute: [UInt16: EvdevAbsoluteInfo] = [:]
        var states: [UInt16: [UInt16: Int32]] = [:]
        for type in eventTypes where type != UInt16(EV_SYN) {
            codes[type] = self.codes(ofType: type)
        }
        for code in codes[UInt16(EV_ABS)] ?? [] { absolute[code] = absoluteInfo(code) }
        for type in [EV_SW, EV_LED, EV_SND].map(UInt16.init) where has(type: type) {
            var values: [UInt16: Int32] = [:]
            for code in codes[type] ?? [] { values[code] = currentValue(type: type, code: code) }
            states[type] = values
        }
        return EvdevDeviceInfo(
            driverVersion: driverVersion, bus: bus, vendor: vendor, product: product, version: version, name: name,
            phys: phys, uniq: uniq, eventTypes: eventTypes, codes: codes, absoluteInfo: absolute, states: states,
            keyRepeat: keyRepeat.map { EvdevDeviceInfo.KeyRepeat(delay: $0.delay, period: $0.period) },
            properties: properties)
    }

    // MARK: - Exclusive access

    /// EVIOCGRAB: from now on only this descriptor receives the device's events. EBUSY says which program holds
    /// the grab when that can be told (a single other process with the node open), else how to find out.
    public func grab() throws(DeviceAccessError) {
        let status = libevdev_grab(handle, LIBEVDEV_GRAB)
        guard status < 0 else { return }
        let failure = Errno(rawValue: -status)
        var error = DeviceAccessError.ioctl("EVIOCGRAB", path: path, failure)
        if failure == .resourceBusy {
            error.remedy = .closeOtherProgram(DeviceNodeHolders.describe(DeviceNodeHolders.processes(holding: path)))
        }
        if failure == .noDevice { error.code = .gone }
        throw error
    }

    /// Releases a grab (no-op without one).
    public func ungrab() throws(DeviceAccessError) {
        let status = libevdev_grab(handle, LIBEVDEV_UNGRAB)
        guard status < 0 else { return }
        var error = DeviceAccessError.ioctl("EVIOCGRAB(0)", path: path, Errno(rawValue: -status))
        if error.cause == .noDevice { error.code = .gone }
        throw error
    }

    /// Runs `body` with the device grabbed; releases the grab afterwards, also when `body` throws.
    public func withGrab<Result>(
        _ body: () throws(DeviceAccessError) -> Result
    ) throws(DeviceAccessError) -> Result {
        try grab()
        defer { try? ungrab() }
        return try body()
    }

    // MARK: - Reading

    /// Reads what the kernel has queued for this reader, up to `readCapacity` events in one read(2); never blocks.
    /// An empty batch means nothing was queued. A watch on a level-triggered loop calls this once per wake-up (a
    /// full batch leaves the descriptor readable, so the loop comes straight back); other callers read until a batch
    /// comes back empty.
    ///
    /// Events are read with a plain read(2), not one libevdev call per event: libevdev's reading makes an extra
    /// read(2) per event, which is most of the per-event cost of forwarding a pad. libevdev still does what it is
    /// there for: after SYN_DROPPED (the kernel's buffer for this reader overflowed), the events queued after it are
    /// discarded and libevdev re-reads the device's whole state (its sync), which is handed on as a catch-up: the
    /// SYN_DROPPED event, then the value of every key and axis (multitouch slots included), then SYN_REPORT, all
    /// marked `isResync`. The catch-up is the device's full state, not a difference from what this reader saw.
    ///
    /// Events read before the node vanished come first as `.events`; the next call then says `.unplugged`.
    public func readAvailable() throws(DeviceAccessError) -> EvdevReadResult {
        var readings: [EvdevReading] = []
        return try readAvailable(reusing: &readings)
    }

    /// Events read by one call at most: a DualSense frame is a dozen events, so a batch holds several frames.
    public static let readCapacity = 64

    /// `readAvailable()` into `readings` (emptied first, its capacity kept): an owner that reads often keeps one
    /// array and allocates nothing per read once it is large enough.
    public func readAvailable(reusing readings: inout [EvdevReading]) throws(DeviceAccessError) -> EvdevReadResult {
        readings.removeAll(keepingCapacity: true)
        let count: Int
        switch descriptor.readResult(into: UnsafeMutableRawBufferPointer(readBuffer)) {
        case let .success(bytes):
            count = bytes / MemoryLayout<input_event>.stride
        case .failure(.resourceTemporarilyUnavailable):
            return .events(readings)
        case .failure(.noDevice):
            return .unplugged
        case let .failure(failure):
            throw .reading(path, failure)
        }
        for index in 0..<count {
            let event = Self.reading(readBuffer[index])
            if event.type == EvdevCode.evSyn && event.code == EvdevCode.synDropped {
                // The rest of this batch belongs to the cut-short stretch: the catch-up replaces it.
                readings.append(EvdevReading(event, isResync: true))
                return try catchUp(after: event, into: &readings)
            }
            readings.append(EvdevReading(event))
        }
        return .events(readings)
    }

    private static func reading(_ event: input_event) -> EvdevEvent {
        EvdevEvent(
            seconds: Int64(event.time.tv_sec), microseconds: Int32(truncatingIfNeeded: event.time.tv_usec),
            type: event.type, code: event.code, value: event.value)
    }

    /// After SYN_DROPPED: libevdev's sync (it drains what is queued, then reads every key, axis and slot by ioctl),
    /// then the whole state it read, as catch-up readings stamped with the SYN_DROPPED's time.
    private func catchUp(
        after dropped: EvdevEvent, into readings: inout [EvdevReading]
    ) throws(DeviceAccessError) -> EvdevReadResult {
        var event = input_event()
        var status = libevdev_next_event(
            handle, LIBEVDEV_READ_FLAG_FORCE_SYNC.rawValue | LIBEVDEV_READ_FLAG_BLOCKING.rawValue, &event)
        while status >= 0 || status == -EINTR {
            // The sync's own events are differences from libevdev's older view; only its resulting state is used.
            status = libevdev_next_event(handle, LIBEVDEV_READ_FLAG_SYNC.rawValue, &event)
        }
        switch status {
        case -EAGAIN:
            break
        case -ENODEV:
            return .events(readings)  // the next read says .unplugged
        default:
            throw .reading(path, Errno(rawValue: -status))
        }
        for event in state(restIncluded: true) {
            var stamped = event
            stamped.seconds = dropped.seconds
            stamped.microseconds = dropped.microseconds
            readings.append(EvdevReading(stamped, isResync: true))
        }
        return .events(readings)
    }

    /// The multitouch slots as libevdev read them when the device was opened (EVIOCGMTSLOTS): each slot's tracking
    /// id (-1: no contact) and position. Empty for a device without slots.
    public func touchSlots() -> [EvdevTouchSlot] {
        let slots = libevdev_get_num_slots(handle)
        guard slots > 0 else { return [] }
        return (0..<slots).map { slot in
            EvdevTouchSlot(
                slot: Int(slot),
                trackingID: libevdev_get_slot_value(handle, UInt32(slot), UInt32(ABS_MT_TRACKING_ID)),
                x: libevdev_get_slot_value(handle, UInt32(slot), UInt32(ABS_MT_POSITION_X)),
                y: libevdev_get_slot_value(handle, UInt32(slot), UInt32(ABS_MT_POSITION_Y)))
        }
    }

    /// The device's state in libevdev's view (as read when the device was opened, or at the last catch-up) as
    /// events ending with SYN_REPORT, unstamped: every key, every absolute axis and every multitouch slot, or with
    /// `restIncluded` false only what differs from rest (keys held, axes away from 0, contacts down; nothing at all,
    /// not even the SYN_REPORT, for a pad at rest), the frame that brings a pad made afresh (values 0) to this state.
    public func state(restIncluded: Bool) -> [EvdevEvent] {
        var events: [EvdevEvent] = []
        func append(_ type: UInt16, _ code: UInt16, _ value: Int32) {
            events.append(EvdevEvent(type: type, code: code, value: value))
        }
        for code in 0...UInt16(KEY_MAX) where libevdev_has_event_code(handle, UInt32(EV_KEY), UInt32(code)) != 0 {
            let value = libevdev_get_event_value(handle, UInt32(EV_KEY), UInt32(code))
            if restIncluded || value != 0 { append(EvdevCode.evKey, code, value) }
        }
        let firstSlotCode = UInt16(ABS_MT_SLOT), lastSlotCode = UInt16(ABS_MT_TOOL_Y)
        for code in 0...UInt16(ABS_MAX) where !(firstSlotCode...lastSlotCode).contains(code)
            && libevdev_has_event_code(handle, UInt32(EV_ABS), UInt32(code)) != 0
        {
            let value = libevdev_get_event_value(handle, UInt32(EV_ABS), UInt32(code))
            if restIncluded || value != 0 { append(EvdevCode.evAbs, code, value) }
        }
        let slots = libevdev_get_num_slots(handle)
        if slots > 0 {
            let slotCodes = (firstSlotCode + 1...lastSlotCode).filter {
                libevdev_has_event_code(handle, UInt32(EV_ABS), UInt32($0)) != 0
            }
            let trackingCode = UInt16(ABS_MT_TRACKING_ID)
            var lastSlot: Int32 = 0
            for slot in 0..<slots {
                let down = libevdev_get_slot_value(handle, UInt32(slot), UInt32(trackingCode)) >= 0
                guard restIncluded || down else { continue }
                append(EvdevCode.evAbs, firstSlotCode, slot)
                lastSlot = slot
                for code in slotCodes {
                    let value = libevdev_get_slot_value(handle, UInt32(slot), UInt32(code))
                    if restIncluded || value != 0 || code == trackingCode { append(EvdevCode.evAbs, code, value) }
                }
            }
            let current = libevdev_get_current_slot(handle)
            if restIncluded || current != lastSlot { append(EvdevCode.evAbs, firstSlotCode, current) }
        }
        if restIncluded || !events.isEmpty { append(EvdevCode.evSyn, EvdevCode.synReport, 0) }
        return events
    }
}

/// What `EvdevDevice.info()` reads: identity, capabilities, axis ranges, switch/LED/sound states, key repeat and
/// input properties. Plain values, so listings and fingerprints are tested without a kernel.
public struct EvdevDeviceInfo: Sendable, Hashable {
    public struct KeyRepeat: Sendable, Hashable {
        public var delay: Int32
        public var period: Int32
        public init(delay: Int32, period: Int32) {
            self.delay = delay
            self.period = period
        }
    }

    public var driverVersion: Int32
    public var bus: UInt16
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16
    public var name: String
    public var phys: String?
    public var uniq: String?
    /// Declared event types, ascending, EV_SYN included.
    public var eventTypes: [UInt16]
    /// Declared codes per event type (EV_SYN's not listed), ascending.
    public var codes: [UInt16: [UInt16]]
    public var absoluteInfo: [UInt16: EvdevAbsoluteInfo]
    /// Current values of EV_SW, EV_LED and EV_SND codes, per type.
    public var states: [UInt16: [UInt16: Int32]]
    public var keyRepeat: KeyRepeat?
    public var properties: [UInt16]

    public init(
        driverVersion: Int32 = 0x010001, bus: UInt16, vendor: UInt16, product: UInt16, version: UInt16, name: String,
        phys: String? = nil, uniq: String? = nil, eventTypes: [UInt16], codes: [UInt16: [UInt16]],
        absoluteInfo: [UInt16: EvdevAbsoluteInfo] = [:], states: [UInt16: [UInt16: Int32]] = [:],
        keyRepeat: KeyRepeat? = nil, properties: [UInt16] = []
    ) {
        self.driverVersion = driverVersion
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.version = version
        self.name = name
        self.phys = phys
        self.uniq = uniq
        self.eventTypes = eventTypes
        self.codes = codes
        self.absoluteInfo = absoluteInfo
        self.states = states
        self.keyRepeat = keyRepeat
        self.properties = properties
    }
}

/// An `EvdevDevice` registered with a `DeviceEventLoop` (`loop.watch(device, onRead:)`): owns the device from then
/// on, hands on everything it reads, and stops watching by itself when the node goes away.
///
/// `close()` (or dropping it) removes the watch, then closes the device. Confined to the loop's thread.
public final class WatchedEvdevDevice {
    public let path: String
    private var device: EvdevDevice?
    private let loop: DeviceEventLoop
    private var watch: LoopWatch?
    /// Reused by every read (its storage is kept when the handler does not hold on to the readings).
    private var readings: [EvdevReading] = []

    fileprivate init(device: consuming EvdevDevice, loop: DeviceEventLoop) {
        path = device.path
        self.device = consume device
        self.loop = loop
    }

    fileprivate func start(_ onRead: @escaping (EvdevReadResult) -> Void) throws(DeviceAccessError) {
        guard let descriptor = device?.descriptorForPolling else { return }
        // unowned(unsafe): no reference counting per read. Sound because the watch ends in close(), which deinit
        // calls, so the loop never calls this after self is gone.
        watch = try loop.makeWatch(descriptor, path: path) { [unowned(unsafe) self] _ throws(DeviceAccessError) in
            guard let result = try self.device?.readAvailable(reusing: &self.readings) else { return }
            switch result {
            case let .events(readings):
                if !readings.isEmpty { onRead(result) }
            case .unplugged:
                // The node stays readable (EPOLLHUP) until closed: stop watching before saying so.
                self.stopWatching()
                onRead(.unplugged)
            }
        }
    }

    /// Whether the device is still open and watched (false after `.unplugged` or `close()`).
    public var isWatching: Bool { watch != nil }

    /// Runs `body` with the device; nil once it was closed.
    public func withDevice<Result>(
        _ body: (borrowing EvdevDevice) throws(DeviceAccessError) -> Result
    ) throws(DeviceAccessError) -> Result? {
        try device?.passed(to: body)
    }

    public func grab() throws(DeviceAccessError) { try withDevice { device throws(DeviceAccessError) in try device.grab() } }
    public func ungrab() throws(DeviceAccessError) { try withDevice { device throws(DeviceAccessError) in try device.ungrab() } }

    /// Stops watching and closes the device. Idempotent.
    public func close() {
        stopWatching()
        device.take()?.close()
    }

    private func stopWatching() {
        watch?.cancel()
        watch = nil
    }

    deinit { close() }
}

extension DeviceEventLoop {
    /// Takes over `device` and calls `onRead` on the loop thread with each batch of events it reads, and once with
    /// `.unplugged` when the node goes away (the watch ends then; close the returned owner).
    public func watch(
        _ device: consuming EvdevDevice, onRead: @escaping (EvdevReadResult) -> Void
    ) throws(DeviceAccessError) -> WatchedEvdevDevice {
        let watched = WatchedEvdevDevice(device: device, loop: self)
        try watched.start(onRead)
        return watched
    }
}
