import PadTestSupport
import Testing
@testable import PadCore

@Suite struct ReportDualShock4Tests {
    /// A USB 0x01 report with common-block bytes c+N → byte N+1; neutral sticks, hat released, touches lifted.
    static func usb(_ fields: [Int: UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 64)
        bytes[0] = 0x01
        bytes[1...4] = [0x80, 0x80, 0x80, 0x80]
        bytes[5] = 0x08
        bytes[33] = 1
        bytes[35] = 0x80
        bytes[39] = 0x80
        for (offset, value) in fields { bytes[offset + 1] = value }
        return bytes
    }

    static func decode(_ bytes: [UInt8]) -> Result<PadSnapshot, ReportDecodingError> {
        decodeResult { () throws(ReportDecodingError) in try DualShock4InputReport.decode(bytes) }
    }

    @Test func neutralUSB() throws {
        let expected = PadSnapshot(leftX: 128, leftY: 128, rightX: 128, rightY: 128, battery: BatteryState(percent: 0, charging: false))
        #expect(try DualShock4InputReport.decode(Self.usb([:])) == expected)
        #expect(DualShock4InputReport.encoded(expected, transport: .usb) == Self.usb([:]))
    }

    @Test func fields() throws {
        // hat NE + Triangle; L1 + Share; PS + pad click + counter; L2 255; timestamp 3; gyro pitch 16; accel z 8192;
        // battery 5 on cable; touch 0 at X 1919, Y 941 (0x3AD), id 9.
        let s = try DualShock4InputReport.decode(Self.usb([
            4: 0x81, 5: 0x11, 6: 0xFF, 7: 0xFF, 9: 3, 12: 16, 22: 0x00, 23: 0x20, 29: 0x15,
            34: 0x09, 35: 0x7F, 36: 0xD7, 37: 0x3A,
        ]))
        #expect(s.buttons == ButtonSet([.dpup, .dpright, .y, .leftshoulder, .back, .guide, .touchpad]))
        #expect(s.leftTrigger == 32767 && s.rightTrigger == 0)
        #expect(s.motion.timestampMicroseconds == 16)
        #expect(abs(s.motion.gyroRadiansPerSecond.x - Double.pi / 180) < 1e-12)
        #expect(s.motion.accelMetersPerSecondSquared == Vector3(x: 0, y: 0, z: 9.80665))
        #expect(s.battery == BatteryState(percent: 50, charging: true))
        #expect(s.touches.first == TouchContact(trackingID: 9, active: true, x: 1, y: 1))
        #expect(s.touches.second.active == false)
    }

    @Test(arguments: [
        (UInt8(0x00), BatteryState(percent: 0, charging: false)), (0x07, .init(percent: 70, charging: false)),
        (0x1A, .init(percent: 100, charging: true)), (0x1B, .init(percent: 100, charging: false)),
        (0x0B, .init(percent: 100, charging: false)), (0x13, .init(percent: 30, charging: true)),
    ])
    func battery(raw: UInt8, state: BatteryState) throws {
        #expect(try DualShock4InputReport.decode(Self.usb([29: raw])).battery == state)
    }

    @Test func everyTimestampTickRoundTrips() {
        var out = [UInt8](repeating: 0, count: 64)
        for raw in 0...Int(UInt16.max) {
            let bytes = Self.usb([9: UInt8(raw & 0xFF), 10: UInt8(raw >> 8)])
            let snapshot = bytes.withUnsafeBytes { DualShock4InputReport.decodeCommon($0, at: 1) }
            out.withUnsafeMutableBytes { DualShock4InputReport.encodeCommon(snapshot, sequence: 0, into: $0, at: 1) }
            if Int(out[10]) | Int(out[11]) << 8 != raw { Issue.record("tick \(raw)"); return }
        }
    }

    @Test func shortBluetoothReport() throws {
        // 0x01, LX, LY, RX, RY, hat+face, buttons[1], PS/pad/counter, L2, R2.
        let s = try DualShock4InputReport.decode([0x01, 0, 255, 0x80, 0x80, 0x24, 0x20, 0x05, 0, 255])
        #expect(s == PadSnapshot(buttons: ButtonSet([.dpdown, .a, .start, .guide]), leftX: -32768, leftY: 32767,
                                 rightX: 128, rightY: 128, rightTrigger: 32767))
        #expect(Self.decode([0x01, 0, 0]) == .failure(.truncated(expected: 10, actual: 3)))
    }

    @Test func bluetoothFramingAndCRC() throws {
        let snapshot = try DualShock4InputReport.decode(Self.usb([0: 7, 4: 0x20, 29: 0x08]))
        let bytes = DualShock4InputReport.encoded(snapshot, transport: .bluetooth, sequence: 3)
        #expect(bytes.count == 78 && bytes[0] == 0x11 && bytes[3] == 7 && bytes[9] == 0x0C)
        #expect(try DualShock4InputReport.decode(bytes) == snapshot)
        var flipped = bytes
        flipped[50] ^= 1
        guard case let .failure(error) = Self.decode(flipped) else { Issue.record("decoded"); return }
        #expect(error.isChecksumMismatch)
        #expect(Self.decode(Array(bytes[0..<77])) == .failure(.truncated(expected: 78, actual: 77)))
        #expect(Self.decode([0x31]) == .failure(.unknownReportID(0x31)))
    }

    @Test(arguments: HIDTransport.allCases)
    func randomSnapshotsAreStable(transport: HIDTransport) throws {
        var rng = SplitMix64(seed: 0xD54)
        for _ in 0..<1000 {
            var raw = Self.usb([:])
            for i in 1..<64 { raw[i] = rng.byte() }
            raw[0] = 0x01
            let first = try DualShock4InputReport.decode(raw)
            let second = try DualShock4InputReport.decode(DualShock4InputReport.encoded(first, transport: transport))
            #expect(second == first)
            if second != first { return }
        }
    }

    // MARK: Output

    @Test(arguments: HIDTransport.allCases)
    func outputFraming(transport: HIDTransport) throws {
        let feedback = Feedback(rumble: Rumble(strong: 1, weak: 0.2), lightbar: LightbarColor(red: 0x20, green: 0, blue: 0x20))
        let bytes = DualShock4OutputReport.encoded(feedback, transport: transport)
        switch transport {
        case .usb:
            var expected = [UInt8](repeating: 0, count: 32)
            expected[0...8] = [0x05, 0x03, 0, 0, 51, 255, 0x20, 0, 0x20]
            #expect(bytes == expected)
        case .bluetooth:
            #expect(bytes.count == 78)
            #expect(Array(bytes[0...10]) == [0x11, 0xC4, 0, 0x03, 0, 0, 51, 255, 0x20, 0, 0x20])
            #expect(bytes.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: 0xA2) })
        }
        #expect(try DualShock4OutputReport.decode(bytes) == feedback)
    }

    @Test(arguments: HIDTransport.allCases, [
        Feedback(), Feedback(rumble: .off), Feedback(lightbar: LightbarColor(red: 1, green: 2, blue: 3)),
        Feedback(rumble: Rumble(strong: 0, weak: 1)),
    ])
    func outputRoundTrip(transport: HIDTransport, feedback: Feedback) throws {
        #expect(try DualShock4OutputReport.decode(DualShock4OutputReport.encoded(feedback, transport: transport)) == feedback)
    }

    @Test func outputIgnoresWhatADS4CannotShow() {
        let bytes = DualShock4OutputReport.encoded(Feedback(playerLeds: 3, micLed: true, leftTrigger: .off), transport: .usb)
        #expect(bytes == [0x05] + [UInt8](repeating: 0, count: 31))
    }

    @Test func outputErrors() {
        func decode(_ bytes: [UInt8]) -> Result<Feedback, ReportDecodingError> {
            decodeResult { () throws(ReportDecodingError) in try DualShock4OutputReport.decode(bytes) }
        }
        #expect(decode([0x05] + [UInt8](repeating: 0, count: 30)) == .failure(.truncated(expected: 32, actual: 31)))
        #expect(decode([0x02]) == .failure(.unknownReportID(0x02)))
        var bt = DualShock4OutputReport.encoded(Feedback(rumble: .off), transport: .bluetooth)
        bt[7] = 1
        guard case let .failure(error) = decode(bt) else { Issue.record("decoded"); return }
        #expect(error.isChecksumMismatch)
    }
}
