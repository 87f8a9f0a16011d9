import PadTestSupport
import Testing
@testable import PadCore

@Suite struct ReportDualSenseInputTests {
    // MARK: Golden

    static let neutralDecoded = PadSnapshot(
        leftX: 128, leftY: 128, rightX: 128, rightY: 128,  // 0x80 → 0x80 * 257 - 32768 = +128
        touches: TouchContacts(first: TouchContact(active: false), second: TouchContact(active: false)),
        battery: BatteryState(percent: 5, charging: false)  // level 0, discharging → 0 * 10 + 5
    )

    @Test func neutralReportDecodesToNeutralSnapshot() throws {
        let snapshot = try DualSenseInputReport.decode(neutralUSBInputReport)
        #expect(snapshot == Self.neutralDecoded)
        #expect(snapshot.buttons.isEmpty)
        #expect(snapshot.released.buttons.isEmpty)
    }

    @Test func neutralReportEncodesBackExactly() throws {
        let snapshot = try DualSenseInputReport.decode(neutralUSBInputReport)
        let bytes = DualSenseInputReport.encoded(snapshot, transport: .usb)
        #expect(bytes == neutralUSBInputReport, "\(hexDump(bytes))")
        #expect(DualSenseInputReport.encoded(.neutral, transport: .usb) == neutralUSBInputReport)
    }

    @Test func bluetoothFraming() throws {
        let bytes = DualSenseInputReport.encoded(.neutral, transport: .bluetooth, sequence: 9)
        #expect(bytes.count == 78)
        #expect(bytes[0] == 0x31 && bytes[1] == 0)
        #expect(Array(bytes[2..<65]) == Array(neutralUSBInputReport[1..<64]).enumerated().map { $0 == 6 ? 9 : $1 })
        #expect(bytes.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: 0xA1) })
        #expect(try DualSenseInputReport.decode(bytes) == DualSenseInputReport.decode(neutralUSBInputReport))
    }

    // MARK: Fields, hand-built

    /// A USB report with the given common-block bytes (c+N → byte N+1) over the neutral report.
    static func usb(_ fields: [Int: UInt8]) -> [UInt8] {
        var bytes = neutralUSBInputReport
        for (offset, value) in fields { bytes[offset + 1] = value }
        return bytes
    }

    static let stickValues: [(UInt8, Int16)] = [(0, .min), (0x80, 128), (0xFF, .max), (0x01, -32511)]

    @Test(arguments: stickValues)
    func sticks(raw: UInt8, value: Int16) throws {
        let s = try DualSenseInputReport.decode(Self.usb([0: raw, 1: raw, 2: raw, 3: raw]))
        #expect([s.leftX, s.leftY, s.rightX, s.rightY] == [value, value, value, value])
    }

    @Test func sticksAreIndependent() throws {
        let s = try DualSenseInputReport.decode(Self.usb([0: 0, 1: 0xFF, 2: 0x40, 3: 0xC0]))
        #expect(s.leftX == -32768 && s.leftY == 32767 && s.rightX == -16320 && s.rightY == 16576)
    }

    @Test func everyStickAndTriggerByteRoundTrips() {
        for raw in UInt8.min...UInt8.max {
            #expect(PlayStationInputFields.stickByte(PlayStationInputFields.stick(raw)) == raw)
            #expect(PlayStationInputFields.triggerByte(PlayStationInputFields.trigger(raw)) == raw)
        }
        #expect(PlayStationInputFields.trigger(0) == 0 && PlayStationInputFields.trigger(255) == 32767)
        #expect(PlayStationInputFields.triggerByte(-5) == 0)
    }

    @Test func triggersAndDigitalBits() throws {
        let s = try DualSenseInputReport.decode(Self.usb([4: 0xFF, 5: 0x01, 8: 0x0C]))
        #expect(s.leftTrigger == 32767 && s.rightTrigger == 128)  // (1 * 32767 + 127) / 255
        #expect(s.buttons.isEmpty, "digital L2/R2 are not buttons")
        let bytes = DualSenseInputReport.encoded(PadSnapshot(leftTrigger: 200), transport: .usb)
        #expect(bytes[9] & 0x0C == 0x04, "digital L2 set from the analog value")
    }

    static let buttonBits: [(offset: Int, mask: UInt8, button: Button)] = [
        (7, 0x10, .x), (7, 0x20, .a), (7, 0x40, .b), (7, 0x80, .y),
        (8, 0x01, .leftshoulder), (8, 0x02, .rightshoulder), (8, 0x10, .back), (8, 0x20, .start),
        (8, 0x40, .leftstick), (8, 0x80, .rightstick),
        (9, 0x01, .guide), (9, 0x02, .touchpad), (9, 0x04, .misc1),
        (9, 0x10, .paddle4), (9, 0x20, .paddle3), (9, 0x40, .paddle2), (9, 0x80, .paddle1),
    ]

    @Test(arguments: buttonBits)
    func buttonBit(offset: Int, mask: UInt8, button: Button) throws {
        let base: UInt8 = offset == 7 ? 0x08 : 0
        let s = try DualSenseInputReport.decode(Self.usb([offset: base | mask]))
        #expect(s.buttons == ButtonSet([button]))
        let bytes = DualSenseInputReport.encoded(PadSnapshot(buttons: ButtonSet([button])), transport: .usb)
        #expect(bytes == Self.usb([offset: base | mask]).enumerated().map { $0 == 53 ? 0 : $1 })
    }

    static let hats: [(UInt8, [Button])] = [
        (0, [.dpup]), (1, [.dpup, .dpright]), (2, [.dpright]), (3, [.dpdown, .dpright]), (4, [.dpdown]),
        (5, [.dpdown, .dpleft]), (6, [.dpleft]), (7, [.dpup, .dpleft]), (8, []), (9, []), (15, []),
    ]

    @Test(arguments: hats)
    func hat(nibble: UInt8, buttons: [Button]) throws {
        let s = try DualSenseInputReport.decode(Self.usb([7: nibble | 0x20]))
        #expect(s.buttons == ButtonSet(buttons + [.a]))
        #expect(PlayStationInputFields.hat(from: ButtonSet(buttons)) == min(nibble, 8))
    }

    static let contradictions: [([Button], UInt8)] = [
        ([.dpup, .dpdown], 8), ([.dpup, .dpdown, .dpleft], 6), ([.dpleft, .dpright, .dpdown], 4),
        ([.dpup, .dpdown, .dpleft, .dpright], 8),
    ]

    @Test(arguments: contradictions)
    func contradictoryDpadDropsThePair(buttons: [Button], nibble: UInt8) {
        let bytes = DualSenseInputReport.encoded(PadSnapshot(buttons: ButtonSet(buttons)), transport: .usb)
        #expect(bytes[8] == nibble)
    }

    @Test func touchPoints() throws {
        // Point 0: touching, id 5, X = 1919 (0x77F), Y = 1079 (0x437). Point 1: lifted, id 0x7F, X = 0x123, Y = 0x345.
        let s = try DualSenseInputReport.decode(
            Self.usb([32: 0x05, 33: 0x7F, 34: 0x77, 35: 0x43, 36: 0xFF, 37: 0x23, 38: 0x51, 39: 0x34]))
        #expect(s.touches.first == TouchContact(trackingID: 5, active: true, x: 1, y: 1))
        #expect(s.touches.second == TouchContact(trackingID: 0x7F, active: false, x: 0x123 / 1919.0, y: 0x345 / 1079.0))
        let bytes = DualSenseInputReport.encoded(s, transport: .usb)
        #expect(Array(bytes[33...40]) == [0x05, 0x7F, 0x77, 0x43, 0xFF, 0x23, 0x51, 0x34])
    }

    @Test func touchBeyondTheSurfaceClampsAndEncodeClamps() throws {
        let s = try DualSenseInputReport.decode(Self.usb([32: 0x01, 33: 0xFF, 34: 0xFF, 35: 0xFF]))
        #expect(s.touches.first.x == 1 && s.touches.first.y == 1)
        var wild = PadSnapshot()
        wild.touches.first = TouchContact(trackingID: 0xFF, active: true, x: 7, y: .nan)
        let bytes = DualSenseInputReport.encoded(wild, transport: .usb)
        #expect(Array(bytes[33...36]) == [0x7F, 0x7F, 0x07, 0x00])
    }

    @Test func motion() throws {
        // gyro pitch 16 (1 °/s), yaw -32768, roll 1; accel x 8192 (1 g), y -8192, z 0; timestamp 3000 ticks.
        let s = try DualSenseInputReport.decode(Self.usb([
            15: 0x10, 16: 0x00, 17: 0x00, 18: 0x80, 19: 0x01, 20: 0x00,
            21: 0x00, 22: 0x20, 23: 0x00, 24: 0xE0, 27: 0xB8, 28: 0x0B,
        ]))
        let g = s.motion.gyroRadiansPerSecond, a = s.motion.accelMetersPerSecondSquared
        #expect(abs(g.x - Double.pi / 180) < 1e-12)
        #expect(abs(g.y - -32768 / 16 * Double.pi / 180) < 1e-9)
        #expect(abs(g.z - Double.pi / 180 / 16) < 1e-12)
        #expect(a == Vector3(x: 9.80665, y: -9.80665, z: 0))
        #expect(s.motion.timestampMicroseconds == 1000)
        let bytes = DualSenseInputReport.encoded(s, transport: .usb)
        #expect(Array(bytes[16...31]) == [0x10, 0, 0, 0x80, 1, 0, 0, 0x20, 0, 0xE0, 0, 0, 0xB8, 0x0B, 0, 0])
    }

    @Test func motionEncodeClampsAndRounds() {
        var s = PadSnapshot()
        s.motion = MotionSample(
            gyroRadiansPerSecond: Vector3(x: 1e9, y: -.infinity, z: .nan),
            accelMetersPerSecondSquared: Vector3(x: 9.80665 / 8192 * 2.6, y: 0, z: 0),
            timestampMicroseconds: 0x1_0000_0001)
        let bytes = DualSenseInputReport.encoded(s, transport: .usb)
        #expect(Array(bytes[16...23]) == [0xFF, 0x7F, 0x00, 0x80, 0, 0, 3, 0])
        #expect(Array(bytes[28...31]) == [3, 0, 0, 0], "µs * 3 truncated to 32 bits")
    }

    static let batteries: [(UInt8, BatteryState)] = [
        (0x00, .init(percent: 5, charging: false)), (0x05, .init(percent: 55, charging: false)),
        (0x0A, .init(percent: 100, charging: false)), (0x0F, .init(percent: 100, charging: false)),
        (0x13, .init(percent: 35, charging: true)), (0x1A, .init(percent: 100, charging: true)),
        (0x24, .init(percent: 100, charging: false)), (0xA5, .init(percent: 0, charging: false)),
        (0xB5, .init(percent: 0, charging: false)), (0xF0, .init(percent: 0, charging: false)),
    ]

    @Test(arguments: batteries)
    func battery(raw: UInt8, state: BatteryState) throws {
        #expect(try DualSenseInputReport.decode(Self.usb([52: raw])).battery == state)
    }

    static let batteryBytes: [(BatteryState, UInt8)] = [
        (BatteryState(percent: 55, charging: false), 0x05), (.init(percent: 100, charging: true), 0x1A),
        (.init(percent: 9, charging: true), 0x10), (.unknown, 0x00),
    ]

    @Test(arguments: batteryBytes)
    func batteryEncode(state: BatteryState, raw: UInt8) {
        #expect(DualSenseInputReport.encoded(PadSnapshot(battery: state), transport: .usb)[53] == raw)
    }

    @Test func sequenceGoesToC6() {
        #expect(DualSenseInputReport.encoded(.neutral, transport: .usb, sequence: 0xAB)[7] == 0xAB)
    }

    // MARK: Errors

    @Test func errors() {
        #expect(decodeResult { () throws(ReportDecodingError) in try DualSenseInputReport.decode([]) } == .failure(.empty))
        #expect(decodeResult { () throws(ReportDecodingError) in try DualSenseInputReport.decode([0x02, 0]) }
            == .failure(.unknownReportID(0x02)))
        #expect(decodeResult { () throws(ReportDecodingError) in try DualSenseInputReport.decode(Array(neutralUSBInputReport[0..<63])) }
            == .failure(.truncated(expected: 64, actual: 63)))
        #expect(decodeResult { () throws(ReportDecodingError) in try DualSenseInputReport.decode([0x31] + [UInt8](repeating: 0, count: 76)) }
            == .failure(.truncated(expected: 78, actual: 77)))
    }

    @Test(arguments: [0, 1, 2, 40, 73, 74, 77])
    func bluetoothFlippedByteIsAChecksumMismatch(position: Int) {
        var bytes = DualSenseInputReport.encoded(Self.neutralDecoded, transport: .bluetooth)
        bytes[position] ^= 0x04
        let result = decodeResult { () throws(ReportDecodingError) in try DualSenseInputReport.decode(bytes) }
        if position == 0 {
            #expect(result == .failure(.unknownReportID(0x35)))
        } else if case let .failure(error) = result {
            #expect(error.isChecksumMismatch, "\(error)")
        } else {
            Issue.record("flipped byte \(position) decoded")
        }
    }

    @Test func trailingBytesAreIgnored() throws {
        #expect(try DualSenseInputReport.decode(neutralUSBInputReport + [1, 2, 3]) == Self.neutralDecoded)
    }

    // MARK: Round trips

    /// A report whose every modelled byte is random and representable, and whose unmodelled bytes are zero:
    /// `encode(decode(r)) == r` must hold byte for byte.
    static func canonicalReport(_ rng: inout SplitMix64, transport: HIDTransport) -> [UInt8] {
        var common = [UInt8](repeating: 0, count: 63)
        for i in 0..<7 { common[i] = rng.byte() }
        common[7] = rng.byte() & 0xF0 | UInt8.random(in: 0...8, using: &rng)
        common[8] = rng.byte() & 0xF3 | (common[4] > 0 ? 0x04 : 0) | (common[5] > 0 ? 0x08 : 0)
        common[9] = rng.byte() & 0xF7
        for i in 15..<27 { common[i] = rng.byte() }
        let ticks = UInt32.random(in: 0...(UInt32.max / 3), using: &rng) * 3
        for i in 0..<4 { common[27 + i] = UInt8(truncatingIfNeeded: ticks >> (8 * i)) }
        for point in [32, 36] {
            let x = Int.random(in: 0...1919, using: &rng), y = Int.random(in: 0...1079, using: &rng)
            common[point] = rng.byte()
            common[point + 1] = UInt8(x & 0xFF)
            common[point + 2] = UInt8(x >> 8) | UInt8(y & 0x0F) << 4
            common[point + 3] = UInt8(y >> 4)
        }
        common[52] = (rng.chance(1, in: 2) ? 0x10 : 0) | UInt8.random(in: 0...10, using: &rng)
        switch transport {
        case .usb: return [0x01] + common
        case .bluetooth:
            return resealed([0x31, 0] + common + [UInt8](repeating: 0, count: 13), seed: 0xA1) { _ in }
        }
    }

    @Test(arguments: HIDTransport.allCases)
    func bytesToSnapshotToBytes(transport: HIDTransport) throws {
        var rng = SplitMix64(seed: 0xD5 + UInt64(transport == .usb ? 0 : 1))
        for _ in 0..<2000 {
            let report = Self.canonicalReport(&rng, transport: transport)
            let snapshot = try DualSenseInputReport.decode(report)
            let sequence = report[transport == .usb ? 7 : 8]
            let again = DualSenseInputReport.encoded(snapshot, transport: transport, sequence: sequence)
            #expect(again == report, "\(hexDump(report))\n\(hexDump(again))")
            if again != report { return }
        }
    }

    static let snapshots: [PadSnapshot] = [
        .neutral,
        PadSnapshot(
            buttons: ButtonSet([.a, .y, .dpup, .dpleft, .guide, .misc1, .paddle1, .paddle4, .start, .rightstick]),
            leftX: -32768, leftY: 32767, rightX: -32511, rightY: -129, leftTrigger: 32767, rightTrigger: 128,
            touches: TouchContacts(
                first: TouchContact(trackingID: 3, active: true, x: 960 / 1919.0, y: 540 / 1079.0),
                second: TouchContact(trackingID: 4, active: false, x: 1, y: 0)),
            motion: MotionSample(
                gyroRadiansPerSecond: Vector3(x: Double.pi / 180 / 16 * 100, y: 0, z: -Double.pi / 180 / 16 * 32768),
                accelMetersPerSecondSquared: Vector3(x: 0, y: -9.80665, z: 9.80665 / 8192 * 32767),
                timestampMicroseconds: 123_456),
            battery: BatteryState(percent: 45, charging: true)),
    ]

    @Test(arguments: HIDTransport.allCases, snapshots)
    func snapshotToBytesToSnapshot(transport: HIDTransport, snapshot: PadSnapshot) throws {
        let decoded = try DualSenseInputReport.decode(DualSenseInputReport.encoded(snapshot, transport: transport))
        var expected = snapshot
        expected.battery = snapshot.battery == .unknown ? BatteryState(percent: 5, charging: false) : snapshot.battery
        // Sticks quantise to 8 bits: x → ((x + 32768) >> 8) * 257 - 32768 (0 → +128).
        for axis in [Axis.leftx, .lefty, .rightx, .righty] {
            expected[axis] = Int16(truncatingIfNeeded: ((Int(snapshot[axis]) + 32768) >> 8) * 257 - 32768)
        }
        // Coordinates and motion come back within rounding; compare re-encoded bytes for exactness.
        #expect(DualSenseInputReport.encoded(decoded, transport: transport) == DualSenseInputReport.encoded(expected, transport: transport))
        #expect(decoded.buttons == snapshot.buttons)
        #expect([decoded.leftX, decoded.leftY, decoded.rightX, decoded.rightY, decoded.leftTrigger, decoded.rightTrigger]
            == [expected.leftX, expected.leftY, expected.rightX, expected.rightY, snapshot.leftTrigger, snapshot.rightTrigger])
        #expect(decoded.touches.first.active == snapshot.touches.first.active)
        #expect(abs(decoded.touches.first.x - snapshot.touches.first.x) < 1e-12)
        #expect(abs(decoded.motion.accelMetersPerSecondSquared.z - snapshot.motion.accelMetersPerSecondSquared.z) < 1e-9)
        #expect(decoded.motion.timestampMicroseconds == snapshot.motion.timestampMicroseconds)
        #expect(decoded.battery == expected.battery)
    }
}
