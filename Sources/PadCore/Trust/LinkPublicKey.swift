/// A machine's Curve25519 public key as padbridge's trust files hold it: 32 bytes, written as 64 lowercase hex digits.
public struct LinkPublicKey: Sendable, Hashable, CustomStringConvertible {
    public static let byteCount = 32
    /// The 32 raw bytes.
    public let bytes: [UInt8]

    /// nil unless `bytes` holds exactly 32 bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = Array(bytes)
    }

    /// nil unless `hex` is exactly 64 hex digits (either case).
    public init?(hex: some StringProtocol) {
        guard let bytes = HexBytes.decode(hex), bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    public var hex: String { HexBytes.encode(bytes) }
    public var description: String { hex }
}

/// Hex text and bytes. Total: anything that is not an even number of hex digits decodes to nil.
public enum HexBytes {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
