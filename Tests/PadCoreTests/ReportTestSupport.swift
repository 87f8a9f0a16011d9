@testable import PadCore

/// Hex dump for failure messages: "01 80 80 ...".
func hexDump(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
}

/// The neutral USB input report of doc §9 step 3: `01 80 80 80 80 00 00 00 08`, zeros, bytes 33 and 37 = 0x80.
let neutralUSBInputReport: [UInt8] = {
    var bytes = [UInt8](repeating: 0, count: 64)
    bytes[0] = 0x01
    bytes[1...4] = [0x80, 0x80, 0x80, 0x80]
    bytes[8] = 0x08
    bytes[33] = 0x80
    bytes[37] = 0x80
    return bytes
}()

/// Applies `change` to `bytes` and re-seals the Bluetooth CRC (seed) if the report is 78 bytes.
func resealed(_ bytes: [UInt8], seed: UInt8, _ change: (inout [UInt8]) -> Void) -> [UInt8] {
    var copy = bytes
    change(&copy)
    if copy.count == 78 { copy.withUnsafeMutableBytes { PlayStationCRC32.seal($0, seed: seed) } }
    return copy
}

extension ReportDecodingError {
    var isChecksumMismatch: Bool { if case .checksumMismatch = self { true } else { false } }
}

/// Decodes, returning the error instead of throwing (keeps `#expect` lines short).
func decodeResult<T>(_ body: () throws(ReportDecodingError) -> T) -> Result<T, ReportDecodingError> {
    Result { () throws(ReportDecodingError) -> T in try body() }
}
