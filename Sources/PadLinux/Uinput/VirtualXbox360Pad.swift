import CPadLinux
import Glibc
public import Logging
public import PadCore

/// A uinput pad that looks exactly like xpad's wired Xbox 360 pad (045e:028e): same name, keys, axes, ranges and
/// force-feedback capabilities, so SDL's controller DB maps it as "X360 Controller" and games see a familiar pad.
///
/// Force feedback: uinput hands uploads, erases and play/stop to the owner; `UinputForceFeedback` answers them and
/// this pad calls `onFeedback(.rumble(...))` whenever the combined motor output changes.
public final class VirtualXbox360Pad: VirtualPad {
    public var kind: VirtualPadKind { .xbox360 }

    static let defaultName = "Microsoft X-Box 360 pad"
    /// Buttons an Xbox 360 pad does not have (paddles, misc1, touchpad click): checked with one mask per apply.
    static let buttonsWithoutKeys = ButtonSet(Button.allCases.filter { XboxPadState.key(for: $0) == nil })

    private var device: UinputDevice?
    private let devicePath: String
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let onFeedback: (FeedbackEvent) -> Void
    private var deviceWatch: LoopWatch?
    private var forceFeedback: UinputForceFeedback?
    private var encoder = XboxPadFrameEncoder()
    private var reportedDroppedButtons = false

    /// Creates the device (fails with an actionable `DeviceAccessError` when /dev/uinput is missing or not
    /// writable). `onReady` runs on the loop once the event node exists, with its "/dev/input/eventN" path.
    /// `physicalPath`: the pad's `phys` (none by default, as xpad's own pads have a USB path there).
    public static func create(
        name: String?, physicalPath: String? = nil, loop: DeviceEventLoop, logger: Logger,
        onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) -> VirtualXbox360Pad {
        try create(name: name, physicalPath: physicalPath, devicePath: "/dev/uinput", loop: loop, logger: logger,
                   onFeedback: onFeedback, onReady: onReady)
    }

    static func create(
        name: String?, physicalPath: String? = nil, devicePath: StaticString, loop: DeviceEventLoop, logger: Logger,
        onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) -> VirtualXbox360Pad {
        let device = try UinputDevice(path: devicePath)
        if let physicalPath { try device.setPhysicalPath(physicalPath) }
        try device.enableEventType(EV_KEY)
        for key in XboxPadState.keys { try device.enableKey(key) }
        try device.enableEventType(EV_ABS)
        for stick in [ABS_X, ABS_Y, ABS_RX, ABS_RY] {
            try device.enableAxis(stick, minimum: -32768, maximum: 32767, fuzz: 16, flat: 128)
        }
        try device.enableAxis(ABS_Z, minimum: 0, maximum: 255)
        try device.enableAxis(ABS_RZ, minimum: 0, maximum: 255)
        try device.enableAxis(ABS_HAT0X, minimum: -1, maximum: 1)
        try device.enableAxis(ABS_HAT0Y, minimum: -1, maximum: 1)
        try device.enableEventType(EV_FF)
        for effect in [FF_RUMBLE, FF_PERIODIC, FF_SINE, FF_TRIANGLE, FF_SQUARE, FF_GAIN] {
            try device.enableForceFeedback(effect)
        }
        try device.setUp(
            name: name ?? defaultName, bus: UInt16(BUS_USB), vendor: 0x045E, product: 0x028E, version: 0x0114,
            effectSlots: UInt32(ForceFeedbackMixer.effectSlots))
        try device.create()
        let systemName = try device.systemName()
        let pad = VirtualXbox360Pad(device: device, loop: loop, logger: logger, onFeedback: onFeedback)
        try pad.startServicing()

        // UI_DEV_CREATE registers the input device and its evdev handler synchronously, so the node exists now;
        // report it from the loop so the caller holds the pad before hearing about it.
        let sysfsPath = "/sys/devices/virtual/input/\(systemName)"
        let eventNodes = SysfsInputDevices.eventNodes(ofInputDevice: sysfsPath)
        logger.info("created virtual Xbox 360 pad", metadata: [
            "event": "virtualPadCreated", "sysfs": "\(sysfsPath)", "nodes": "\(eventNodes.joined(separator: ","))",
        ])
        loop.deferWork {
            onReady(VirtualPadNodes(eventNodes: eventNodes, hidrawNode: nil, sysfsPath: sysfsPath))
        }
        return pad
    }

    private init(device: consuming UinputDevice, loop: DeviceEventLoop, logger: Logger,
                 onFeedback: @escaping (FeedbackEvent) -> Void)
    {
        devicePath = "\(device.path)"
        self.device = consume device
        self.loop = loop
        self.logger = logger
        self.onFeedback = onFeedback
    }

    private func startServicing() throws(DeviceAccessError) {
        guard let descriptor = device?.descriptorForPolling else { return }
        // unowned, not weak: close() (which deinit calls) ends the watch and the timer first, and a weak reference
        // would give the pad a side table, slowing every retain and release of it, once per forwarded frame.
        deviceWatch = try loop.makeWatch(descriptor, path: devicePath) { [unowned self] _ throws(DeviceAccessError) in
            try self.serviceRequests()
        }
        let onFeedback = onFeedback
        forceFeedback = try UinputForceFeedback(loop: loop, logger: logger) { rumble in onFeedback(.rumble(rumble)) }
    }

    public func apply(_ snapshot: PadSnapshot) throws(DeviceAccessError) {
        if !reportedDroppedButtons, snapshot.buttons.rawValue & Self.buttonsWithoutKeys.rawValue != 0 {
            let dropped = snapshot.buttons.pressed.filter { XboxPadState.key(for: $0) == nil }
            if !dropped.isEmpty {
                reportedDroppedButtons = true
                logger.debug("an Xbox 360 pad has no such buttons; dropping them", metadata: [
                    "buttons": "\(dropped.map(\.rawValue).joined(separator: ","))",
                ])
            }
        }
        try show(snapshot)
    }

    public func close() {
        guard device != nil else { return }
        do {
            try show(.neutral)
        } catch {
            logger.debug("could not release the Xbox 360 pad's inputs before closing", metadata: ["error": "\(error)"])
        }
        deviceWatch?.cancel()
        deviceWatch = nil
        forceFeedback?.close()  // a motor still running is reported off
        forceFeedback = nil
        device.take()?.close()
    }

    deinit { close() }

    // MARK: - Input

    /// Writes what changed since the last frame, and SYN_REPORT, in one write(2); nothing when nothing changed.
    private func show(_ snapshot: PadSnapshot) throws(DeviceAccessError) {
        guard device != nil else { return }
        let failure: DeviceAccessError? = withUnsafeTemporaryAllocation(
            byteCount: XboxPadFrameEncoder.maximumFrameBytes, alignment: MemoryLayout<input_event>.alignment
        ) { buffer in
            let count = encoder.encode(snapshot, into: buffer)
            guard count > 0 else { return nil }
            do throws(DeviceAccessError) {
                try device?.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                return nil
            } catch {
                encoder.forgetShown()
                return error
            }
        }
        if let failure { throw failure }
    }

    // MARK: - Force feedback

    private func serviceRequests() throws(DeviceAccessError) {
        guard let events = try device?.readEvents(), !events.isEmpty, let forceFeedback else { return }
        try device?.serviceForceFeedback(events, with: forceFeedback)
    }
}

/// Encodes snapshots as the frames an Xbox 360 pad shows on evdev: the key and axis events that changed since the
/// last frame, then SYN_REPORT, as `struct input_event`s laid out for one write(2) to uinput. No heap allocation.
public struct XboxPadFrameEncoder: Sendable {
    /// The most a frame takes: every key and axis changed, plus the SYN_REPORT.
    public static let maximumFrameBytes = (XboxPadState.keys.count + XboxPadState.axisCodes.count + 1)
        * MemoryLayout<input_event>.stride

    /// What the pad shows as of the last encoded frame; nil when unknown (after a failed write).
    private var shown: XboxPadState? = .neutral

    public init() {}

    /// Writes the frame that turns what the pad shows into `snapshot` into `buffer` (at least `maximumFrameBytes`)
    /// and returns its size in bytes: 0 when nothing changed (nothing to write). The frame counts as shown from
    /// now on; when writing it fails, call `forgetShown()`.
    public mutating func encode(_ snapshot: PadSnapshot, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        precondition(buffer.count >= Self.maximumFrameBytes, "a frame buffer needs maximumFrameBytes")
        let state = XboxPadState(snapshot)
        // Unknown: compared with its opposite, every key and axis is part of the frame.
        let previous = shown ?? XboxPadState(
            keyBits: ~state.keyBits & XboxPadState.allKeyBits, axisValues: SIMD8(repeating: .min))
        let count = state.writeEvents(changedFrom: previous, into: buffer)
        shown = state
        return count * MemoryLayout<input_event>.stride
    }

    /// After a failed write: the next frame carries every key and axis (the kernel drops repeated values).
    public mutating func forgetShown() {
        shown = nil
    }
}

/// What an Xbox 360 pad shows on evdev: 11 keys, four sticks, two 8-bit triggers, a hat. Inline, no heap storage.
struct XboxPadState: Hashable, Sendable {
    static let keys: [Int32] = [
        BTN_A, BTN_B, BTN_X, BTN_Y, BTN_TL, BTN_TR, BTN_SELECT, BTN_START, BTN_MODE, BTN_THUMBL, BTN_THUMBR,
    ]
    /// The button behind each of `keys`, in the same order.
    static let keyButtons: [Button] = [
        .a, .b, .x, .y, .leftshoulder, .rightshoulder, .back, .start, .guide, .leftstick, .rightstick,
    ]

    static func key(for button: Button) -> Int32? {
        switch button {
        case .a: BTN_A
        case .b: BTN_B
        case .x: BTN_X
        case .y: BTN_Y
        case .leftshoulder: BTN_TL
        case .rightshoulder: BTN_TR
        case .back: BTN_SELECT
        case .start: BTN_START
        case .guide: BTN_MODE
        case .leftstick: BTN_THUMBL
        case .rightstick: BTN_THUMBR
        case .dpup, .dpdown, .dpleft, .dpright: nil  // the hat
        case .misc1, .paddle1, .paddle2, .paddle3, .paddle4, .touchpad: nil
        }
    }

    /// Bit i set: `keys[i]` pressed.
    var keyBits: UInt16
    /// ABS_X, ABS_Y, ABS_RX, ABS_RY, ABS_Z, ABS_RZ, ABS_HAT0X, ABS_HAT0Y.
    var axisValues: SIMD8<Int32>
    static let allKeyBits: UInt16 = (1 << 11) - 1

    /// Key code → pressed, in `keys` order.
    var keys: [Bool] { Self.keys.indices.map(isPressed(keyAt:)) }
    /// `axisValues` as an array, in `axisCodes` order.
    var axes: [Int32] { (0..<8).map { axisValues[$0] } }
    static let axisCodes: [Int32] = [ABS_X, ABS_Y, ABS_RX, ABS_RY, ABS_Z, ABS_RZ, ABS_HAT0X, ABS_HAT0Y]

    static let neutral = XboxPadState(keyBits: 0, axisValues: .zero)

    init(keyBits: UInt16, axisValues: SIMD8<Int32>) {
        self.keyBits = keyBits
        self.axisValues = axisValues
    }

    init(_ snapshot: PadSnapshot) {
        let buttons = snapshot.buttons
        var bits: UInt16 = 0
        for (index, button) in Self.keyButtons.enumerated() where buttons.contains(button) { bits |= 1 << index }
        keyBits = bits
        let hatX = (buttons.contains(.dpright) ? 1 : 0) - (buttons.contains(.dpleft) ? 1 : 0)
        let hatY = (buttons.contains(.dpdown) ? 1 : 0) - (buttons.contains(.dpup) ? 1 : 0)
        axisValues = SIMD8(
            Int32(snapshot.leftX), Int32(snapshot.leftY), Int32(snapshot.rightX), Int32(snapshot.rightY),
            Self.triggerByte(snapshot.leftTrigger), Self.triggerByte(snapshot.rightTrigger),
            Int32(hatX), Int32(hatY))
    }

    /// Whether `keys[index]` is pressed.
    func isPressed(keyAt index: Int) -> Bool { keyBits & (1 << index) != 0 }

    /// 0...32767 → 0...255, rounded to nearest.
    static func triggerByte(_ value: Int16) -> Int32 {
        (Int32(max(value, 0)) * 255 + 16383) / 32767
    }

    /// The key and axis events that turn `previous` into this state (no SYN).
    func events(changedFrom previous: XboxPadState) -> [input_event] {
        withUnsafeTemporaryAllocation(
            byteCount: XboxPadFrameEncoder.maximumFrameBytes, alignment: MemoryLayout<input_event>.alignment
        ) { buffer in
            let count = writeEvents(changedFrom: previous, into: buffer)
            let events = buffer.bindMemory(to: input_event.self)
            return Array(events.prefix(max(0, count - 1)))
        }
    }

    /// Writes the key and axis events that turn `previous` into this state, then SYN_REPORT, into `buffer` (at
    /// least `XboxPadFrameEncoder.maximumFrameBytes`); returns the number of events, 0 (no SYN) when nothing
    /// changed.
    func writeEvents(changedFrom previous: XboxPadState, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var count = 0
        func append(_ type: Int32, _ code: Int32, _ value: Int32) {
            buffer.storeBytes(
                of: input_event(time: timeval(), type: UInt16(type), code: UInt16(code), value: value),
                toByteOffset: count * MemoryLayout<input_event>.stride, as: input_event.self)
            count += 1
        }
        var changedKeys = (keyBits ^ previous.keyBits) & Self.allKeyBits
        while changedKeys != 0 {
            let index = changedKeys.trailingZeroBitCount
            changedKeys &= changedKeys - 1
            append(EV_KEY, Self.keys[index], isPressed(keyAt: index) ? 1 : 0)
        }
        let changedAxes = axisValues .!= previous.axisValues
        if any(changedAxes) {
            for index in 0..<8 where changedAxes[index] {
                append(EV_ABS, Self.axisCodes[index], axisValues[index])
            }
        }
        guard count > 0 else { return 0 }
        append(EV_SYN, SYN_REPORT, 0)
        return count
    }
}
