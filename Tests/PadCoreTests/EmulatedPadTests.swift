import PadCore
import Testing

/// The emulations behind the uhid virtual pads: what each says to its kernel driver and to hidraw readers.
@Suite struct EmulatedDualShock4Tests {
    static let identity = DualSenseIdentity(seed: "ds4-tests")

    @Test(arguments: [
        (UInt8(0x81), HIDTransport.usb, 7), (0x12, .usb, 16), (0xA3, .usb, 49), (0x02, .usb, 37),
        (0xA3, .bluetooth, 49), (0x05, .bluetooth, 41),
    ])
    func theProbesReportsHaveTheirExactSizes(reportID: UInt8, transport: HIDTransport, size: Int) throws {
        let reply = try #require(DualShock4FeatureReport.reply(to: reportID, identity: Self.identity, transport: transport))
        #expect(reply.count == size && reply[0] == reportID)
    }

    @Test func onBluetoothTheMACComesFromUniqAndTheCalibrationIsSealed() throws {
        #expect(DualShock4FeatureReport.reply(to: 0x81, identity: Self.identity, transport: .bluetooth) == nil)
        #expect(DualShock4FeatureReport.reply(to: 0x02, identity: Self.identity, transport: .bluetooth) == nil)
        let calibration = DualShock4FeatureReport.calibration(transport: .bluetooth)
        #expect(calibration.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: PlayStationCRC32.featureSeed) })
    }

    /// hid-sony and hid-playstation read the USB MAC from bytes 1-6, least significant first, and print it as
    /// `uniq` (%pMR): the same address the Bluetooth pad's `uniq` carries.
    @Test func theUSBMACReportsSpellTheSameAddressAsUniq() {
        let mac = DualShock4FeatureReport.mac(Self.identity)
        let printed = mac[1...6].reversed().map { String($0, radix: 16).leftPadded(2) }.joined(separator: ":")
        #expect(printed == Self.identity.uniq)
        #expect(Array(DualShock4FeatureReport.pairingInfo(Self.identity)[1...6]) == Array(mac[1...6]))
    }

    /// The kernel reads pitch+, pitch−, yaw+, ... on USB and pitch+, yaw+, roll+, pitch−, ... on Bluetooth: either
    /// way every axis is ±8640 at speed 540/540, the factor 64 the virtual DualSense has.
    @Test(arguments: HIDTransport.allCases)
    func theCalibrationIsTheIdentitySetInEitherOrder(transport: HIDTransport) {
        let report = DualShock4FeatureReport.calibration(transport: transport)
        func value(_ offset: Int) -> Int { Int(Int16(bitPattern: UInt16(report[offset]) | UInt16(report[offset + 1]) << 8)) }
        let pluses = transport == .usb ? [7, 11, 15] : [7, 9, 11]
        let minuses = transport == .usb ? [9, 13, 17] : [13, 15, 17]
        for (plus, minus) in zip(pluses, minuses) {
            #expect(value(plus) == 8640 && value(minus) == -8640)
            #expect((value(19) + value(21)) * 1024 / (value(plus) - value(minus)) == 64)
        }
    }

    @Test func theProbeIsAnsweredOnceTheCalibrationIsRead() {
        var pad = EmulatedDualShock4(seed: "probe", transport: .bluetooth)
        #expect(!pad.probeAnswered)
        _ = pad.featureReply(to: 0xA3)
        #expect(!pad.probeAnswered)
        _ = pad.featureReply(to: 0x05)
        #expect(pad.probeAnswered)
        #expect(pad.description.productID == 0x09CC && pad.description.reportDescriptor.count == 364)
    }

    /// SDL reads a Bluetooth 0x11 report only when byte 1 says HID data is present (0x80).
    @Test func bluetoothInputSaysItCarriesHIDData() throws {
        let report = DualShock4InputReport.encoded(PadSnapshot(buttons: ButtonSet([.a])), transport: .bluetooth)
        #expect(report[1] & 0x80 != 0)
        #expect(try DualShock4InputReport.decode(report).buttons == ButtonSet([.a]))
    }
}

@Suite struct EmulatedDualSenseTests {
    @Test func anEdgeIsADualSenseWithItsOwnProductAndName() {
        let edge = EmulatedDualSense(edge: true, seed: "edge", transport: .bluetooth)
        let plain = EmulatedDualSense(seed: "edge", transport: .bluetooth)
        #expect(edge.kind == .dualSenseEdge && plain.kind == .dualSense)
        #expect(edge.description.productID == 0x0DF2 && plain.description.productID == 0x0CE6)
        #expect(edge.description.name.contains("Edge") && !plain.description.name.contains("Edge"))
        #expect(edge.description.uniq == plain.description.uniq, "the MAC comes from the seed alone")
    }

    /// SDL 2.32 maps the Edge's back buttons (byte c+9) as paddle1:b20 (0x80), paddle2:b19 (0x40), paddle3:b18
    /// (0x20), paddle4:b17 (0x10).
    @Test(arguments: [(Button.paddle1, UInt8(0x80)), (.paddle2, 0x40), (.paddle3, 0x20), (.paddle4, 0x10)])
    func paddlesAreInTheBitsSDLReads(paddle: Button, bit: UInt8) throws {
        var pad = EmulatedDualSense(edge: true, seed: "edge", transport: .usb)
        var report = [UInt8](repeating: 0, count: pad.inputReportCapacity)
        let count = report.withUnsafeMutableBytes { pad.encodeInput(PadSnapshot(buttons: ButtonSet([paddle])), into: $0) }
        #expect(count == 64 && report[1 + 9] == bit)
        #expect(try DualSenseInputReport.decode(report).buttons == ButtonSet([paddle]))
    }
}

@Suite struct EmulatedXboxOneBluetoothTests {
    static func report(_ snapshot: PadSnapshot) -> [UInt8] {
        var pad = EmulatedXboxOneBluetooth(seed: "xbox")
        var bytes = [UInt8](repeating: 0xEE, count: pad.inputReportCapacity)
        let count = bytes.withUnsafeMutableBytes { pad.encodeInput(snapshot, into: $0) }
        return Array(bytes[0..<count])
    }

    @Test func restIsCentredSticksNoHatNoButtons() {
        #expect(Self.report(.neutral) == [UInt8(0x01), 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0])
    }

    /// The bits SDL's HIDAPI Xbox driver reads (bytes 14-16), Share in byte 16.
    @Test(arguments: [
        (Button.a, 14, UInt8(0x01)) as (Button, Int, UInt8), (.b, 14, 0x02), (.x, 14, 0x08), (.y, 14, 0x10), (.leftshoulder, 14, 0x40),
        (.rightshoulder, 14, 0x80), (.back, 15, 0x04), (.start, 15, 0x08), (.guide, 15, 0x10), (.leftstick, 15, 0x20),
        (.rightstick, 15, 0x40), (.misc1, 16, 0x01),
    ])
    func eachButtonHasItsBit(button: Button, byte: Int, bit: UInt8) {
        let bytes = Self.report(PadSnapshot(buttons: ButtonSet([button])))
        #expect(bytes[byte] == bit)
        #expect((14...16).filter { $0 != byte }.allSatisfy { bytes[$0] == 0 })
    }

    @Test(arguments: [
        ([Button.dpup], 1), ([.dpup, .dpright], 2), ([.dpright], 3), ([.dpdown, .dpright], 4), ([.dpdown], 5),
        ([.dpdown, .dpleft], 6), ([.dpleft], 7), ([.dpup, .dpleft], 8), ([.dpup, .dpdown], 0), ([], 0),
    ])
    func theDpadIsAHatFromUpClockwise(buttons: [Button], hat: Int) {
        #expect(Int(Self.report(PadSnapshot(buttons: ButtonSet(buttons)))[13]) == hat)
    }

    @Test func sticksAndTriggersKeepTheirEnds() {
        let bytes = Self.report(PadSnapshot(leftX: -32768, leftY: 32767, leftTrigger: 32767, rightTrigger: 16384))
        #expect(bytes[1] == 0 && bytes[2] == 0 && bytes[3] == 0xFF && bytes[4] == 0xFF)
        #expect(UInt16(bytes[9]) | UInt16(bytes[10]) << 8 == 1023)
        #expect(UInt16(bytes[11]) | UInt16(bytes[12]) << 8 == 512)
    }

    /// SDL sends all four motors (enable 0x0F); hid-microsoft the two in the grips (0x03); xpadneo clears the bit of a
    /// motor whose magnitude did not change, which keeps its value.
    @Test func rumbleReportsSetTheEnabledMotorsAndKeepTheOthers() throws {
        var pad = EmulatedXboxOneBluetooth(seed: "xbox")
        let sdl = pad.receiveOutput([0x03, 0x0F, 30, 60, 50, 25, 0xFF, 0, 0xEB], showing: .neutral)
        #expect(sdl.feedback == [.rumble(Rumble(strong: 0.5, weak: 0.25, leftTrigger: 0.3, rightTrigger: 0.6))])
        let gripsOnly = pad.receiveOutput([0x03, 0x02, 0, 0, 100, 0, 0xFF, 0, 0xFF], showing: .neutral)
        #expect(gripsOnly.feedback == [.rumble(Rumble(strong: 1, weak: 0.25, leftTrigger: 0.3, rightTrigger: 0.6))])
        #expect(pad.receiveOutput([0x03, 0x0F, 0, 0, 0, 0, 0, 0, 0], showing: .neutral).feedback == [.rumble(.off)])
        #expect(pad.receiveOutput([0x02, 0x0F, 0, 0, 0, 0, 0, 0, 0], showing: .neutral) == .nothing)
        #expect(pad.receiveOutput([0x03, 0x0F], showing: .neutral) == .nothing)
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// A physical DualSense Edge's back buttons: in its hidraw reports only, merged into the snapshot the event nodes
/// make.
@Suite struct EdgeBackButtonTests {
    @Test func theBackButtonsAreReadFromFullReportsOnly() throws {
        let buttons = ButtonSet([.paddle1, .paddle4, .a])
        let usb = DualSenseInputReport.encoded(PadSnapshot(buttons: buttons), transport: .usb)
        let bluetooth = DualSenseInputReport.encoded(PadSnapshot(buttons: buttons), transport: .bluetooth)
        for report in [usb, bluetooth] {
            #expect(report.withUnsafeBytes { DualSenseInputReport.edgeBackButtons($0) } == ButtonSet([.paddle1, .paddle4]))
        }
        var broken = bluetooth
        broken[20] ^= 0xFF
        #expect(broken.withUnsafeBytes { DualSenseInputReport.edgeBackButtons($0) } == nil, "a bad CRC says nothing")
        #expect([UInt8](repeating: 0, count: 10).withUnsafeBytes { DualSenseInputReport.edgeBackButtons($0) } == nil)
        #expect(Array(usb.prefix(20)).withUnsafeBytes { DualSenseInputReport.edgeBackButtons($0) } == nil)
    }

    /// The report's buttons land at once and stay over the pad node's frames, which know nothing of them.
    @Test func reportButtonsStayOverThePadNodesFrames() {
        var assembler = EvdevSnapshotAssembler(layout: .linuxGamepadConvention, absoluteInfo: [:])
        let mask = DualSenseInputReport.edgeBackButtonSet
        let first = assembler.showReportButtons(ButtonSet([.paddle2, .a]), of: mask)
        #expect(first && assembler.snapshot.buttons == ButtonSet([.paddle2]), "only the masked buttons are taken")
        let again = assembler.showReportButtons(ButtonSet([.paddle2]), of: mask)
        #expect(!again, "no change, no frame")
        _ = assembler.apply(EvdevEvent(type: EvdevCode.evKey, code: EvdevCode.btnSouth, value: 1), from: .pad)
        _ = assembler.apply(EvdevEvent(type: EvdevCode.evSyn, code: EvdevCode.synReport, value: 0), from: .pad)
        #expect(assembler.snapshot.buttons == ButtonSet([.a, .paddle2]))
        let released = assembler.showReportButtons(ButtonSet(), of: mask)
        #expect(released && assembler.snapshot.buttons == ButtonSet([.a]))
    }
}

@Suite struct XboxBluetoothRumbleReportTests {
    /// What padbridge writes to a physical pad is what the virtual pad (and hid-microsoft, SDL) read back.
    @Test func theReportCarriesAllFourMotorsAndReadsBack() throws {
        let rumble = Rumble(strong: 0.5, weak: 0.25, leftTrigger: 1, rightTrigger: 0.125)
        let report = XboxBluetoothRumbleReport.encoded(rumble)
        #expect(report == [0x03, 0x0F, 100, 13, 50, 25, 0xFF, 0x00, 0xEB])
        let read = try #require(EmulatedXboxOneBluetooth.applyRumbleReport(report, to: .off))
        #expect(read.strong == 0.5 && read.weak == 0.25 && read.leftTrigger == 1 && read.rightTrigger == 0.13)
        #expect(XboxBluetoothRumbleReport.encoded(.off) == [0x03, 0x0F, 0, 0, 0, 0, 0xFF, 0x00, 0xEB])
    }
}
