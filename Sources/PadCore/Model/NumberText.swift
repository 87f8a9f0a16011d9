/// Numbers as text: a fixed number of decimals, or a fixed number of hex digits, without Foundation's formatters
/// (PadCore imports nothing).
public enum NumberText {
    /// `value` with exactly `places` decimals ("-0.25", "250.0"); a non-finite value as Swift prints it.
    public static func fixed(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int64(scaled / scale)
        let fraction = Int64(scaled) - whole * Int64(scale)
        let digits = String(fraction)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard places > 0 else { return sign + String(whole) }
        return sign + String(whole) + "." + String(repeating: "0", count: max(0, places - digits.count)) + digits
    }

    /// `value` as exactly four lowercase hex digits ("054c"), as ids are written.
    public static func hex4(_ value: UInt16) -> String { hex(value, digits: 4) }

    /// `value` as exactly two lowercase hex digits ("0b").
    public static func hex2(_ value: UInt8) -> String { hex(value, digits: 2) }

    private static func hex(_ value: some BinaryInteger, digits count: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, count - digits.count)) + digits
    }
}
