/// Why bytes from the network are not a link message. Decoding is total: any bytes give a value or this.
public enum LinkDecodingError: Error, Sendable, Hashable {
    /// The bytes end before a field (`needed` more bytes at `offset`).
    case truncated(offset: Int, needed: Int)
    /// A version this side does not speak.
    case unsupportedVersion(UInt8)
    /// A field holds a value it may not (a count beyond its limit, an unknown kind).
    case invalid(field: String)
}

/// Little-endian writing into a growing buffer.
public struct LinkByteWriter: Sendable {
    public var bytes: [UInt8] = []

    public init() {}

    public mutating func u8(_ value: UInt8) { bytes.append(value) }
    public mutating func u16(_ value: UInt16) { for shift in [0, 8] as [UInt16] { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) } }
    public mutating func u32(_ value: UInt32) { for index in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(index)))) } }
    public mutating func u64(_ value: UInt64) { for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) } }
    public mutating func i16(_ value: Int16) { u16(UInt16(bitPattern: value)) }
    public mutating func f32(_ value: Double) { u32(Float(value).bitPattern) }
    /// Up to `limit` bytes of UTF-8 (whole characters: cut before the first that does not fit), length-prefixed
    /// (one byte).
    public mutating func text(_ value: String, limit: Int = 255) {
        let room = min(limit, 255)
        var utf8: [UInt8] = []
        for scalar in value.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            guard utf8.count + encoded.count <= room else { break }
            utf8 += encoded
        }
        u8(UInt8(utf8.count))
        bytes += utf8
    }
}

/// Little-endian reading that never traps: every read checks the length and throws `LinkDecodingError`.
public struct LinkByteReader: Sendable {
    let bytes: [UInt8]
    public private(set) var offset = 0

    public init(_ bytes: some Collection<UInt8>) { self.bytes = Array(bytes) }

    public var isAtEnd: Bool { offset == bytes.count }
    public var remaining: Int { bytes.count - offset }
    /// Everything not read yet (and the reader at the end).
    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    public mutating func take(_ count: Int) throws(LinkDecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - offset >= count else { throw .truncated(offset: offset, needed: count) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    public mutating func u8() throws(LinkDecodingError) -> UInt8 { try take(1).first! }

    public mutating func u16() throws(LinkDecodingError) -> UInt16 {
        let slice = try take(2)
        return UInt16(slice[slice.startIndex]) | UInt16(slice[slice.startIndex + 1]) << 8
    }

    public mutating func u32() throws(LinkDecodingError) -> UInt32 {
        var value: UInt32 = 0
        for (index, byte) in try take(4).enumerated() { value |= UInt32(byte) << (8 * UInt32(index)) }
        return value
    }

    public mutating func u64() throws(LinkDecodingError) -> UInt64 {
        var value: UInt64 = 0
        for (index, byte) in try take(8).enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
        return value
    }

    public mutating func i16() throws(LinkDecodingError) -> Int16 { Int16(bitPattern: try u16()) }

    /// A Float32, as a Double; NaN and infinities read as 0 (a reading from the network must not poison math).
    public mutating func f32() throws(LinkDecodingError) -> Double {
        let value = Double(Float(bitPattern: try u32()))
        return value.isFinite ? value : 0
    }

    /// A length-prefixed text of at most `limit` bytes (`field` names it in the error when it is longer).
    public mutating func text(limit: Int = 255, field: String = "text") throws(LinkDecodingError) -> String {
        let length = Int(try u8())
        guard length <= limit else { throw .invalid(field: field) }
        return String(decoding: try take(length), as: UTF8.self)
    }
}
