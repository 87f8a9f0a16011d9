import PadCore
import Testing

/// The virtual Steam Deck's reports as SDL's Steam Deck driver reads them (`SteamDeckStatePacket_t`), and the two
/// touch surfaces the model gained for its trackpads.
@Suite struct EmulatedSteamDeckTests {
    static func report(_ snapshot: PadSnapshot, packet: UInt32 = 1) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xEE, count: EmulatedSteamDeck.reportSize)
        let count = bytes.withUnsafeMutableBytes { EmulatedSteamDeck.encode(snapshot, packetNumber: packet, into: $0) }
        #expect(count == 64)
        return bytes
    }

    static func int16(_ bytes: [UInt8], _ offset: Int) -> Int { Int(Int16(bitPattern: UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8)) }
    static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    @Test func aReportAtRestIsADeckStatePacketWithNothingPressed() {
        let bytes = Self.report(.neutral, packet: 0x0102_0304)
        #expect(Array(bytes[0..<4]) == [0x01, 0x00, 0x09, 0x40], "version 1, type 9, length 64")
        #expect(Self.uint32(bytes, 4) == 0x0102_0304)
        #expect(Self.uint32(bytes, 8) == 0 && Self.uint32(bytes, 12) == 0)
        #expect(Self.int16(bytes, 36) == 32767, "the identity quaternion's w")
        #expect(bytes[16..<36].allSatisfy { $0 == 0 } && bytes[38..<64].allSatisfy { $0 == 0 })
    }

    /// The bit of each button in SDL 2.32's `SteamDeckButtons` (low word, then high word from bit 32).
    @Test(arguments: [
        (Button.a, 7), (.b, 5), (.x, 6), (.y, 4), (.leftshoulder, 3), (.rightshoulder, 2), (.back, 12), (.start, 14),
        (.guide, 13), (.leftstick, 22), (.rightstick, 26), (.dpup, 8), (.dpright, 9), (.dpleft, 10), (.dpdown, 11),
        (.paddle1, 32 + 10), (.paddle2, 32 + 9), (.paddle3, 16), (.paddle4, 15), (.misc1, 32 + 18),
    ])
    func eachButtonSetsItsOwnBit(button: Button, bit: Int) {
        let bytes = Self.report(PadSnapshot(buttons: ButtonSet([button])))
        let bits = UInt64(Self.uint32(bytes, 8)) | UInt64(Self.uint32(bytes, 12)) << 32
        #expect(bits == 1 << UInt64(bit), "\(button)")
    }

    @Test func sticksAreUpPositiveAndTriggersKeepTheirRange() {
        let snapshot = PadSnapshot(leftX: -32768, leftY: -32768, rightX: 1234, rightY: 32767, leftTrigger: 32767, rightTrigger: 100)
        let bytes = Self.report(snapshot)
        #expect(Self.int16(bytes, 48) == -32768 && Self.int16(bytes, 50) == 32767, "left stick up reads as up")
        #expect(Self.int16(bytes, 52) == 1234 && Self.int16(bytes, 54) == -32767)
        #expect(Self.int16(bytes, 44) == 32767 && Self.int16(bytes, 46) == 100)
        // A trigger pulled all the way also sets its "fully pressed" bit (L2: bit 1); one barely pulled does not.
        #expect(Self.uint32(bytes, 8) == 1 << 1)
    }

    /// SDL turns the report's gyro (x, y, z) into its own (x, z, -y), 2000 °/s full scale, and accel the same way at
    /// 2 g: the model's readings come back through that reading unchanged.
    @Test func motionReadsBackThroughSDLsAxesAndScales() {
        var snapshot = PadSnapshot.neutral
        snapshot.motion = MotionSample(
            gyroRadiansPerSecond: Vector3(x: 0.5, y: -1.5, z: 0.25),
            accelMetersPerSecondSquared: Vector3(x: 1, y: 9.80665, z: -2), timestampMicroseconds: 1)
        let bytes = Self.report(snapshot)
        func sdl(_ offset: Int, fullScale: Double) -> [Double] {
            let raw = (0..<3).map { Double(Self.int16(bytes, offset + 2 * $0)) / 32768 * fullScale }
            return [raw[0], raw[2], -raw[1]]
        }
        let gyro = sdl(30, fullScale: 2000 * Double.pi / 180)
        let accel = sdl(24, fullScale: 2 * 9.80665)
        for (read, sent) in zip(gyro, [0.5, -1.5, 0.25]) { #expect(abs(read - sent) < 0.001) }
        for (read, sent) in zip(accel, [1, 9.80665, -2]) { #expect(abs(read - sent) < 0.002) }
    }

    @Test func fingersOnTheTrackpadsAreReportedWithTheirTouchBits() {
        var snapshot = PadSnapshot.neutral
        snapshot.touches[1] = TouchContact(active: true, surface: .rightTrackpad, x: 1, y: 0)
        var bytes = Self.report(snapshot)
        #expect(Self.uint32(bytes, 8) == 1 << 20, "only the right trackpad is touched")
        #expect(Self.int16(bytes, 20) == 32767 && Self.int16(bytes, 22) == 32767, "top right corner: y up positive")
        #expect(Self.int16(bytes, 16) == 0 && Self.int16(bytes, 18) == 0, "an untouched trackpad reads 0")

        snapshot.touches[0] = TouchContact(active: true, surface: .leftTrackpad, x: 0, y: 1)
        snapshot.buttons = ButtonSet([.touchpad])
        bytes = Self.report(snapshot)
        #expect(Self.int16(bytes, 16) == -32768 && Self.int16(bytes, 18) == -32768)
        #expect(Self.uint32(bytes, 8) == 1 << 19 | 1 << 20 | 1 << 18, "both touched; the click goes to the right one")
        snapshot.touches[1] = .lifted
        #expect(Self.uint32(Self.report(snapshot), 8) == 1 << 19 | 1 << 17, "the click goes to the one touched")
    }

    @Test func simpleRumbleCommandsAreTheGamesRumble() throws {
        var pad = EmulatedSteamDeck(seed: "deck")
        // As SDL 2.32 sends it: report number 0, then command 0xEB, length, type, intensity, left and right speeds.
        let command: [UInt8] = [0x00, 0xEB, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x40, 0x02, 0x00]
        let received = pad.receiveFeature(0, data: command)
        let response = try #require(received)
        guard case let .rumble(rumble)? = response.feedback.first else {
            Issue.record("no rumble in \(response)")
            return
        }
        #expect(abs(rumble.strong - 0.5) < 0.001 && abs(rumble.weak - 0.25) < 0.001)
        let clearing = pad.receiveFeature(0, data: [0x00, 0x81, 0x00])
        #expect(clearing?.feedback.isEmpty == true, "clearing mappings is no rumble")
        let other = pad.receiveFeature(1, data: [0x01, 0x81])
        #expect(other == nil, "only report 0 exists")
    }

    /// hid-steam asks the serial number (0xAE 0x15 0x01) with SET_REPORT and reads the answer with GET_REPORT.
    @Test func theSerialNumberIsAnsweredAfterItIsAsked() throws {
        var pad = EmulatedSteamDeck(seed: "deck")
        _ = pad.receiveFeature(0, data: [0x00, 0xAE, 0x15, 0x01])
        let reply = pad.featureReply(to: 0)
        let answer = try #require(reply)
        #expect(answer.count == 65 && Array(answer[0...3]) == [0x00, 0xAE, 0x15, 0x01])
        let serial = String(decoding: answer[4..<14], as: UTF8.self)
        #expect(serial.count == 10 && serial == String(pad.identity.uniq.filter { $0 != ":" }.prefix(10)))
        let refused = pad.featureReply(to: 3)
        #expect(refused == nil)
    }

    @Test func theDeckIsABluetoothHIDDeviceWithAVendorDescriptor() {
        let pad = EmulatedSteamDeck(seed: "deck")
        #expect(pad.description.vendorID == 0x28DE && pad.description.productID == 0x1205)
        #expect(pad.description.transport == .bluetooth, "SDL's hidapi skips uhid devices on the USB bus")
        #expect(pad.description.reportDescriptor.count == 29 && pad.inputDeviceNames(forPadNamed: "Steam Deck").isEmpty)
        #expect(VirtualPadKind.steamDeck.capabilities.buttons.contains(.paddle4))
        #expect(VirtualPadKind.defaultKind(for: ControllerKind(vendorID: 0x28DE, productID: 0x1205)) == .steamDeck)
    }
}

/// A second touch surface at no cost, and how fingers move between one touchpad and two trackpads.
@Suite struct TouchSurfaceTests {
    @Test func theSurfaceFitsInPaddingSoSnapshotsAreNoLarger() {
        #expect(MemoryLayout<TouchContact>.size == 24)
        #expect(MemoryLayout<TouchContacts>.size == 48)
    }

    @Test func trackpadFingersLandOnTheTouchpadsHalves() {
        let deck = TouchContacts(
            first: TouchContact(trackingID: 3, active: true, surface: .leftTrackpad, x: 0.5, y: 0.25),
            second: TouchContact(active: true, surface: .rightTrackpad, x: 1, y: 0.75))
        let one = deck.onOneTouchpad
        #expect(one[0] == TouchContact(trackingID: 3, active: true, surface: .touchpad, x: 0.25, y: 0.25))
        #expect(one[1] == TouchContact(active: true, surface: .touchpad, x: 1, y: 0.75))
        let touchpad = TouchContacts(first: TouchContact(active: true, x: 0.3, y: 0.2))
        #expect(touchpad.onOneTouchpad == touchpad, "fingers on a touchpad stay where they are")
    }

    /// A remapped or forwarded Deck shown as a DualShock 4: its right trackpad's finger is on the touchpad's right half.
    @Test func aPlayStationReportShowsTheTrackpadsOnItsHalves() throws {
        var snapshot = PadSnapshot.neutral
        snapshot.touches[1] = TouchContact(trackingID: 5, active: true, surface: .rightTrackpad, x: 0, y: 0.5)
        let decoded = try DualShock4InputReport.decode(DualShock4InputReport.encoded(snapshot, transport: .usb))
        #expect(decoded.touches[1].active && decoded.touches[1].surface == .touchpad)
        #expect(abs(decoded.touches[1].x - 0.5) < 0.002 && abs(decoded.touches[1].y - 0.5) < 0.002)
    }

    @Test func touchpadFingersLandOnTheTrackpadOfTheirHalf() {
        let touchpad = TouchContacts(
            first: TouchContact(active: true, x: 0.75, y: 0.5), second: TouchContact(active: true, x: 0.25, y: 0.1))
        let two = touchpad.onTwoTrackpads
        #expect(two[0].surface == .leftTrackpad && two[0].active && two[0].x == 0.5 && two[0].y == 0.1)
        #expect(two[1].surface == .rightTrackpad && two[1].active && two[1].x == 0.5 && two[1].y == 0.5)
        let bothLeft = TouchContacts(
            first: TouchContact(active: true, x: 0.1), second: TouchContact(active: true, x: 0.2)).onTwoTrackpads
        #expect(abs(bothLeft[0].x - 0.2) < 1e-12 && !bothLeft[1].active, "the first finger on a half wins")
        #expect(!TouchContacts().onTwoTrackpads[0].active && !TouchContacts().onTwoTrackpads[1].active)
    }

    @Test func theLinkCarriesTheSurfaceAndRefusesUnknownFlags() throws {
        var snapshot = PadSnapshot.neutral
        snapshot.touches[0] = TouchContact(trackingID: 1, active: true, surface: .leftTrackpad, x: 0.5, y: 0.5)
        snapshot.touches[1] = TouchContact(trackingID: 2, active: false, surface: .rightTrackpad)
        let bytes = LinkSnapshotCodec.encode(snapshot)
        #expect(bytes[17] == 0b011 && bytes[23] == 0b100, "active in bit 0, the surface in bits 1-2")
        let decoded = try LinkSnapshotCodec.decode(bytes)
        #expect(decoded.touches[0].surface == .leftTrackpad && decoded.touches[1].surface == .rightTrackpad)
        #expect(!decoded.hasSameDiscreteState(as: PadSnapshot(touches: TouchContacts(
            first: TouchContact(trackingID: 1, active: true, x: 0.5, y: 0.5),
            second: TouchContact(trackingID: 2, active: false)))), "a finger moving to another surface is discrete")
        for flags: UInt8 in [0b110, 0b111, 0b1000, 0x80] {
            var changed = bytes
            changed[17] = flags
            #expect(throws: LinkDecodingError.invalid(field: "touch flags")) { try LinkSnapshotCodec.decode(changed) }
        }
    }
}

@Suite struct ReportPaceTests {
    static let ms: UInt64 = 1_000_000

    @Test func aTimelyHeartbeatOwesOneReport() {
        var pace = ReportPace(periodMilliseconds: 4)
        pace.start(atNanoseconds: 1000 * Self.ms)
        #expect((1...5).map { pace.reportsOwed(atNanoseconds: (1000 + 4 * UInt64($0)) * Self.ms + 200_000) } == [1, 1, 1, 1, 1])
    }

    /// A heartbeat 9 ms late owes the two periods it missed and the one it ends; the phase is kept, so the 0.5 ms
    /// left over counts towards the next.
    @Test func aLateHeartbeatOwesEveryPeriodItMissedAndKeepsThePhase() {
        var pace = ReportPace(periodMilliseconds: 4)
        pace.start(atNanoseconds: 0)
        #expect(pace.reportsOwed(atNanoseconds: 12 * Self.ms + 500_000) == 3)
        #expect(pace.reportsOwed(atNanoseconds: 16 * Self.ms) == 1)
        // Over a second of heartbeats that fire late by up to 3 ms, the reports add up to the second.
        var total = 0
        for period in 5...254 { total += pace.reportsOwed(atNanoseconds: UInt64(period) * 4 * Self.ms + UInt64(period % 4) * Self.ms) }
        total += pace.reportsOwed(atNanoseconds: 1020 * Self.ms)
        #expect(total == 251, "every 4 ms from 16 ms to 1020 ms, once")
    }

    @Test func aPadFarBehindStartsAfreshInsteadOfABurst() {
        var pace = ReportPace(periodMilliseconds: 4)
        pace.start(atNanoseconds: 0)
        #expect(pace.reportsOwed(atNanoseconds: 1000 * Self.ms) == 1)
        #expect(pace.reportsOwed(atNanoseconds: 1004 * Self.ms) == 1)
    }
}
