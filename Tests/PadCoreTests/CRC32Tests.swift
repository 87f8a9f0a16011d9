import Testing
@testable import PadCore

@Suite struct CRC32Tests {
    @Test func standardCheckValue() {
        // CRC-32/ISO-HDLC check value: crc32("123456789") = 0xCBF43926; "1" acts as the seed byte.
        let rest = Array("23456789".utf8)
        #expect(PlayStationCRC32.checksum(seed: UInt8(ascii: "1"), rest) == 0xCBF4_3926)
    }

    @Test func documentOutputVector() {
        // Doc §2.1: 0x31, 0x00, 0x10 + 71 zeros with seed 0xA2 → 0x231501B5 → b5 01 15 23.
        var report = [UInt8](repeating: 0, count: 78)
        report[0] = 0x31
        report[2] = 0x10
        #expect(PlayStationCRC32.checksum(seed: PlayStationCRC32.outputSeed, Array(report[0..<74])) == 0x2315_01B5)
        report.withUnsafeMutableBytes { PlayStationCRC32.seal($0, seed: PlayStationCRC32.outputSeed) }
        #expect(Array(report[74...]) == [0xB5, 0x01, 0x15, 0x23])
        #expect(report.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: PlayStationCRC32.outputSeed) })
    }

    @Test func inputSeedMatchesZlib() {
        // Oracle: python3 -c "import zlib; print(hex(zlib.crc32(b'\xa1' + bytes(range(74)))))" → 0xe8e5c431
        let bytes = (0..<74).map { UInt8($0) }
        #expect(PlayStationCRC32.checksum(seed: PlayStationCRC32.inputSeed, bytes) == 0xE8E5_C431)
    }

    @Test(arguments: [0, 1, 37, 73, 74, 77])
    func flippedByteInvalidates(position: Int) {
        var report = (0..<78).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        report.withUnsafeMutableBytes { PlayStationCRC32.seal($0, seed: PlayStationCRC32.inputSeed) }
        #expect(report.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: PlayStationCRC32.inputSeed) })
        report[position] ^= 0x01
        #expect(!report.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: PlayStationCRC32.inputSeed) })
    }

    @Test func seedMatters() {
        var report = [UInt8](repeating: 0x55, count: 78)
        report.withUnsafeMutableBytes { PlayStationCRC32.seal($0, seed: PlayStationCRC32.inputSeed) }
        #expect(!report.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: PlayStationCRC32.outputSeed) })
    }

    @Test(arguments: 0...3)
    func shortBuffersAreNeverValidAndSealIsANoOp(count: Int) {
        var bytes = [UInt8](repeating: 0xAA, count: count)
        bytes.withUnsafeMutableBytes { PlayStationCRC32.seal($0, seed: 0xA1) }
        #expect(bytes == [UInt8](repeating: 0xAA, count: count))
        #expect(!bytes.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: 0xA1) })
    }
}
