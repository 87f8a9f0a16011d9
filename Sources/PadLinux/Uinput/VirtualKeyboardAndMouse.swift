import CPadLinux
import Glibc
public import Logging
public import PadCore

/// The virtual keyboard and mouse a remap profile drives (`key:`, `mouse:`, `scroll:` targets, sticks, gyro and
/// flick stick on the mouse): one uinput device each, made only when the profile needs it.
///
/// The keyboard has every keyboard key (`KeyboardKey.isKeyboardCode`) and nothing else, so desktops take it for a
/// keyboard; the mouse has the five buttons, `REL_X`/`REL_Y`, and the wheels in notches and in high-resolution
/// units (`REL_WHEEL_HI_RES`, 120 per notch), so libinput scrolls smoothly where it can and by notches elsewhere.
/// State-based for keys and buttons (`show` releases whatever a frame does not hold); movement is given once.
/// Closing releases everything before the devices go; if the process dies, the kernel destroys them with its
/// descriptors and desktops (libinput) let go of what they held. Loop-confined.
public final class VirtualKeyboardAndMouse {
    public static let keyboardName = "padbridge virtual keyboard"
    public static let mouseName = "padbridge virtual mouse"

    private var keyboard: UinputDevice?
    private var mouse: UinputDevice?
    /// The event nodes ("/dev/input/eventN"), once made.
    public let keyboardNode: String?
    public let mouseNode: String?
    private let logger: Logger
    private var shown = EvdevKeyBits()
    /// Wheel units given in high resolution but not yet as a whole notch (`REL_WHEEL` counts notches).
    private var wheelRemainder: Int32 = 0
    private var horizontalWheelRemainder: Int32 = 0
    /// Reused for every frame: no allocation once they have grown.
    private var events: [input_event] = []
    private var modifiersDown: [UInt16] = [], othersDown: [UInt16] = [], modifiersUp: [UInt16] = [], othersUp: [UInt16] = []
    private var mouseButtons: [(UInt16, Int32)] = []

    /// Makes the keyboard and/or the mouse. `physicalPath` is their `phys` (the bridge's: its output prefix marks
    /// them as padbridge's own, never taken as input). Fails with an actionable error without `/dev/uinput` access.
    public init(keyboard makeKeyboard: Bool, mouse makeMouse: Bool, physicalPath: String, logger: Logger) throws(DeviceAccessError) {
        self.logger = logger
        var keyboardNode: String?
        var mouseNode: String?
        if makeKeyboard {
            let device = try UinputDevice()
            try device.setPhysicalPath(physicalPath + "/keyboard")
            try device.enableEventType(EV_KEY)
            for code in UInt16(1)...0x2bf where KeyboardKey.isKeyboardCode(code) { try device.enableKey(Int32(code)) }
            try device.setUp(name: Self.keyboardName, bus: UInt16(BUS_VIRTUAL), vendor: 0, product: 0, version: 1, effectSlots: 0)
            try device.create()
            keyboardNode = SysfsInputDevices.eventNodes(ofInputDevice: "/sys/devices/virtual/input/\(try device.systemName())").first
            keyboard = consume device
        }
        if makeMouse {
            let device = try UinputDevice()
            try device.setPhysicalPath(physicalPath + "/mouse")
            try device.enableEventType(EV_KEY)
            for button in MouseButton.allCases { try device.enableKey(Int32(button.code)) }
            try device.enableEventType(EV_REL)
            for axis in [REL_X, REL_Y, REL_WHEEL, REL_HWHEEL, REL_WHEEL_HI_RES, REL_HWHEEL_HI_RES] {
                try device.enableRelativeAxis(axis)
            }
            try device.setUp(name: Self.mouseName, bus: UInt16(BUS_VIRTUAL), vendor: 0, product: 0, version: 1, effectSlots: 0)
            try device.create()
            mouseNode = SysfsInputDevices.eventNodes(ofInputDevice: "/sys/devices/virtual/input/\(try device.systemName())").first
            mouse = consume device
        }
        self.keyboardNode = keyboardNode
        self.mouseNode = mouseNode
        logger.info("created a virtual keyboard and mouse", metadata: [
            "keyboard": "\(keyboardNode ?? "-")", "mouse": "\(mouseNode ?? "-")",
        ])
    }

    /// Shows `frame`: keys and buttons pressed and released to match it, then its movement. Modifier keys go down
    /// in a report before the other keys of a frame and come up in a report after them, so a program sees ctrl
    /// held before c is pressed, and c let go before ctrl.
    public func show(_ frame: DesktopFrame) throws(DeviceAccessError) {
        let previous = shown
        shown = frame.held
        modifiersDown.removeAll(keepingCapacity: true)
        othersDown.removeAll(keepingCapacity: true)
        modifiersUp.removeAll(keepingCapacity: true)
        othersUp.removeAll(keepingCapacity: true)
        mouseButtons.removeAll(keepingCapacity: true)
        frame.held.forEachDifference(from: previous) { code, pressed in
            if KeyboardKey.isKeyboardCode(code) {
                switch (pressed, KeyboardKey.modifierCodes.contains(code)) {
                case (true, true): modifiersDown.append(code)
                case (true, false): othersDown.append(code)
                case (false, true): modifiersUp.append(code)
                case (false, false): othersUp.append(code)
                }
            } else {
                mouseButtons.append((code, pressed ? 1 : 0))
            }
        }
        if keyboard != nil {
            // Releases first (others, then modifiers), then presses (modifiers, then others): each group a report.
            try sendKeys(othersUp, value: 0)
            try sendKeys(modifiersUp, value: 0)
            try sendKeys(modifiersDown, value: 1)
            try sendKeys(othersDown, value: 1)
        }
        guard mouse != nil else { return }
        events.removeAll(keepingCapacity: true)
        for (code, value) in mouseButtons { append(EV_KEY, Int32(code), value) }
        if frame.pointerX != 0 { append(EV_REL, REL_X, frame.pointerX) }
        if frame.pointerY != 0 { append(EV_REL, REL_Y, frame.pointerY) }
        if frame.wheel != 0 {
            append(EV_REL, REL_WHEEL_HI_RES, frame.wheel)
            let notches = Self.wholeNotches(adding: frame.wheel, to: &wheelRemainder)
            if notches != 0 { append(EV_REL, REL_WHEEL, notches) }
        }
        if frame.horizontalWheel != 0 {
            append(EV_REL, REL_HWHEEL_HI_RES, frame.horizontalWheel)
            let notches = Self.wholeNotches(adding: frame.horizontalWheel, to: &horizontalWheelRemainder)
            if notches != 0 { append(EV_REL, REL_HWHEEL, notches) }
        }
        if !events.isEmpty { try send(on: .mouse) }
    }

    /// Every key and button up (the bridge ends, or its pad went away).
    public func releaseAll() {
        do {
            try show(DesktopFrame())
        } catch {
            logger.warning("could not release the virtual keyboard and mouse: \(error)")
        }
    }

    /// Releases everything and destroys both devices. Idempotent.
    public func close() {
        releaseAll()
        keyboard.take()?.close()
        mouse.take()?.close()
    }

    deinit { close() }

    /// The whole notches in `remainder + units`, taken out of it (as hid-input turns high-resolution wheels into
    /// `REL_WHEEL`: a notch each time 120 units add up in one direction).
    static func wholeNotches(adding units: Int32, to remainder: inout Int32) -> Int32 {
        if (remainder < 0) != (units < 0) && remainder != 0 { remainder = 0 }  // the direction changed
        remainder += units
        let notches = remainder / DesktopFrame.unitsPerNotch
        remainder -= notches * DesktopFrame.unitsPerNotch
        return notches
    }

    private enum Which { case keyboard, mouse }

    /// One report with `codes` set to `value`; nothing when `codes` is empty.
    private func sendKeys(_ codes: [UInt16], value: Int32) throws(DeviceAccessError) {
        guard !codes.isEmpty else { return }
        events.removeAll(keepingCapacity: true)
        for code in codes { append(EV_KEY, Int32(code), value) }
        try send(on: .keyboard)
    }

    private func append(_ type: Int32, _ code: Int32, _ value: Int32) {
        var event = input_event()
        event.type = UInt16(type)
        event.code = UInt16(code)
        event.value = value
        events.append(event)
    }

    /// Ends `events` with SYN_REPORT and writes them in one write(2).
    private func send(on which: Which) throws(DeviceAccessError) {
        append(EV_SYN, SYN_REPORT, 0)
        let result: Result<Void, DeviceAccessError> = events.withUnsafeBytes { bytes in
            Result { () throws(DeviceAccessError) in
                switch which {
                case .keyboard: try keyboard?.write(bytes)
                case .mouse: try mouse?.write(bytes)
                }
            }
        }
        try result.get()
    }
}
