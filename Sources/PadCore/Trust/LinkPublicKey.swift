/// A machine's Curve25519 public key as padbridge's trust files hold it: 32 bytes, written as 64 lowercase hex digits.
/// `init?(bytes:)`, `init?(hex:)`, `bytes` and `hex` come from `FixedSizeBytesValue`.
public struct LinkPublicKey: FixedSizeBytesValue, CustomStringConvertible {
    public static let byteCount = 32
    public let fixedSizeBytes: FixedSizeBytes<LinkPublicKey>

    public init(fixedSizeBytes: FixedSizeBytes<LinkPublicKey>) { self.fixedSizeBytes = fixedSizeBytes }

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
