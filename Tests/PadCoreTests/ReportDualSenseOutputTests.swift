import PadTestSupport
import Testing
@testable import PadCore

@Suite struct ReportDualSenseOutputTests {
    static let layouts = DualSenseOutputLayout.allCases

    /// A USB kernel-layout report (63 bytes) with the given common-block bytes (c+N → byte N+1).
    static func usb(_ fields: [Int: UInt8], size: Int = 63) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes[0] = 0x02
        for (offset, value) in fields { bytes[offset + 1] = value }
        return bytes
    }

    static func decode(_ bytes: [UInt8]) -> Result<Feedback, ReportDecodingError> {
        decodeResult { () throws(ReportDecodingError) in try DualSenseOutputReport.decode(bytes) }
    }

    // MARK: Framing

    @Test func bluetoothKernelCRCVectorFromTheDoc() {
        // An empty update in the kernel BT layout is exactly doc §2.1's vector: 0x31, 0x00, 0x10, 71 zeros, b5 01 15 23.
        let bytes = DualSenseOutputReport.encoded(Feedback(), layout: .bluetoothKernel)
        #expect(bytes == [0x31, 0x00, 0x10] + [UInt8](repeating: 0, count: 71) + [0xB5, 0x01, 0x15, 0x23])
    }

    @Test(arguments: [
        (DualSenseOutputLayout.usbKernel, 63, UInt8(0x02), 1), (.usbCompact, 48, 0x02, 1),
        (.bluetoothKernel, 78, 0x31, 3), (.bluetoothSDL2, 78, 0x31, 2),
    ])
    func framing(layout: DualSenseOutputLayout, size: Int, id: UInt8, common: Int) {
        let bytes = DualSenseOutputReport.encoded(
            Feedback(lightbar: LightbarColor(red: 1, green: 2, blue: 3)), layout: layout, sequence: 0x15)
        #expect(bytes.count == size && layout.size == size)
        #expect(bytes[0] == id)
        #expect(bytes[common + 1] == 0x04, "vf1 lightbar bit at c+1")
        #expect(Array(bytes[(common + 44)...(common + 46)]) == [1, 2, 3])
        switch layout {
        case .bluetoothKernel: #expect(bytes[1] == 0x50 && bytes[2] == 0x10, "seq 5 (low nibble of 0x15) << 4, tag")
        case .bluetoothSDL2: #expect(bytes[1] == 0x02)
        default: break
        }
        if id == 0x31 { #expect(bytes.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: 0xA2) }) }
    }

    // MARK: Decoding hand-built reports

    @Test func kernelCompatibleRumble() {
        // hid-playstation, old firmware: vf0 = 0x03, motor_right (weak) c+2, motor_left (strong) c+3.
        #expect(Self.decode(Self.usb([0: 0x03, 2: 51, 3: 255])) == .success(Feedback(rumble: Rumble(strong: 1, weak: 0.2))))
    }

    @Test func improvedRumbleViaValidFlag2() {
        #expect(Self.decode(Self.usb([0: 0x02, 38: 0x04, 2: 0, 3: 102])) == .success(Feedback(rumble: Rumble(strong: 0.4, weak: 0))))
    }

    @Test func hapticsSelectAloneIsNotRumble() {
        // SDL sends vf0 = 0x02 alone before the first rumble.
        #expect(Self.decode(Self.usb([0: 0x02, 2: 9, 3: 9])) == .success(Feedback()))
    }

    @Test func allFlagsZeroIsRumbleStop() {
        #expect(Self.decode(Self.usb([2: 200, 3: 200, 44: 9])) == .success(Feedback(rumble: .off)))
    }

    @Test func lightbarPlayerLedsMicLed() {
        // SDL player LEDs carry bit 5 (instant) → masked.
        let bytes = Self.usb([1: 0x15, 8: 2, 43: 0x3B, 44: 0x20, 45: 0x10, 46: 0x00])
        let expected = Feedback(lightbar: LightbarColor(red: 0x20, green: 0x10, blue: 0), playerLeds: 0x1B, micLed: true)
        #expect(Self.decode(bytes) == .success(expected))
        #expect(Self.decode(Self.usb([1: 0x01, 8: 0])) == .success(Feedback(micLed: false)))
    }

    @Test func unflaggedFieldsAreIgnored() {
        // Only the player-LED flag: lightbar bytes and the trigger blocks present but not flagged.
        let bytes = Self.usb([1: 0x10, 43: 0x04, 44: 0xFF, 10: 0x21, 21: 0x05])
        #expect(Self.decode(bytes) == .success(Feedback(playerLeds: 0x04)))
    }

    @Test func sdlTestProgramTriggerBlocks() {
        // SDL's testgamecontroller: vf0 |= 0x04 | 0x08; right {0x01, 0, 110}, left {0x06, 15, 63, 128}.
        let bytes = Self.usb([0: 0x0C, 10: 0x01, 11: 0, 12: 110, 21: 0x06, 22: 15, 23: 63, 24: 128])
        guard case let .success(feedback) = Self.decode(bytes) else { Issue.record("did not decode"); return }
        guard case let .simpleFeedback(position, strength)? = feedback.rightTrigger else {
            Issue.record("right: \(String(describing: feedback.rightTrigger))"); return
        }
        #expect(position == 0 && strength == 110)
        guard case let .simpleVibration(frequency, amplitude, where_)? = feedback.leftTrigger else {
            Issue.record("left: \(String(describing: feedback.leftTrigger))"); return
        }
        #expect(frequency == 15 && amplitude == 63 && where_ == 128)
        #expect(feedback.rumble == nil && feedback.lightbar == nil)
    }

    @Test func bluetoothLayoutsAreToldApartByByte1Bit1() throws {
        // Same 47-byte common block at offset 2 (byte 1 = 0x02) and at offset 3 (byte 1 = 0x30, tag 0x10).
        var common = [UInt8](repeating: 0, count: 47)
        common[1] = 0x04
        common[44] = 7; common[45] = 8; common[46] = 9
        let sdl2 = resealed([0x31, 0x02] + common + [UInt8](repeating: 0, count: 29), seed: 0xA2) { _ in }
        let kernel = resealed([0x31, 0x30, 0x10] + common + [UInt8](repeating: 0, count: 28), seed: 0xA2) { _ in }
        let expected = Feedback(lightbar: LightbarColor(red: 7, green: 8, blue: 9))
        #expect(try DualSenseOutputReport.decode(sdl2) == expected)
        #expect(try DualSenseOutputReport.decode(kernel) == expected)
        // Reading the SDL2 report at offset 3 would see vf1 = 0 and no lightbar: prove the bit decides.
        let misread = resealed(sdl2, seed: 0xA2) { $0[1] = 0x00 }
        #expect(try DualSenseOutputReport.decode(misread) != expected)
    }

    @Test func sdlTickleHasNoCRC() {
        var tickle = [UInt8](repeating: 0, count: 78)
        tickle[0] = 0x31; tickle[1] = 0x02
        guard case let .failure(error) = Self.decode(tickle) else { Issue.record("tickle decoded"); return }
        #expect(error.isChecksumMismatch)
    }

    @Test func sizes() {
        #expect(Self.decode(Self.usb([1: 0x04], size: 48)) == .success(Feedback(lightbar: LightbarColor(red: 0, green: 0, blue: 0))))
        #expect(Self.decode(Self.usb([:], size: 47)) == .failure(.truncated(expected: 48, actual: 47)))
        #expect(Self.decode([0x31] + [UInt8](repeating: 0, count: 70)) == .failure(.truncated(expected: 78, actual: 71)))
        #expect(Self.decode([0x01, 0]) == .failure(.unknownReportID(0x01)))
        #expect(Self.decode([]) == .failure(.empty))
    }

    @Test(arguments: [DualSenseOutputLayout.bluetoothKernel, .bluetoothSDL2], [3, 20, 60, 76])
    func bluetoothFlippedByteIsAChecksumMismatch(layout: DualSenseOutputLayout, position: Int) {
        var bytes = DualSenseOutputReport.encoded(Feedback(rumble: Rumble(strong: 1, weak: 1)), layout: layout)
        bytes[position] ^= 0x80
        guard case let .failure(error) = Self.decode(bytes) else { Issue.record("decoded"); return }
        #expect(error.isChecksumMismatch)
    }

    // MARK: Encoding

    @Test(arguments: [(RumbleMethod.compatible, UInt8(0x03), UInt8(0x00)), (.improved, 0x02, 0x04)])
    func rumbleFlags(method: RumbleMethod, vf0: UInt8, vf2: UInt8) {
        let bytes = DualSenseOutputReport.encoded(
            Feedback(rumble: Rumble(strong: 1, weak: 0.5)), layout: .usbKernel, rumbleMethod: method)
        #expect(bytes == Self.usb([0: vf0, 38: vf2, 2: 128, 3: 255]))
    }

    @Test func micLedAlsoSetsPowerSaveMicMuteLikeTheKernel() {
        #expect(DualSenseOutputReport.encoded(Feedback(micLed: true), layout: .usbKernel) == Self.usb([1: 0x03, 8: 1, 9: 0x10]))
        #expect(DualSenseOutputReport.encoded(Feedback(micLed: false), layout: .usbKernel) == Self.usb([1: 0x03]))
    }

    @Test func triggersEncodeTheirBlocks() throws {
        let right = try TriggerEffect.weapon(startZone: 2, endZone: 5, strength: 8)
        let bytes = DualSenseOutputReport.encoded(Feedback(leftTrigger: .off, rightTrigger: right), layout: .usbCompact)
        #expect(bytes == Self.usb([0: 0x0C, 10: 0x25, 11: 0x24, 13: 0x07, 21: 0x05], size: 48))
    }

    // MARK: Round trips

    static let feedbacks: [Feedback] = [
        Feedback(rumble: Rumble(strong: 1, weak: 0)),
        Feedback(rumble: .off),
        Feedback(rumble: Rumble(strong: 51 / 255.0, weak: 204 / 255.0), lightbar: LightbarColor(red: 0, green: 0, blue: 128)),
        Feedback(playerLeds: 0x15),
        Feedback(micLed: true),
        Feedback(micLed: false, leftTrigger: .off),
        Feedback(rightTrigger: .raw(TriggerEffectBlock([0xFC, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))),
        Feedback(
            rumble: Rumble(strong: 0.2, weak: 0.6), lightbar: LightbarColor(red: 255, green: 1, blue: 2), playerLeds: 0x1F,
            micLed: true, leftTrigger: .vibration(TriggerZoneStrengths([0, 0, 8, 8, 1]), frequencyHz: 30),
            rightTrigger: .simpleFeedback(position: 0, strength: 110)),
    ]

    @Test(arguments: layouts, feedbacks)
    func feedbackToBytesToFeedback(layout: DualSenseOutputLayout, feedback: Feedback) throws {
        for method in RumbleMethod.allCases {
            let bytes = DualSenseOutputReport.encoded(feedback, layout: layout, sequence: 7, rumbleMethod: method)
            #expect(try DualSenseOutputReport.decode(bytes) == feedback, "\(hexDump(bytes))")
        }
    }

    @Test(arguments: layouts)
    func emptyFeedbackIsTheRumbleStop(layout: DualSenseOutputLayout) throws {
        #expect(try DualSenseOutputReport.decode(DualSenseOutputReport.encoded(Feedback(), layout: layout)) == Feedback(rumble: .off))
    }

    @Test(arguments: layouts)
    func randomFeedbackRoundTrips(layout: DualSenseOutputLayout) throws {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<1000 {
            var feedback = Feedback()
            if rng.chance(1, in: 2) { feedback.rumble = Rumble(strong: Double(rng.byte()) / 255, weak: Double(rng.byte()) / 255) }
            if rng.chance(1, in: 2) { feedback.lightbar = LightbarColor(red: rng.byte(), green: rng.byte(), blue: rng.byte()) }
            if rng.chance(1, in: 2) { feedback.playerLeds = rng.byte() & 0x1F }
            if rng.chance(1, in: 2) { feedback.micLed = rng.chance(1, in: 2) }
            if rng.chance(1, in: 2) { feedback.leftTrigger = TriggerEffect(block: TriggerEffectBlock(rng.bytes(11))) }
            if rng.chance(1, in: 2) { feedback.rightTrigger = TriggerEffect(block: TriggerEffectBlock(rng.bytes(11))) }
            if feedback.isEmpty { continue }
            let bytes = DualSenseOutputReport.encoded(feedback, layout: layout, sequence: rng.byte())
            #expect(try DualSenseOutputReport.decode(bytes) == feedback)
        }
    }
}
