/// The capability bitmaps of one inputN device, read from its uevent properties (`EV`, `KEY`, `ABS`, `FF`,
/// `PROP`, `MSC`), plus the classification that udev's `input_id` builtin would store as `ID_INPUT_*`.
/// Missing or malformed properties are empty bitmaps.
public struct InputDeviceCapabilities: Sendable, Hashable {
    public var events: InputCapabilityBitmap
    public var keys: InputCapabilityBitmap
    public var absolutes: InputCapabilityBitmap
    public var forceFeedback: InputCapabilityBitmap
    public var properties: InputCapabilityBitmap
    public var miscellaneous: InputCapabilityBitmap
    public var relatives: InputCapabilityBitmap

    public init(
        events: InputCapabilityBitmap = .init(), keys: InputCapabilityBitmap = .init(),
        absolutes: InputCapabilityBitmap = .init(), forceFeedback: InputCapabilityBitmap = .init(),
        properties: InputCapabilityBitmap = .init(), miscellaneous: InputCapabilityBitmap = .init(),
        relatives: InputCapabilityBitmap = .init()
    ) {
        self.events = events
        self.keys = keys
        self.absolutes = absolutes
        self.forceFeedback = forceFeedback
        self.properties = properties
        self.miscellaneous = miscellaneous
        self.relatives = relatives
    }

    /// Reads the bitmaps from an inputN device's udev properties.
    public init(udevProperties: [String: String]) {
        self.init(
            events: InputCapabilityBitmap(kernelText: udevProperties["EV"]),
            keys: InputCapabilityBitmap(kernelText: udevProperties["KEY"]),
            absolutes: InputCapabilityBitmap(kernelText: udevProperties["ABS"]),
            forceFeedback: InputCapabilityBitmap(kernelText: udevProperties["FF"]),
            properties: InputCapabilityBitmap(kernelText: udevProperties["PROP"]),
            miscellaneous: InputCapabilityBitmap(kernelText: udevProperties["MSC"]),
            relatives: InputCapabilityBitmap(kernelText: udevProperties["REL"]))
    }

    /// INPUT_PROP_ACCELEROMETER: a motion sensor (a pad's IMU node, or a laptop's accelerometer).
    public var isAccelerometer: Bool { properties.contains(EvdevCode.inputPropAccelerometer) }

    /// A gamepad or joystick: a key in the gamepad range (BTN_SOUTH...BTN_THUMBR); or a key in the joystick range
    /// (BTN_TRIGGER...BTN_DEAD), or a BTN_TRIGGER_HAPPY key, together with ABS_X and ABS_Y.
    public var isJoystick: Bool {
        if keys.containsAny(in: EvdevCode.btnGamepad...EvdevCode.btnGamepadLast) { return true }
        let hasStick = absolutes.contains(EvdevCode.absX) && absolutes.contains(EvdevCode.absY)
        return hasStick
            && (keys.containsAny(in: EvdevCode.btnJoystick...EvdevCode.btnJoystickLast)
                || keys.containsAny(in: EvdevCode.btnTriggerHappy1...EvdevCode.btnTriggerHappy40))
    }

    /// A keyboard as udev's `input_id` builtin judges one (ID_INPUT_KEYBOARD): every key from KEY_ESC to KEY_D.
    public var isKeyboard: Bool { (1...32).allSatisfy { keys.contains(UInt16($0)) } }

    /// A mouse or another relative pointer (ID_INPUT_MOUSE): REL_X and REL_Y, or any mouse button with relative axes.
    public var isMouse: Bool {
        let relativeXY = relatives.contains(0x00) && relatives.contains(0x01)
        let mouseButton = keys.containsAny(in: EvdevCode.btnMouseLeft...(EvdevCode.btnMouseLeft + 7))
        return relativeXY || (mouseButton && !relatives.isEmpty)
    }

    /// Multitouch positions with BTN_TOUCH.
    public var isMultitouchSurface: Bool {
        absolutes.contains(EvdevCode.absMTPositionX) && keys.contains(EvdevCode.btnTouch)
    }
}

extension EvdevNodeRole {
    /// What a node carries, judged from its inputN device's bitmaps and, where udevd has run, its `ID_INPUT_*`
    /// properties (`udevProperties` may mix the node's and its inputN device's; a property counts when it is "1"):
    ///
    /// 1. `.motion` when INPUT_PROP_ACCELEROMETER is set or ID_INPUT_ACCELEROMETER=1;
    /// 2. `.pad` when it is a joystick (`InputDeviceCapabilities.isJoystick`) or ID_INPUT_JOYSTICK=1;
    /// 3. `.touchpad` when it has multitouch positions and BTN_TOUCH, or ID_INPUT_TOUCHPAD=1;
    /// 4. `.other` otherwise.
    public init(capabilities: InputDeviceCapabilities, udevProperties: [String: String] = [:]) {
        func flag(_ name: String) -> Bool { udevProperties[name] == "1" }
        if capabilities.isAccelerometer || flag("ID_INPUT_ACCELEROMETER") {
            self = .motion
        } else if capabilities.isJoystick || flag("ID_INPUT_JOYSTICK") {
            self = .pad
        } else if capabilities.isMultitouchSurface || flag("ID_INPUT_TOUCHPAD") {
            self = .touchpad
        } else {
            self = .other
        }
    }
}
