/// CRC-32 as Sony pads use it on Bluetooth (doc §1.1, §2.1): the zlib/IEEE CRC (reflected polynomial 0xEDB88320,
/// init 0xFFFFFFFF, final XOR 0xFFFFFFFF) over one seed byte (the Bluetooth HIDP header) followed by the report
/// bytes, stored little-endian in the report's last four bytes. Table-driven; never allocates after the table's
/// one-time initialisation.
public enum PlayStationCRC32 {
    /// Seed for input reports (HIDP DATA|INPUT).
    public static let inputSeed: UInt8 = 0xA1
    /// Seed for output reports (HIDP DATA|OUTPUT).
    public static let outputSeed: UInt8 = 0xA2
    /// Seed for feature reports (HIDP DATA|FEATURE).
    public static let featureSeed: UInt8 = 0xA3

    static let table: [UInt32] = (0..<256).map { index -> UInt32 in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }

    @inline(__always)
    static func update(_ crc: UInt32, _ byte: UInt8) -> UInt32 {
        table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
    }

    /// CRC of `seed` followed by `bytes`.
    public static func checksum(seed: UInt8, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = update(0xFFFF_FFFF, seed)
        for byte in bytes { crc = update(crc, byte) }
        return ~crc
    }

    public static func checksum(seed: UInt8, _ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum(seed: seed, $0) }
    }

    /// Writes the CRC of `buffer[0 ..< count - 4]` little-endian into the last 4 bytes.
    /// A buffer shorter than 4 bytes is left unchanged.
    public static func seal(_ buffer: UnsafeMutableRawBufferPointer, seed: UInt8) {
        guard buffer.count >= 4 else { return }
        let end = buffer.count - 4
        let crc = checksum(seed: seed, UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<end]))
        ReportBytes.storeUInt32(crc, into: buffer, at: end)
    }

    /// Whether the last 4 bytes hold the CRC of the bytes before them. False for fewer than 4 bytes.
    public static func isValid(_ bytes: UnsafeRawBufferPointer, seed: UInt8) -> Bool {
        stored(bytes, seed: seed).map { $0.computed == $0.stored } ?? false
    }

    /// Computed and stored CRC of a report whose last 4 bytes are the trailer; nil for fewer than 4 bytes.
    static func stored(_ bytes: UnsafeRawBufferPointer, seed: UInt8) -> (computed: UInt32, stored: UInt32)? {
        guard bytes.count >= 4 else { return nil }
        let end = bytes.count - 4
        let computed = checksum(seed: seed, UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
        return (computed, ReportBytes.loadUInt32(bytes, at: end))
    }

    /// Checks the CRC of the first `length` bytes (caller guarantees `bytes.count >= length >= 4`).
    static func verify(_ bytes: UnsafeRawBufferPointer, length: Int, seed: UInt8) throws(ReportDecodingError) {
        guard let crc = stored(UnsafeRawBufferPointer(rebasing: bytes[0..<length]), seed: seed) else {
            throw .truncated(expected: length, actual: bytes.count)
        }
        guard crc.computed == crc.stored else {
            throw .checksumMismatch(expected: crc.computed, actual: crc.stored)
        }
    }
}
