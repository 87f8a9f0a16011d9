import PadCore
import Testing

@Suite("evemu's format for a recording's event nodes")
struct EvemuFormatTests {
    /// An Xbox 360 pad's node, cut down: A and B, the left stick, the hat, rumble.
    static let node = RecordedEvdevNode(
        index: 0, role: "pad", path: "/dev/input/event4", name: "Microsoft X-Box 360 pad", bus: 0x0003,
        vendor: 0x045E, product: 0x028E, version: 0x0114,
        codes: [1: [304, 305], 3: [0, 1, 16], 21: [80, 81, 96]],
        absoluteInfo: [
            0: EvdevAbsoluteInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
            1: EvdevAbsoluteInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
            16: EvdevAbsoluteInfo(minimum: -1, maximum: 1, resolution: 3),
        ])

    @Test func theDescriptionHasEvemusLinesAndBitLayout() {
        let lines = EvemuFormat.description(of: Self.node, padID: "4f2a").split(separator: "\n").map(String.init)
        #expect(lines.first == "# EVEMU 1.3")
        let described = lines.filter { !$0.hasPrefix("#") }
        #expect(described.prefix(4) == [
            "N: Microsoft X-Box 360 pad",
            "I: 0003 045e 028e 0114",
            "P: 00 00 00 00 00 00 00 00",
            "B: 00 0b 00 00 00 00 00 00 00",
        ])
        // Per type, as many lines as KEY_MAX, REL_MAX, ... need: 96 bytes of keys are 12 lines, FF_MAX's 16 are 2.
        let bitLineCounts = Dictionary(grouping: described.filter { $0.hasPrefix("B: ") }) { $0.dropFirst(3).prefix(2) }
            .mapValues(\.count)
        #expect(bitLineCounts == ["00": 1, "01": 12, "02": 1, "03": 1, "04": 1, "05": 1, "11": 1, "12": 1, "14": 1, "15": 2])
        let keyLines = described.filter { $0.hasPrefix("B: 01 ") }
        // BTN_SOUTH = 304 = byte 38 bit 0, BTN_EAST bit 1: byte 38 is the seventh of the fifth line.
        #expect(keyLines[4] == "B: 01 00 00 00 00 00 00 03 00")
        #expect(keyLines.enumerated().allSatisfy { $0.offset == 4 || $0.element == "B: 01 00 00 00 00 00 00 00 00" })
        // ABS_X, ABS_Y: byte 0 = 0b11; ABS_HAT0X = 16: byte 2 bit 0.
        #expect(described.contains("B: 03 03 00 01 00 00 00 00 00"))
        // FF_RUMBLE = 0x50, FF_PERIODIC = 0x51: byte 10 bits 0, 1; FF_SINE = 0x60: byte 12 bit 0 (second line).
        #expect(described.filter { $0.hasPrefix("B: 15 ") } == ["B: 15 00 00 00 00 00 00 00 00", "B: 15 00 00 03 00 01 00 00 00"])
        #expect(described.suffix(3) == ["A: 00 -32768 32767 16 128 0", "A: 01 -32768 32767 16 128 0", "A: 10 -1 1 0 0 3"])
    }

    @Test func propertiesAreBitsOfTheFirstBytes() {
        var node = Self.node
        node.properties = [0, 6]  // INPUT_PROP_POINTER, INPUT_PROP_ACCELEROMETER
        let lines = EvemuFormat.description(of: node, padID: "x").split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("P: ") } == ["P: 41 00 00 00 00 00 00 00"])
    }

    @Test func eventLinesAreSecondsAndMicrosecondsHexTypeAndCodeAndPrintfsDecimal() {
        #expect(EvemuFormat.eventLine(microseconds: 1_500_002, type: 1, code: 304, value: 1) == "E: 1.500002 0001 0130 0001\n")
        #expect(EvemuFormat.eventLine(microseconds: 7, type: 3, code: 0, value: -32768, comment: "EV_ABS / ABS_X -32768")
            == "E: 0.000007 0003 0000 -32768\t# EV_ABS / ABS_X -32768\n")
        #expect(EvemuFormat.eventLine(microseconds: -5, type: 0, code: 0, value: 0) == "E: 0.000000 0000 0000 0000\n")
    }

    @Test(arguments: [(0, "0000"), (1, "0001"), (-1, "-001"), (255, "0255"), (32767, "32767"), (-32768, "-32768"), (-12, "-012")])
    func valuesArePaddedAsPrintfsPercent04d(value: Int32, text: String) {
        #expect(EvemuFormat.eventLine(microseconds: 0, type: 3, code: 0, value: value) == "E: 0.000000 0003 0000 \(text)\n")
    }

    @Test func aNodesFileHoldsItsEventsOnly() {
        var motion = Self.node
        motion.index = 1
        motion.role = "motion"
        let recording = PadRecording(
            identity: RecordedPadIdentity(
                id: "4f2a", name: "pad", kind: .xbox360, bus: .usb, vendor: 0x045E, product: 0x028E, version: 0x0114,
                serial: nil),
            evdevNodes: [Self.node, motion],
            entries: [
                .evdev(microseconds: 10, node: 0, type: 1, code: 304, value: 1),
                .evdev(microseconds: 11, node: 1, type: 3, code: 0, value: 9),
                .hidrawInput(microseconds: 12, node: 2, report: [1, 2]),
                .feedback(microseconds: 13, side: .physical, line: "{}"),
                .evdev(microseconds: 14, node: 0, type: 0, code: 0, value: 0),
            ])
        let events = EvemuFormat.text(of: recording, node: 0)?.split(separator: "\n").filter { $0.hasPrefix("E: ") }
        #expect(events == ["E: 0.000010 0001 0130 0001", "E: 0.000014 0000 0000 0000"])
        #expect(EvemuFormat.text(of: recording, node: 5) == nil)
    }

    @Test func fileNamesPutTheRoleBeforeTheExtension() {
        #expect(EvemuFormat.fileNames(base: "ds.evemu", roles: ["pad", "motion", "touchpad"])
            == ["ds.evemu", "ds.motion.evemu", "ds.touchpad.evemu"])
        #expect(EvemuFormat.fileNames(base: "/tmp/v1.2/pad", roles: ["pad", "motion"]) == ["/tmp/v1.2/pad", "/tmp/v1.2/pad.motion"])
        #expect(EvemuFormat.fileNames(base: ".hidden", roles: ["pad", "motion"]) == [".hidden", ".hidden.motion"])
        #expect(EvemuFormat.fileNames(base: "x.e", roles: ["pad", "a/b", "a/b", ""]) == ["x.e", "x.a_b.e", "x.a_b2.e", "x.node.e"])
        #expect(EvemuFormat.fileNames(base: "x.e", roles: ["pad"]) == ["x.e"])
    }
}
