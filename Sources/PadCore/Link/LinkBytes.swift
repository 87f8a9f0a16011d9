/// Why bytes from the network are not a link message. Decoding is total: any bytes give a value or this.
public enum LinkDecodingError: Error, Sendable, Hashable {
    /// The bytes end before a field (`needed` more bytes at `offset`).
    case truncated(offset: Int, needed: Int)
    /// A version this side does not speak.
    case unsupportedVersion(UInt8)
    /// A field holds a value it may not (a count beyond its limit, an unknown kind).
    case invalid(field: String)
}

/// Little-endian writing into a growing buffer. Reusable without allocating: `reset()` keeps the capacity, so a
/// writer kept for the next message writes every byte into memory it already has.
public struct LinkByteWriter: Sendable {
    public var bytes: [UInt8] = []

    public init() {}

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Empties the buffer, keeping its capacity.
    @inlinable public mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    @inlinable public var count: Int { bytes.count }

    @inlinable public mutating func u8(_ value: UInt8) { bytes.append(value) }
    @inlinable public mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }
    @inlinable public mutating func u32(_ value: UInt32) {
        for index in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(index)))) }
    }
    @inlinable public mutating func u64(_ value: UInt64) {
        for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
    @inlinable public mutating func i16(_ value: Int16) { u16(UInt16(bitPattern: value)) }
    @inlinable public mutating func f32(_ value: Double) { u32(Float(value).bitPattern) }
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

    /// Overwrites the byte at `offset` (a count written before what it counts was known).
    @inlinable public mutating func patch(_ value: UInt8, at offset: Int) { bytes[offset] = value }

    /// Appends `count` bytes that `body` writes through a cursor: the buffer grows and is checked for uniqueness
    /// once, not at every byte (a snapshot's 17 to 63 bytes on the per-frame path).
    @inlinable public mutating func append(count: Int, _ body: (inout LinkByteCursor) -> Void) {
        // Written on the stack, then copied in at once (growing the array with zeros first cost ~250 instructions).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            var cursor = LinkByteCursor(UnsafeMutableRawBufferPointer(buffer))
            body(&cursor)
            precondition(cursor.offset == count, "\(cursor.offset) bytes written where \(count) were set aside")
            bytes.append(contentsOf: UnsafeBufferPointer(buffer))
        }
    }
}

/// Little-endian writes into bytes sized beforehand (`LinkByteWriter.append(count:_:)`). Every write checks that it
/// fits and traps if not, as an array's subscript would: the size is computed from the value written, never read
/// from input.
public struct LinkByteCursor {
    @usableFromInline let buffer: UnsafeMutableRawBufferPointer
    @usableFromInline var offset = 0

    @inlinable init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    @inlinable @inline(__always) mutating func store<Value: FixedWidthInteger>(_ value: Value) {
        let size = MemoryLayout<Value>.size
        precondition(offset + size <= buffer.count, "a write past the bytes set aside for it")
        buffer.baseAddress!.storeBytes(of: value.littleEndian, toByteOffset: offset, as: Value.self)
        offset += size
    }

    @inlinable public mutating func u8(_ value: UInt8) { store(value) }
    @inlinable public mutating func u16(_ value: UInt16) { store(value) }
    @inlinable public mutating func u32(_ value: UInt32) { store(value) }
    @inlinable public mutating func u64(_ value: UInt64) { store(value) }
    @inlinable public mutating func i16(_ value: Int16) { store(value) }
    @inlinable public mutating func f32(_ value: Double) { store(Float(value).bitPattern) }
}

/// Little-endian reading that never traps: every read checks the length and throws `LinkDecodingError`. Reads any
/// contiguous bytes in place (an array, a slice, or a received datagram's buffer), copying nothing.
public struct LinkByteReader<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    @usableFromInline let bytes: Bytes
    @usableFromInline var index: Int

    @inlinable public init(_ bytes: Bytes) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    /// How far reading has come, from the first byte.
    @inlinable public var offset: Int { index - bytes.startIndex }
    @inlinable public var isAtEnd: Bool { index == bytes.endIndex }
    @inlinable public var remaining: Int { bytes.endIndex - index }
    /// Everything not read yet (and the reader at the end).
    public mutating func rest() -> Bytes.SubSequence {
        defer { index = bytes.endIndex }
        return bytes[index...]
    }

    public mutating func take(_ count: Int) throws(LinkDecodingError) -> Bytes.SubSequence {
        guard count >= 0, remaining >= count else { throw .truncated(offset: offset, needed: count) }
        defer { index += count }
        return bytes[index..<index + count]
    }

    @inlinable public mutating func skip(_ count: Int) throws(LinkDecodingError) {
        guard count >= 0, remaining >= count else { throw .truncated(offset: offset, needed: count) }
        index += count
    }

    @inlinable @inline(__always) public mutating func u8() throws(LinkDecodingError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated(offset: offset, needed: 1) }
        defer { index += 1 }
        return bytes[index]
    }

    @inlinable @inline(__always) public mutating func u16() throws(LinkDecodingError) -> UInt16 {
        guard remaining >= 2 else { throw .truncated(offset: offset, needed: 2) }
        defer { index += 2 }
        return UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
    }

    @inlinable @inline(__always) public mutating func u32() throws(LinkDecodingError) -> UInt32 {
        guard remaining >= 4 else { throw .truncated(offset: offset, needed: 4) }
        var value: UInt32 = 0
        for shift in 0..<4 { value |= UInt32(bytes[index + shift]) << (8 * UInt32(shift)) }
        index += 4
        return value
    }

    @inlinable @inline(__always) public mutating func u64() throws(LinkDecodingError) -> UInt64 {
        guard remaining >= 8 else { throw .truncated(offset: offset, needed: 8) }
        var value: UInt64 = 0
        for shift in 0..<8 { value |= UInt64(bytes[index + shift]) << (8 * UInt64(shift)) }
        index += 8
        return value
    }

    @inlinable @inline(__always) public mutating func i16() throws(LinkDecodingError) -> Int16 { Int16(bitPattern: try u16()) }

    /// A Float32, as a Double; NaN and infinities read as 0 (a reading from the network must not poison math).
    @inlinable @inline(__always) public mutating func f32() throws(LinkDecodingError) -> Double {
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
