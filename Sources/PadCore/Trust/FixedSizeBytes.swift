/// A length in bytes, named by a type: what `FixedSizeBytes<Length>` holds exactly. The types that hold one name their
/// own (`LinkPublicKey.byteCount` is 32, `KeyFingerprint.byteCount` 16). `byteCount` must be a constant.
public protocol FixedByteCount {
    static var byteCount: Int { get }
}

/// Exactly `Length.byteCount` bytes. The only ways to make one are the failable initialisers, which check the count,
/// so a value never holds another number of bytes; and `Length` is part of the type, so a 16-byte value cannot stand
/// where a 32-byte one is wanted. Ordered byte by byte (lexicographically).
public struct FixedSizeBytes<Length: FixedByteCount>: Sendable, Hashable, Comparable {
    /// The `Length.byteCount` bytes.
    public let bytes: [UInt8]

    /// nil unless `bytes` holds exactly `Length.byteCount` bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Length.byteCount else { return nil }
        self.bytes = Array(bytes)
    }

    /// nil unless `hex` is exactly 2 × `Length.byteCount` hex digits (either case).
    public init?(hex: some StringProtocol) {
        guard let bytes = HexBytes.decode(hex), bytes.count == Length.byteCount else { return nil }
        self.bytes = bytes
    }

    /// 2 × `Length.byteCount` lowercase hex digits.
    public var hex: String { HexBytes.encode(bytes) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

/// A value that is exactly `byteCount` bytes (a key, a fingerprint), held as a `FixedSizeBytes` of its own length. It
/// gets the checked initialisers `init?(bytes:)` and `init?(hex:)`, and `bytes` and `hex`, from here.
public protocol FixedSizeBytesValue: FixedByteCount, Sendable, Hashable {
    init(fixedSizeBytes: FixedSizeBytes<Self>)
    var fixedSizeBytes: FixedSizeBytes<Self> { get }
}

extension FixedSizeBytesValue {
    /// nil unless `bytes` holds exactly `byteCount` bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard let fixedSizeBytes = FixedSizeBytes<Self>(bytes: bytes) else { return nil }
        self.init(fixedSizeBytes: fixedSizeBytes)
    }

    /// nil unless `hex` is exactly 2 × `byteCount` hex digits (either case).
    public init?(hex: some StringProtocol) {
        guard let fixedSizeBytes = FixedSizeBytes<Self>(hex: hex) else { return nil }
        self.init(fixedSizeBytes: fixedSizeBytes)
    }

    /// The `byteCount` raw bytes.
    public var bytes: [UInt8] { fixedSizeBytes.bytes }

    /// 2 × `byteCount` lowercase hex digits.
    public var hex: String { fixedSizeBytes.hex }
}
