extension EvdevLayout {
    /// The layout of a known kind's pad node as its usual kernel driver reports it (for Xbox One/Series pads:
    /// xpad over USB; see `builtIn(for:bus:)` for Bluetooth); `nil` for `.generic`, whose layout comes from
    /// SDL's mapping or `linuxGamepadConvention`.
    public static func builtIn(for kind: ControllerKind) -> EvdevLayout? {
        switch kind {
        case .dualSense, .dualSenseEdge, .dualShock4: playStation
        case .xbox360, .xboxOne: xpad
        case .switchPro: switchPro
        // hid-steam's Deck node (Linux 6.3 and later) is read by SDL's mapping until padbridge reads the Deck itself.
        case .steamDeck, .generic: nil
        }
    }

    /// As `builtIn(for:)`, except that Xbox One/Series pads on Bluetooth (no xpad there: hid-generic with
    /// hid-microsoft) get `xboxBluetooth`, whose right stick is ABS_Z/ABS_RZ and triggers ABS_BRAKE/ABS_GAS.
    public static func builtIn(for kind: ControllerKind, bus: ControllerBus) -> EvdevLayout? {
        if kind == .xboxOne && bus == .bluetooth { return xboxBluetooth }
        return builtIn(for: kind)
    }

    /// hid-playstation (DualSense, DualSense Edge, DualShock 4; also hid-sony's older DualShock 4 mapping):
    /// BTN_SOUTH cross `a`, BTN_EAST circle `b`, BTN_NORTH triangle `y`, BTN_WEST square `x`; create/share `back`,
    /// options `start`, PS `guide`; sticks ABS_X/ABS_Y and ABS_RX/ABS_RY (0...255), triggers ABS_Z/ABS_RZ (0...255),
    /// d-pad on ABS_HAT0X/ABS_HAT0Y. BTN_TL2/BTN_TR2 are left out: the analog triggers already say it.
    public static let playStation = EvdevLayout(
        keys: [
            EvdevCode.btnSouth: .button(.a), EvdevCode.btnEast: .button(.b),
            EvdevCode.btnNorth: .button(.y), EvdevCode.btnWest: .button(.x),
            EvdevCode.btnTL: .button(.leftshoulder), EvdevCode.btnTR: .button(.rightshoulder),
            EvdevCode.btnSelect: .button(.back), EvdevCode.btnStart: .button(.start),
            EvdevCode.btnMode: .button(.guide),
            EvdevCode.btnThumbL: .button(.leftstick), EvdevCode.btnThumbR: .button(.rightstick),
        ],
        absolutes: sticksAndTriggers.merging(hatDpad) { first, _ in first })

    /// xpad (Xbox 360 and Xbox One/Series over USB). xpad reports the Xbox X button with BTN_X, which is
    /// BTN_NORTH (0x133), and Y with BTN_Y = BTN_WEST (0x134), the other way round from the positional
    /// convention: so 0x133 is `x` and 0x134 `y` here. Triggers ABS_Z/ABS_RZ (0...255; 0...1023 on the One),
    /// or BTN_TL2/BTN_TR2 on pads xpad maps with triggers as buttons; d-pad on ABS_HAT0X/Y, or as
    /// BTN_TRIGGER_HAPPY1...4 (left, right, up, down: xpad's order) on the wireless receiver and dance pads.
    public static let xpad = EvdevLayout(
        keys: xboxKeys.merging(
            [
                EvdevCode.btnTL2: .trigger(.lefttrigger), EvdevCode.btnTR2: .trigger(.righttrigger),
                EvdevCode.btnTriggerHappy1: .button(.dpleft), EvdevCode.btnTriggerHappy2: .button(.dpright),
                EvdevCode.btnTriggerHappy3: .button(.dpup), EvdevCode.btnTriggerHappy4: .button(.dpdown),
                EvdevCode.btnDpadUp: .button(.dpup), EvdevCode.btnDpadDown: .button(.dpdown),
                EvdevCode.btnDpadLeft: .button(.dpleft), EvdevCode.btnDpadRight: .button(.dpright),
            ]
        ) { first, _ in first },
        absolutes: sticksAndTriggers.merging(hatDpad) { first, _ in first })

    /// Xbox One/Series pads over Bluetooth (hid-generic's mapping of their HID descriptor, as SDL's database
    /// records it: `a:b0,b:b1,x:b3,y:b4,...,rightx:a2,righty:a3,righttrigger:a4,lefttrigger:a5`): buttons as xpad's,
    /// right stick ABS_Z/ABS_RZ, left trigger ABS_BRAKE, right trigger ABS_GAS (0...1023), d-pad on the hat.
    public static let xboxBluetooth = EvdevLayout(
        keys: xboxKeys,
        absolutes: [
            EvdevCode.absX: .axis(.leftx, inverted: false), EvdevCode.absY: .axis(.lefty, inverted: false),
            EvdevCode.absZ: .axis(.rightx, inverted: false), EvdevCode.absRZ: .axis(.righty, inverted: false),
            EvdevCode.absBrake: .axis(.lefttrigger, inverted: false),
            EvdevCode.absGas: .axis(.righttrigger, inverted: false),
        ].merging(hatDpad) { first, _ in first })

    /// hid-nintendo's Switch Pro Controller, mapped by position as the gamepad convention asks: Nintendo's B
    /// (BTN_SOUTH) is `a`, A (BTN_EAST) `b`, Y (BTN_WEST) `x`, X (BTN_NORTH) `y`; minus `back`, plus `start`,
    /// home `guide`, capture (BTN_Z) `misc1`. ZL/ZR are digital BTN_TL2/BTN_TR2, so they drive the triggers fully.
    /// D-pad as BTN_DPAD_* (or a hat, on drivers that report one). Motion on hid-nintendo's axes (`.nintendo`).
    public static let switchPro = EvdevLayout(
        keys: conventionKeys.merging(
            [
                EvdevCode.btnZ: .button(.misc1),
                EvdevCode.btnDpadUp: .button(.dpup), EvdevCode.btnDpadDown: .button(.dpdown),
                EvdevCode.btnDpadLeft: .button(.dpleft), EvdevCode.btnDpadRight: .button(.dpright),
            ]
        ) { first, _ in first },
        absolutes: [
            EvdevCode.absX: .axis(.leftx, inverted: false), EvdevCode.absY: .axis(.lefty, inverted: false),
            EvdevCode.absRX: .axis(.rightx, inverted: false), EvdevCode.absRY: .axis(.righty, inverted: false),
        ].merging(hatDpad) { first, _ in first },
        motionAxes: .nintendo)

    /// The kernel's gamepad convention (Documentation/input/gamepad.rst), for pads padbridge has no layout
    /// for and SDL has no mapping for: face buttons by position (BTN_SOUTH `a`, BTN_EAST `b`, BTN_WEST `x`,
    /// BTN_NORTH `y`), BTN_TL/BTN_TR shoulders, BTN_TL2/BTN_TR2 digital triggers, BTN_SELECT `back`, BTN_START
    /// `start`, BTN_MODE `guide`, BTN_THUMBL/R stick clicks, BTN_DPAD_* d-pad; ABS_X/ABS_Y and ABS_RX/ABS_RY
    /// sticks, ABS_HAT0X/Y d-pad. Analog lower triggers are ABS_HAT2Y (left) and ABS_HAT2X (right) in the
    /// convention (hid-steam uses them); most drivers use ABS_Z/ABS_RZ instead, so both are taken.
    public static let linuxGamepadConvention = EvdevLayout(
        keys: conventionKeys.merging(
            [
                EvdevCode.btnDpadUp: .button(.dpup), EvdevCode.btnDpadDown: .button(.dpdown),
                EvdevCode.btnDpadLeft: .button(.dpleft), EvdevCode.btnDpadRight: .button(.dpright),
            ]
        ) { first, _ in first },
        absolutes: sticksAndTriggers.merging(hatDpad) { first, _ in first }.merging(
            [
                EvdevCode.absHat2Y: .axis(.lefttrigger, inverted: false),
                EvdevCode.absHat2X: .axis(.righttrigger, inverted: false),
            ]
        ) { first, _ in first })

    // MARK: Shared parts

    private static let conventionKeys: [UInt16: EvdevKeyRole] = [
        EvdevCode.btnSouth: .button(.a), EvdevCode.btnEast: .button(.b),
        EvdevCode.btnWest: .button(.x), EvdevCode.btnNorth: .button(.y),
        EvdevCode.btnTL: .button(.leftshoulder), EvdevCode.btnTR: .button(.rightshoulder),
        EvdevCode.btnTL2: .trigger(.lefttrigger), EvdevCode.btnTR2: .trigger(.righttrigger),
        EvdevCode.btnSelect: .button(.back), EvdevCode.btnStart: .button(.start), EvdevCode.btnMode: .button(.guide),
        EvdevCode.btnThumbL: .button(.leftstick), EvdevCode.btnThumbR: .button(.rightstick),
    ]

    private static let xboxKeys: [UInt16: EvdevKeyRole] = [
        EvdevCode.btnSouth: .button(.a), EvdevCode.btnEast: .button(.b),
        EvdevCode.btnNorth: .button(.x), EvdevCode.btnWest: .button(.y),
        EvdevCode.btnTL: .button(.leftshoulder), EvdevCode.btnTR: .button(.rightshoulder),
        EvdevCode.btnSelect: .button(.back), EvdevCode.btnStart: .button(.start), EvdevCode.btnMode: .button(.guide),
        EvdevCode.btnThumbL: .button(.leftstick), EvdevCode.btnThumbR: .button(.rightstick),
        // the share button of Xbox Series pads, SDL's misc1 (xpad reports it with KEY_RECORD)
        EvdevCode.keyRecord: .button(.misc1),
    ]

    private static let sticksAndTriggers: [UInt16: EvdevAbsoluteRole] = [
        EvdevCode.absX: .axis(.leftx, inverted: false), EvdevCode.absY: .axis(.lefty, inverted: false),
        EvdevCode.absRX: .axis(.rightx, inverted: false), EvdevCode.absRY: .axis(.righty, inverted: false),
        EvdevCode.absZ: .axis(.lefttrigger, inverted: false), EvdevCode.absRZ: .axis(.righttrigger, inverted: false),
    ]

    private static let hatDpad: [UInt16: EvdevAbsoluteRole] = [
        EvdevCode.absHat0X: .buttons(negative: .dpleft, positive: .dpright),
        EvdevCode.absHat0Y: .buttons(negative: .dpup, positive: .dpdown),
    ]
}

extension EvdevLayout {
    /// What a pad node with these codes offers through this layout: the buttons and axes its present codes
    /// drive (a hat gives both of its d-pad buttons; a digital trigger gives its axis). Axes in `Axis.allCases` order.
    public func inputs(keyCodes: some Sequence<UInt16>, absoluteCodes: some Sequence<UInt16>) -> (buttons: ButtonSet, axes: [Axis]) {
        var buttons = ButtonSet()
        var axes = Set<Axis>()
        for code in keyCodes {
            switch keys[code] {
            case .button(let button): buttons.insert(button)
            case .trigger(let axis): axes.insert(axis)
            case nil: break
            }
        }
        for code in absoluteCodes {
            switch absolutes[code] {
            case .axis(let axis, _), .halfAxis(let axis, _, _): axes.insert(axis)
            case .buttons(let negative, let positive):
                buttons.insert(negative)
                buttons.insert(positive)
            case .buttonBeyondHalf(let button, _): buttons.insert(button)
            case nil: break
            }
        }
        return (buttons, Axis.allCases.filter(axes.contains))
    }
}
