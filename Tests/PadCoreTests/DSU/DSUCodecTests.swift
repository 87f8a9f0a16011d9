import PadCore
import PadTestSupport
import Testing

/// The DSU codec against the protocol's description (https://v1993.github.io/cemuhook-protocol/). The golden bytes
/// were built from that description with Python's struct and zlib.crc32, not with padbridge.
@Suite struct DSUCodecTests {
    /// A version request from client 0x12345678: "DSUC", 1001, 4 bytes after the header, CRC-32 0xB77BBCC9.
    static let versionRequest: [UInt8] = [
        0x44, 0x53, 0x55, 0x43, 0xE9, 0x03, 0x04, 0x00, 0xC9, 0xBC, 0x7B, 0xB7, 0x78, 0x56, 0x34, 0x12,
        0x00, 0x00, 0x10, 0x00,
    ]
    /// The port-info request Dolphin sends: four ports, slots 0 to 3 (CRC-32 0x284DB23D).
    static let portInfoRequest: [UInt8] = [
        0x44, 0x53, 0x55, 0x43, 0xE9, 0x03, 0x0C, 0x00, 0x3D, 0xB2, 0x4D, 0x28, 0x78, 0x56, 0x34, 0x12,
        0x01, 0x00, 0x10, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03,
    ]
    /// A pad-data request for slot 0 (flags 1), CRC-32 0xBDCE37A6.
    static let padDataRequest: [UInt8] = [
        0x44, 0x53, 0x55, 0x43, 0xE9, 0x03, 0x0C, 0x00, 0xA6, 0x37, 0xCE, 0xBD, 0x78, 0x56, 0x34, 0x12,
        0x02, 0x00, 0x10, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]

    @Test func knownRequestsDecode() throws {
        #expect(try DSURequest(decoding: Self.versionRequest) == DSURequest(clientID: 0x1234_5678, message: .version))
        #expect(
            try DSURequest(decoding: Self.portInfoRequest)
                == DSURequest(clientID: 0x1234_5678, message: .portInfo(.all)))
        #expect(
            try DSURequest(decoding: Self.padDataRequest)
                == DSURequest(clientID: 0x1234_5678, message: .padData(DSUPadSelection(slot: 0))))
    }

    @Test func knownRequestsEncodeToTheSameBytes() {
        #expect(DSURequest(clientID: 0x1234_5678, message: .version).encoded() == Self.versionRequest)
        #expect(DSURequest(clientID: 0x1234_5678, message: .portInfo(.all)).encoded() == Self.portInfoRequest)
        #expect(
            DSURequest(clientID: 0x1234_5678, message: .padData(DSUPadSelection(slot: 0))).encoded() == Self.padDataRequest)
    }

    @Test func theChecksumIsZlibsCRC32OverTheDatagramWithItsFieldZeroed() {
        #expect(crc(Self.versionRequest) == 0xB77B_BCC9)
    }

    @Test func aFlippedByteIsACRCMismatch() {
        var bytes = Self.padDataRequest
        bytes[21] ^= 0x01
        #expect(throws: DSURequestError.checksumMismatch(expected: crc(bytes), actual: 0xBDCE_37A6)) {
            try DSURequest(decoding: bytes)
        }
    }

    @Test func headerChecks() {
        var server = Self.versionRequest
        server[3] = UInt8(ascii: "S")
        #expect(throws: DSURequestError.notAClientMessage) { try DSURequest(decoding: server) }
        var version = Self.versionRequest
        version[4] = 0xEA
        #expect(throws: DSURequestError.unsupportedVersion(1002)) { try DSURequest(decoding: version) }
        #expect(throws: DSURequestError.truncated(expected: 20, actual: 19)) {
            try DSURequest(decoding: Array(Self.versionRequest.prefix(19)))
        }
        // The header says 12 bytes follow; 8 do.
        #expect(throws: DSURequestError.truncated(expected: 28, actual: 24)) {
            try DSURequest(decoding: Array(Self.padDataRequest.prefix(24)))
        }
    }

    /// "Drop packet if it's too short, truncate if it's too long."
    @Test func extraBytesAfterTheStatedLengthAreCutOff() throws {
        #expect(try DSURequest(decoding: Self.versionRequest + [1, 2, 3]).message == .version)
    }

    @Test func unofficialMessagesAndImpossiblePortCountsAreRefused() {
        let rumble = sealed(type: 0x11_0002, payload: [1, 0, 0, 0, 0, 0, 0, 0, 0, 255])
        #expect(throws: DSURequestError.unsupportedMessageType(0x11_0002)) { try DSURequest(decoding: rumble) }
        let five = sealed(type: 0x10_0001, payload: [5, 0, 0, 0, 0, 1, 2, 3, 4])
        #expect(throws: DSURequestError.badPortCount(5)) { try DSURequest(decoding: five) }
        let negative = sealed(type: 0x10_0001, payload: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: DSURequestError.badPortCount(-1)) { try DSURequest(decoding: negative) }
        let short = sealed(type: 0x10_0001, payload: [3, 0, 0, 0, 0])
        #expect(throws: DSURequestError.truncated(expected: 27, actual: 25)) { try DSURequest(decoding: short) }
    }

    @Test func aMACRegistrationReadsTheMACMostSignificantByteFirst() throws {
        let request = sealed(type: 0x10_0002, payload: [2, 0, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        let decoded = try DSURequest(decoding: request)
        #expect(decoded.message == .padData(DSUPadSelection(mac: DSUMACAddress(parsing: "aa:bb:cc:dd:ee:ff"))))
        #expect(decoded.encoded() == request)
    }

    @Test func randomBytesThrowOrDecodeNeverTrap() {
        var random = SplitMix64(seed: 0xD5)
        for round in 0..<20_000 {
            let count = Int(random.next() % 64)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            // Half of them with a DSUC header and a valid CRC, so the paths past the checks are reached.
            if round % 2 == 0, bytes.count >= 20 {
                bytes.replaceSubrange(0..<6, with: [0x44, 0x53, 0x55, 0x43, 0xE9, 0x03])
                bytes[6] = UInt8(bytes.count - 16)
                bytes[7] = 0
                bytes[16] = UInt8.random(in: 0...2, using: &random)
                bytes.replaceSubrange(17..<20, with: [0x00, 0x10, 0x00])
                bytes.withUnsafeMutableBytes { DSUChecksum.seal($0) }
            }
            do {
                let request = try DSURequest(decoding: bytes)
                #expect(try DSURequest(decoding: request.encoded()) == request)
            } catch {
                _ = error.description
            }
        }
    }

    /// A 90 °/s turn to the right (clockwise seen from above: the model's yaw, about +y, is negative) reads +90 in
    /// DSU's yaw, as Dolphin's "Gyro Yaw Right"; the far end rising (the model's +x) is +pitch; the right side going
    /// down (the model's -z) is +roll; a pad lying flat (the model's +1 g on y) reads -1 g on DSU's y.
    @Test func motionTakesDSUsUnitsAndSigns() {
        let right = DSUMotionReading(MotionSample(gyroRadiansPerSecond: Vector3(x: 0, y: -.pi / 2, z: 0)))
        #expect(right.yawDegreesPerSecond == 90)
        #expect(right.pitchDegreesPerSecond == 0 && right.rollDegreesPerSecond == 0)
        let pitchUp = DSUMotionReading(MotionSample(gyroRadiansPerSecond: Vector3(x: .pi / 4, y: 0, z: 0)))
        #expect(pitchUp.pitchDegreesPerSecond == 45)
        let rollRight = DSUMotionReading(MotionSample(gyroRadiansPerSecond: Vector3(x: 0, y: 0, z: -.pi)))
        #expect(rollRight.rollDegreesPerSecond == 180)
        let flat = DSUMotionReading(
            MotionSample(accelMetersPerSecondSquared: Vector3(x: 0, y: standardGravityMetersPerSecondSquared, z: 0)))
        #expect(flat.accelYG == -1 && flat.accelXG == 0 && flat.accelZG == 0)
        let pushedRight = DSUMotionReading(MotionSample(accelMetersPerSecondSquared: Vector3(x: 9.80665 / 2, y: 0, z: -9.80665)))
        #expect(pushedRight.accelXG == -0.5 && pushedRight.accelZG == 1)
    }

    /// A whole pad-data reply, byte for byte, against one built from the description with Python (its CRC-32
    /// 0xE1167D74 at bytes 8-11).
    @Test func aPadDataReplyIsTheDescriptionsHundredBytes() {
        var snapshot = PadSnapshot.neutral
        snapshot[.a] = true
        snapshot[.dpup] = true
        snapshot[.start] = true
        snapshot.leftX = 32767
        snapshot.leftY = -32768
        snapshot.rightTrigger = 32767
        snapshot.touches.first = TouchContact(trackingID: 5, active: true, x: 0.5, y: 1)
        snapshot.motion = MotionSample(
            gyroRadiansPerSecond: Vector3(x: 0, y: -.pi / 2, z: 0),
            accelMetersPerSecondSquared: Vector3(x: 0, y: standardGravityMetersPerSecondSquared, z: 0),
            timestampMicroseconds: 999)
        let pad = DSUPadState(
            snapshot: snapshot, mac: DSUMACAddress(parsing: "AA:BB:CC:DD:EE:FF")!, connection: .bluetooth,
            motion: .fullGyro, battery: BatteryState(percent: 80, charging: false))
        var bytes = [UInt8](repeating: 0xEE, count: 128)
        let count = bytes.withUnsafeMutableBytes {
            DSUReply.encodePadData(
                slot: 0, pad: pad, packetNumber: 7, motionTimestampMicroseconds: 1_000_000, serverID: 0xCAFE_F00D, into: $0)
        }
        let expected = hex(
            "44535553e9035400747d16e10df0feca0200100000020202aabbccddeeff04010700000018220000ffff8080000000ff0000ff00"
                + "0000ff000105c003ad0300000000000040420f000000000000000000000080bf00000000000000000000b44200000000")
        #expect(count == 100)
        #expect(Array(bytes.prefix(count)) == expected)
    }

    @Test func restampingChangesOnlyThePacketNumberAndTheCRC() {
        let pad = DSUPadState(snapshot: .neutral, mac: .none, connection: .usb, motion: .fullGyro)
        var first = [UInt8](repeating: 0, count: 100)
        var second = first
        first.withUnsafeMutableBytes {
            _ = DSUReply.encodePadData(slot: 1, pad: pad, packetNumber: 1, motionTimestampMicroseconds: 5, serverID: 9, into: $0)
            DSUReply.restamp($0, packetNumber: 0x0102_0304)
        }
        second.withUnsafeMutableBytes {
            _ = DSUReply.encodePadData(
                slot: 1, pad: pad, packetNumber: 0x0102_0304, motionTimestampMicroseconds: 5, serverID: 9, into: $0)
        }
        #expect(first == second)
        #expect(Array(first[32..<36]) == [4, 3, 2, 1])
    }

    @Test func versionAndPortInfoReplies() {
        var bytes = [UInt8](repeating: 0xEE, count: 32)
        let length = bytes.withUnsafeMutableBytes { DSUReply.encodeVersion(serverID: 1, into: $0) }
        #expect(length == 22)
        #expect(Array(bytes[0..<8]) == [0x44, 0x53, 0x55, 0x53, 0xE9, 0x03, 0x06, 0x00])
        #expect(Array(bytes[16..<22]) == [0x00, 0x00, 0x10, 0x00, 0xE9, 0x03])
        #expect(crc(Array(bytes[0..<22])) == le32(bytes, 8))

        let pad = DSUPadState(
            snapshot: .neutral, mac: DSUMACAddress(rawValue: 0x0102_0304_0506), connection: .usb, motion: .fullGyro,
            battery: BatteryState(percent: 40, charging: true))
        _ = bytes.withUnsafeMutableBytes { DSUReply.encodePortInfo(slot: 2, pad: pad, serverID: 1, into: $0) }
        #expect(Array(bytes[16..<32]) == [0x01, 0x00, 0x10, 0x00, 2, 2, 2, 1, 1, 2, 3, 4, 5, 6, 0xEE, 0])
        _ = bytes.withUnsafeMutableBytes { DSUReply.encodePortInfo(slot: 3, pad: nil, serverID: 1, into: $0) }
        #expect(Array(bytes[20..<32]) == [3] + [UInt8](repeating: 0, count: 11))
    }

    @Test(arguments: [
        (Int16.min, false, UInt8(0)), (0, false, 128), (Int16.max, false, 255),
        (Int16.min, true, 255), (0, true, 128), (Int16.max, true, 0),
    ])
    func sticksUseTheWholeByteWithYUp(value: Int16, upward: Bool, byte: UInt8) {
        #expect(DSUReply.stickByte(value, upward: upward) == byte)
    }

    @Test func batteryCodes() {
        #expect(DSUReply.batteryCode(nil) == 0)
        #expect(DSUReply.batteryCode(.unknown) == 0)
        #expect(DSUReply.batteryCode(BatteryState(percent: 5, charging: false)) == 1)
        #expect(DSUReply.batteryCode(BatteryState(percent: 95, charging: false)) == 5)
        #expect(DSUReply.batteryCode(BatteryState(percent: 50, charging: true)) == 0xEE)
        #expect(DSUReply.batteryCode(BatteryState(percent: 100, charging: true)) == 0xEF)
    }

    @Test func macAddresses() {
        #expect(DSUMACAddress(parsing: "aa:bb:cc:dd:ee:ff")?.rawValue == 0xAABB_CCDD_EEFF)
        #expect(DSUMACAddress(parsing: "aa:bb:cc:dd:ee") == nil)
        #expect(DSUMACAddress(parsing: "aa:bb:cc:dd:ee:fg") == nil)
        #expect(DSUMACAddress(rawValue: 0xAABB_CCDD_EEFF).description == "aa:bb:cc:dd:ee:ff")
        // A made-up one: locally administered (bit 1 of the first byte), unicast (bit 0 clear), stable.
        let made = DSUMACAddress(locallyAdministeredFrom: "386916c933a1")
        #expect(made?.description == "3a:69:16:c9:33:a1")
        #expect(DSUMACAddress(locallyAdministeredFrom: "0123") == nil)
    }

    private func sealed(type: UInt32, payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [0x44, 0x53, 0x55, 0x43, 0xE9, 0x03, UInt8(4 + payload.count), 0, 0, 0, 0, 0, 1, 0, 0, 0]
        bytes += [UInt8(type & 0xFF), UInt8(type >> 8 & 0xFF), UInt8(type >> 16 & 0xFF), UInt8(type >> 24)] + payload
        bytes.withUnsafeMutableBytes { DSUChecksum.seal($0) }
        return bytes
    }

    private func crc(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { DSUChecksum.crc($0) } }
    private func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }
    private func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
