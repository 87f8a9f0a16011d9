import PadCore
import Testing

@Suite("Virtual DualSense identity")
struct VirtualDualSenseIdentityTests {
    @Test func sameSeedGivesSameAddress() {
        #expect(DualSenseIdentity(seed: "living-room").octets == DualSenseIdentity(seed: "living-room").octets)
    }

    @Test func goldenAddress() {
        // FNV-1a 64 of "test-seed" = 0x…d05bd90cff8d, low 6 bytes with 0x02 set and 0x01 cleared in the first.
        #expect(DualSenseIdentity(seed: "test-seed").uniq == "be:5b:d9:0c:ff:8d")
    }

    @Test(arguments: ["", "a", "b", "pad-1", "pad-2", "Player 1", "ünïcødé", String(repeating: "x", count: 300)])
    func addressIsLocallyAdministeredUnicast(seed: String) {
        let identity = DualSenseIdentity(seed: seed)
        #expect(identity.octets.count == 6)
        #expect(identity.octets[0] & 0x02 == 0x02, "locally administered")
        #expect(identity.octets[0] & 0x01 == 0, "unicast")
        let uniq = identity.uniq
        #expect(uniq.count == 17)
        #expect(uniq == uniq.lowercased())
        #expect(uniq.split(separator: ":").count == 6)
    }

    @Test func differentSeedsGiveDifferentAddresses() {
        let addresses = Set((0..<1000).map { DualSenseIdentity(seed: "pad-\($0)").uniq })
        #expect(addresses.count == 1000)
    }

    @Test func pairingReportCarriesTheAddressLeastSignificantByteFirst() {
        let identity = DualSenseIdentity(seed: "test-seed")
        let report = DualSenseFeatureReport.pairingInfo(identity, transport: .usb)
        // The kernel prints report bytes 6...1 as uniq (%pMR).
        let printed = (1...6).reversed().map { report[$0] }
        #expect(printed == identity.octets)
        #expect(Array(report[1...6]) == [0x8D, 0xFF, 0x0C, 0xD9, 0x5B, 0xBE])
    }
}

@Suite("Virtual DualSense feature reports")
struct VirtualDualSenseFeatureReportTests {
    static let identity = DualSenseIdentity(seed: "feature-tests")

    static let expectedSizes: [UInt8: Int] = [0x09: 20, 0x20: 64, 0x05: 41]

    @Test(arguments: [UInt8(0x09), 0x20, 0x05], HIDTransport.allCases)
    func repliesHaveExactSizeAndID(reportID: UInt8, transport: HIDTransport) throws {
        let size = try #require(Self.expectedSizes[reportID])
        let reply = try #require(DualSenseFeatureReport.reply(to: reportID, identity: Self.identity, transport: transport))
        #expect(reply.count == size)
        #expect(reply[0] == reportID)
        switch transport {
        case .bluetooth:
            #expect(reply.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: PlayStationCRC32.featureSeed) })
        case .usb:
            #expect(reply.suffix(4).allSatisfy { $0 == 0 }, "USB replies carry no CRC")
        }
    }

    @Test(arguments: [UInt8(0x00), 0x01, 0x03, 0x08, 0x22, 0x31, 0x80, 0xF0, 0xFF])
    func otherReportsAreNotServed(reportID: UInt8) {
        #expect(DualSenseFeatureReport.reply(to: reportID, identity: Self.identity, transport: .bluetooth) == nil)
    }

    @Test func bluetoothCRCMatchesKnownVector() {
        // Independent check of the seal: zlib.crc32(b"\xA3" + report[:-4]) computed in Python for this MAC.
        let report = DualSenseFeatureReport.pairingInfo(DualSenseIdentity(seed: "test-seed"), transport: .bluetooth)
        let crc = UInt32(report[16]) | UInt32(report[17]) << 8 | UInt32(report[18]) << 16 | UInt32(report[19]) << 24
        #expect(crc == PlayStationCRC32.checksum(seed: 0xA3, Array(report[0..<16])))
    }

    @Test func firmwareReportAnnouncesImprovedRumble() {
        let report = DualSenseFeatureReport.firmwareInfo(transport: .usb)
        #expect(report[44] == 0x24 && report[45] == 0x02, "update_version 0x0224, little-endian")
        #expect(String(decoding: report[1..<12], as: UTF8.self) == "Jun 19 2023")
    }

    /// The kernel's and SDL's calibration formulas (controller-protocols.md §4.2) must both come out at exactly
    /// gyro × 64 and accelerometer × 1.
    @Test func calibrationIsTheIdentitySet() {
        let report = DualSenseFeatureReport.calibration(transport: .usb)
        func value(_ offset: Int) -> Int { Int(Int16(bitPattern: UInt16(report[offset]) | UInt16(report[offset + 1]) << 8)) }
        for bias in [1, 3, 5] { #expect(value(bias) == 0) }
        let speed = value(19) + value(21)
        for axis in 0..<3 {
            let plus = value(7 + 4 * axis), minus = value(9 + 4 * axis)
            #expect(speed * 1024 / (abs(plus) + abs(minus)) == 64, "kernel gyro factor")
            #expect(speed * 1024 / (plus - minus) == 64, "SDL gyro sensitivity")
            let accelPlus = value(23 + 4 * axis), accelMinus = value(25 + 4 * axis)
            let range2g = accelPlus - accelMinus
            #expect(range2g == 16384, "kernel accel factor 16384 / range_2g == 1")
            #expect(accelPlus - range2g / 2 == 0, "accel bias 0")
        }
        #expect(report[35] == 0x0B)
    }
}

@Suite("Virtual DualSense descriptors")
struct VirtualDualSenseDescriptorTests {
    @Test func sizes() {
        #expect(DualSenseDescriptor.usb.count == 273)
        #expect(DualSenseDescriptor.bluetooth.count == 279)
        #expect(DualSenseDescriptor.bytes(for: .usb) == DualSenseDescriptor.usb)
        #expect(DualSenseDescriptor.bytes(for: .bluetooth) == DualSenseDescriptor.bluetooth)
        #expect(DualSenseDescriptor.usb.last == 0xC0 && DualSenseDescriptor.bluetooth.last == 0xC0)
    }

    /// Walks the descriptor's short items and sums report bits per (kind, report ID), in bytes, without the ID.
    static func reportSizes(_ descriptor: [UInt8]) -> [String: Int] {
        var sizes: [String: Int] = [:]
        var reportID = 0, reportSize = 0, reportCount = 0
        var index = 0
        while index < descriptor.count {
            let prefix = descriptor[index]
            let length = [0, 1, 2, 4][Int(prefix & 0x03)]
            var value = 0
            for byte in 0..<length where index + 1 + byte < descriptor.count {
                value |= Int(descriptor[index + 1 + byte]) << (8 * byte)
            }
            switch prefix & 0xFC {
            case 0x84: reportID = value
            case 0x74: reportSize = value
            case 0x94: reportCount = value
            case 0x80: sizes["input \(reportID)", default: 0] += reportSize * reportCount
            case 0x90: sizes["output \(reportID)", default: 0] += reportSize * reportCount
            case 0xB0: sizes["feature \(reportID)", default: 0] += reportSize * reportCount
            default: break
            }
            index += 1 + length
        }
        return sizes.mapValues { $0 / 8 }
    }

    @Test func usbReportSizes() {
        let sizes = Self.reportSizes(DualSenseDescriptor.usb)
        #expect(sizes["input 1"] == 63)
        #expect(sizes["output 2"] == 47)
        #expect(sizes["feature 5"] == 40)
        #expect(sizes["feature 9"] == 19)
        #expect(sizes["feature 32"] == 63)
    }

    @Test func bluetoothReportSizes() {
        let sizes = Self.reportSizes(DualSenseDescriptor.bluetooth)
        #expect(sizes["input 1"] == 9)
        #expect(sizes["input 49"] == 77)
        #expect(sizes["output 49"] == 77)
        #expect(sizes["feature 5"] == 40)
        #expect(sizes["feature 9"] == 19)
        #expect(sizes["feature 32"] == 63)
    }
}
