/// Why a report decoder rejected its bytes. Decoders never trap: every input either decodes or throws one of these.
public enum ReportDecodingError: Error, Sendable, Hashable {
    /// The report ID is known but the report is shorter than that report's size.
    case truncated(expected: Int, actual: Int)
    /// Byte 0 is not a report ID this decoder handles.
    case unknownReportID(UInt8)
    /// Bluetooth CRC-32 trailer is wrong. `expected` is the CRC computed over the bytes received,
    /// `actual` the value stored in the report's last four bytes.
    case checksumMismatch(expected: UInt32, actual: UInt32)
    /// Zero bytes.
    case empty
}
