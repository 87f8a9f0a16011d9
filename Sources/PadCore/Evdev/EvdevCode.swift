/// The kernel's input event codes that padbridge's pure core needs, with the values of the UAPI header
/// `linux/input-event-codes.h` (and `linux/input.h` for force-feedback effect types). The core cannot import
/// kernel headers, so they are named here once; the names are the kernel's.
public enum EvdevCode {
    // MARK: Event types (EV_*)
    public static let evSyn: UInt16 = 0x00
    public static let evKey: UInt16 = 0x01
    public static let evRel: UInt16 = 0x02
    public static let evAbs: UInt16 = 0x03
    public static let evMsc: UInt16 = 0x04
    public static let evFF: UInt16 = 0x15

    // MARK: Synchronization (EV_SYN)
    public static let synReport: UInt16 = 0
    public static let synDropped: UInt16 = 3

    // MARK: Keys and buttons (EV_KEY)
    public static let btnMouseLeft: UInt16 = 0x110  // BTN_LEFT
    /// BTN_JOYSTICK (= BTN_TRIGGER): first code of the joystick range 0x120...0x12f.
    public static let btnJoystick: UInt16 = 0x120
    public static let btnJoystickLast: UInt16 = 0x12f  // BTN_DEAD
    /// BTN_GAMEPAD (= BTN_SOUTH): first code of the gamepad range 0x130...0x13e.
    public static let btnGamepad: UInt16 = 0x130
    /// BTN_SOUTH, which the header also calls BTN_A.
    /// KEY_RECORD: xpad reports the share button of Xbox Series pads with it.
    public static let keyRecord: UInt16 = 0xA7
    public static let btnSouth: UInt16 = 0x130
    /// BTN_EAST, also BTN_B.
    public static let btnEast: UInt16 = 0x131
    public static let btnC: UInt16 = 0x132
    /// BTN_NORTH, which the header also calls BTN_X (xpad reports the Xbox X button with it).
    public static let btnNorth: UInt16 = 0x133
    /// BTN_WEST, which the header also calls BTN_Y (xpad reports the Xbox Y button with it).
    public static let btnWest: UInt16 = 0x134
    public static let btnZ: UInt16 = 0x135
    public static let btnTL: UInt16 = 0x136
    public static let btnTR: UInt16 = 0x137
    public static let btnTL2: UInt16 = 0x138
    public static let btnTR2: UInt16 = 0x139
    public static let btnSelect: UInt16 = 0x13a
    public static let btnStart: UInt16 = 0x13b
    public static let btnMode: UInt16 = 0x13c
    public static let btnThumbL: UInt16 = 0x13d
    public static let btnThumbR: UInt16 = 0x13e
    /// The last code of the gamepad range.
    public static let btnGamepadLast: UInt16 = 0x13e
    public static let btnToolFinger: UInt16 = 0x145
    public static let btnTouch: UInt16 = 0x14a
    public static let btnDpadUp: UInt16 = 0x220
    public static let btnDpadDown: UInt16 = 0x221
    public static let btnDpadLeft: UInt16 = 0x222
    public static let btnDpadRight: UInt16 = 0x223
    /// BTN_TRIGGER_HAPPY1; the range runs to BTN_TRIGGER_HAPPY40 (0x2e7).
    public static let btnTriggerHappy1: UInt16 = 0x2c0
    public static let btnTriggerHappy2: UInt16 = 0x2c1
    public static let btnTriggerHappy3: UInt16 = 0x2c2
    public static let btnTriggerHappy4: UInt16 = 0x2c3
    public static let btnTriggerHappy40: UInt16 = 0x2e7
    public static let keyMax: UInt16 = 0x2ff

    // MARK: Absolute axes (EV_ABS)
    public static let absX: UInt16 = 0x00
    public static let absY: UInt16 = 0x01
    public static let absZ: UInt16 = 0x02
    public static let absRX: UInt16 = 0x03
    public static let absRY: UInt16 = 0x04
    public static let absRZ: UInt16 = 0x05
    public static let absGas: UInt16 = 0x09
    public static let absBrake: UInt16 = 0x0a
    public static let absHat0X: UInt16 = 0x10
    public static let absHat0Y: UInt16 = 0x11
    public static let absHat2X: UInt16 = 0x14
    public static let absHat2Y: UInt16 = 0x15
    public static let absHat3Y: UInt16 = 0x17
    public static let absMTSlot: UInt16 = 0x2f
    public static let absMTPositionX: UInt16 = 0x35
    public static let absMTPositionY: UInt16 = 0x36
    public static let absMTTrackingID: UInt16 = 0x39
    public static let absMax: UInt16 = 0x3f

    // MARK: Miscellaneous (EV_MSC)
    public static let mscTimestamp: UInt16 = 0x05

    // MARK: Force feedback (EV_FF)
    public static let ffRumble: UInt16 = 0x50
    public static let ffPeriodic: UInt16 = 0x51
    public static let ffGain: UInt16 = 0x60

    // MARK: Device properties (INPUT_PROP_*)
    public static let inputPropPointer: UInt16 = 0x00
    public static let inputPropDirect: UInt16 = 0x01
    public static let inputPropButtonpad: UInt16 = 0x02
    public static let inputPropAccelerometer: UInt16 = 0x06
}
