import PadCore
import Testing

@Suite struct SDLMappingTranslationTests {
    /// hid-playstation's gamepad node: keys 0x130 0x131 0x133 0x134 0x136...0x13e, axes ABS_X...ABS_RZ, hat 0.
    static let dualSenseKeys: [UInt16] = [0x130, 0x131, 0x133, 0x134] + Array(0x136...0x13e)
    static let dualSenseAbsolutes: [UInt16] = [0, 1, 2, 3, 4, 5, 0x10, 0x11]

    /// Worked by hand: SDL numbers those keys b0 = 0x130 (south), b1 = 0x131, b2 = 0x133 (north), b3 = 0x134
    /// (west), b4 = TL, b5 = TR, b6/b7 = TL2/TR2, b8 = SELECT, b9 = START, b10 = MODE, b11/b12 = THUMBL/R, and the
    /// axes a0...a5 = ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ, so SDL's database line for the DualSense on
    /// hid-playstation must come out as padbridge's own hid-playstation layout.
    @Test func dualSenseDatabaseMappingIsTheBuiltInLayout() throws {
        let mapping =
            "030000004c050000e60c000000810000,PS5 Controller,a:b0,b:b1,back:b8,dpdown:h0.4,dpleft:h0.8,dpright:h0.2,"
            + "dpup:h0.1,guide:b10,leftshoulder:b4,leftstick:b11,lefttrigger:a2,leftx:a0,lefty:a1,rightshoulder:b5,"
            + "rightstick:b12,righttrigger:a5,rightx:a3,righty:a4,start:b9,x:b3,y:b2,platform:Linux,"
        let layout = try EvdevLayout(
            sdlMapping: mapping, keyCodes: Self.dualSenseKeys, absoluteCodes: Self.dualSenseAbsolutes)
        #expect(layout == EvdevLayout.playStation)
    }

    /// Worked by hand. Keys 0x100 (below BTN_JOYSTICK, so numbered last), 0x130, 0x131, 0x13a, 0x2c0:
    /// b0 = 0x130, b1 = 0x131, b2 = 0x13a, b3 = 0x2c0, b4 = 0x100. Axes 0x00, 0x01, 0x05, hat 0 (digital), hat 1
    /// (analog: range -127...127 with a flat zone, so SDL keeps it as two axes), 0x28:
    /// a0 = 0x00, a1 = 0x01, a2 = 0x05, a3 = 0x12, a4 = 0x13, a5 = 0x28; h0 = (0x10, 0x11).
    @Test func mappingWithHalfAxesHatsAndSkippedEntries() throws {
        let analog = EvdevAbsoluteInfo(minimum: -127, maximum: 127, flat: 15)
        let digital = EvdevAbsoluteInfo(minimum: -1, maximum: 1)
        let mapping =
            "03000000000000000000000000000000, Test Pad ,a:b0,b:b1,back:b2,dpleft:b3,guide:b4,leftx:a0,lefty:a1~,"
            + "righttrigger:+a2,rightx:a3,x:+a4,lefttrigger:-a5~,dpup:h0.1,dpdown:h0.4,dpright:h0.2,"
            + "misc2:b1,+leftx:b1,y:a3,rightstick:b9,start:h1.1,platform:Linux,crc:1234,"
        let layout = try EvdevLayout(
            sdlMapping: mapping, keyCodes: [0x2c0, 0x13a, 0x131, 0x130, 0x100],
            absoluteCodes: [0x28, 0x13, 0x12, 0x11, 0x10, 0x05, 0x01, 0x00],
            absoluteInfo: [0x10: digital, 0x11: digital, 0x12: analog, 0x13: analog])
        #expect(
            layout.keys == [
                0x130: .button(.a), 0x131: .button(.b), 0x13a: .button(.back), 0x2c0: .button(.dpleft),
                0x100: .button(.guide),
            ])
        #expect(
            layout.absolutes == [
                0x00: .axis(.leftx, inverted: false), 0x01: .axis(.lefty, inverted: true),
                0x05: .halfAxis(.righttrigger, positiveSide: true, inverted: false),
                0x12: .axis(.rightx, inverted: false), 0x13: .buttonBeyondHalf(.x, positiveSide: true),
                0x28: .halfAxis(.lefttrigger, positiveSide: false, inverted: true),
                0x11: .buttons(negative: .dpup, positive: .dpdown),
                0x10: .buttonBeyondHalf(.dpright, positiveSide: true),
            ])
    }

    @Test func hatsWithoutAbsinfoCountAsDigitalAndLeaveTheAxisNumbering() throws {
        // Axes 0x00, 0x01, 0x05, 0x28 (a0...a3); hats h0 = (0x10, 0x11), h1 = (0x12, 0x13).
        let layout = try EvdevLayout(
            sdlMapping: "guid,name,rightx:a3,dpup:h1.1,lefttrigger:b1",
            keyCodes: [0x130, 0x131], absoluteCodes: [0x00, 0x01, 0x05, 0x10, 0x11, 0x12, 0x13, 0x28])
        #expect(layout.absolutes == [0x28: .axis(.rightx, inverted: false), 0x13: .buttonBeyondHalf(.dpup, positiveSide: false)])
        #expect(layout.keys == [0x131: .trigger(.lefttrigger)])
    }

    @Test(arguments: [
        ("no-commas-at-all", SDLMappingError.missingGUIDOrName(mapping: "no-commas-at-all")),
        ("guid,name,leftx", .entryWithoutColon(entry: "leftx")),
        ("guid,name,a:q1", .malformedSource(entry: "a:q1")),
        ("guid,name,a:b", .malformedSource(entry: "a:b")),
        ("guid,name,dpup:h0", .malformedSource(entry: "dpup:h0")),
        ("guid,name,leftx:a", .malformedSource(entry: "leftx:a")),
        ("guid,name,leftx:", .malformedSource(entry: "leftx:")),
        ("guid,name,a:b0,b:bb1", .malformedSource(entry: "b:bb1")),
    ])
    func malformedEntriesAreTypedErrors(mapping: String, expected: SDLMappingError) {
        #expect(throws: expected) {
            try EvdevLayout(sdlMapping: mapping, keyCodes: [0x130], absoluteCodes: [0])
        }
    }

    @Test func unknownTargetsAreSkippedUnread() throws {
        let layout = try EvdevLayout(
            sdlMapping: "guid,name,misc2:zz,hint:!SDL_X:=1,sdk>=:33,a:b0", keyCodes: [0x130], absoluteCodes: [])
        #expect(layout == EvdevLayout(keys: [0x130: .button(.a)], absolutes: [:]))
    }
}

@Suite struct BuiltInLayoutTests {
    @Test func xpadReportsXWithBTNNorthAndHidPlaystationReportsTriangle() {
        #expect(EvdevLayout.xpad.keys[EvdevCode.btnNorth] == .button(.x))
        #expect(EvdevLayout.xpad.keys[EvdevCode.btnWest] == .button(.y))
        #expect(EvdevLayout.playStation.keys[EvdevCode.btnNorth] == .button(.y))
        #expect(EvdevLayout.playStation.keys[EvdevCode.btnWest] == .button(.x))
        #expect(EvdevLayout.linuxGamepadConvention.keys[EvdevCode.btnWest] == .button(.x))
    }

    /// xpad reports an Xbox Series pad's share button with KEY_RECORD; SDL calls it misc1.
    @Test func xpadsShareButtonIsMisc1() {
        #expect(EvdevLayout.xpad.keys[EvdevCode.keyRecord] == .button(.misc1))
        #expect(EvdevLayout.xboxBluetooth.keys[EvdevCode.keyRecord] == .button(.misc1))
    }

    @Test func xpadsDpadButtonsComeInItsOrder() {
        let layout = EvdevLayout.xpad
        #expect(layout.keys[EvdevCode.btnTriggerHappy1] == .button(.dpleft))
        #expect(layout.keys[EvdevCode.btnTriggerHappy2] == .button(.dpright))
        #expect(layout.keys[EvdevCode.btnTriggerHappy3] == .button(.dpup))
        #expect(layout.keys[EvdevCode.btnTriggerHappy4] == .button(.dpdown))
    }

    @Test func xboxOneOnBluetoothUsesTheHIDLayout() {
        #expect(EvdevLayout.builtIn(for: .xboxOne, bus: .bluetooth) == .xboxBluetooth)
        #expect(EvdevLayout.builtIn(for: .xboxOne, bus: .usb) == .xpad)
        #expect(EvdevLayout.xboxBluetooth.absolutes[EvdevCode.absZ] == .axis(.rightx, inverted: false))
        #expect(EvdevLayout.xboxBluetooth.absolutes[EvdevCode.absBrake] == .axis(.lefttrigger, inverted: false))
        #expect(EvdevLayout.builtIn(for: .generic) == nil)
    }

    @Test func switchProTriggersAreDigital() {
        #expect(EvdevLayout.switchPro.keys[EvdevCode.btnTL2] == .trigger(.lefttrigger))
        #expect(EvdevLayout.switchPro.keys[EvdevCode.btnSouth] == .button(.a))
        #expect(EvdevLayout.switchPro.keys[EvdevCode.btnZ] == .button(.misc1))
    }
}
