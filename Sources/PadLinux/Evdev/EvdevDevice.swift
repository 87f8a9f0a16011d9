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

/// What one drain of an event node gave.
public enum EvdevReadResult: Sendable, Hashable {
    /// Every event available now, in order (empty when none were).
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
    }

    /// Frees the libevdev handle and closes the descriptor (releasing a grab).
    public consuming func close() {}

    deinit {
        libevdev_free(handle)
        try? descriptor.close()
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

    /// The value libevdev holds for `code` (keys 0/1, axes, switches, LEDs): the state as of the last event handed
    /// on, kept right through a resync. Nil if the device has no such code.
    public func currentValue(type: UInt16, code: UInt16) -> Int32? {
        var value: Int32 = 0
        return libevdev_fetch_event_value(handle, UInt32(type), UInt32(code), &value) != 0 ? value : nil
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

    /// Drains every event available now (never blocks). After SYN_DROPPED, switches to libevdev's sync mode until it
    /// has handed on its whole catch-up (marked `isResync`), then reads on normally.
    ///
    /// Events read before the node vanished come first as `.events`; the next call then says `.unplugged`.
    public func readAvailable() throws(DeviceAccessError) -> EvdevReadResult {
        var readings: [EvdevReading] = []
        return try readAvailable(reusing: &readings)
    }

    /// `readAvailable()` into `readings` (emptied first, its capacity kept): an owner that reads often keeps one
    /// array and allocates nothing per read once it is large enough.
    public func readAvailable(reusing readings: inout [EvdevReading]) throws(DeviceAccessError) -> EvdevReadResult {
        readings.removeAll(keepingCapacity: true)
        var flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
        var event = input_event()
        while true {
            let status = libevdev_next_event(handle, flags, &event)
            let reading = EvdevEvent(
                seconds: Int64(event.time.tv_sec), microseconds: Int32(truncatingIfNeeded: event.time.tv_usec),
                type: event.type, code: event.code, value: event.value)
            switch status {
            case Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue):
                readings.append(EvdevReading(reading, isResync: flags == LIBEVDEV_READ_FLAG_SYNC.rawValue))
            case Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue):
                // In normal mode this is the SYN_DROPPED event; in sync mode, one event of the catch-up.
                readings.append(EvdevReading(reading, isResync: true))
                flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
            case -EAGAIN:
                // In sync mode: the catch-up is complete; read on normally. In normal mode: drained.
                if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
                    flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
                    continue
                }
                return .events(readings)
            case -EINTR:
                continue
            case -ENODEV:
                return readings.isEmpty ? .unplugged : .events(readings)
            default:
                let failure = Errno(rawValue: -status)
                if !readings.isEmpty { return .events(readings) }
                throw .reading(path, failure)
            }
        }
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
    private var token: DeviceEventLoop.WatchToken?
    /// Reused by every read (its storage is kept when the handler does not hold on to the readings).
    private var readings: [EvdevReading] = []

    fileprivate init(device: consuming EvdevDevice, loop: DeviceEventLoop) {
        path = device.path
        self.device = consume device
        self.loop = loop
    }

    fileprivate func start(_ onRead: @escaping (EvdevReadResult) -> Void) throws(DeviceAccessError) {
        guard let descriptor = device?.descriptorForPolling else { return }
        token = try loop.watch(descriptor, path: path) { [weak self] _ throws(DeviceAccessError) in
            guard let self, let result = try self.device?.readAvailable(reusing: &self.readings) else { return }
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
    public var isWatching: Bool { token != nil }

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
        if let token { loop.removeWatch(token) }
        token = nil
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
