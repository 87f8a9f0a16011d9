/// Little-endian loads and stores on raw report buffers. Callers check the report's length once, up front;
/// every offset used afterwards lies inside that length.
enum ReportBytes {
    @inline(__always) static func loadUInt16(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    @inline(__always) static func loadInt16(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int16 {
        Int16(bitPattern: loadUInt16(bytes, at: offset))
    }

    @inline(__always) static func loadUInt32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }

    @inline(__always) static func storeUInt16(_ value: UInt16, into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    @inline(__always) static func storeInt16(_ value: Int16, into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        storeUInt16(UInt16(bitPattern: value), into: bytes, at: offset)
    }

    @inline(__always) static func storeUInt32(_ value: UInt32, into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    /// Zeroes the first `count` bytes and returns a buffer of exactly that size.
    /// Precondition (a programming error, not an input error): `buffer.count >= count`.
    static func prepare(_ buffer: UnsafeMutableRawBufferPointer, count: Int, for report: StaticString)
        -> UnsafeMutableRawBufferPointer
    {
        precondition(buffer.count >= count, "\(report) needs a buffer of at least \(count) bytes")
        let out = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
        for index in out.indices { out[index] = 0 }
        return out
    }

    /// `[UInt8]` of exactly `count` bytes filled by `body` (which returns the bytes it wrote).
    static func array(count: Int, _ body: (UnsafeMutableRawBufferPointer) -> Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            for index in raw.indices { raw[index] = 0 }
            initialized = body(raw)
        }
    }

    /// Runs a typed-throwing decoder over an array's bytes.
    static func decode<T>(
        _ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(ReportDecodingError) -> T
    ) throws(ReportDecodingError) -> T {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(ReportDecodingError) -> T in try body(buffer) }
        }.get()
    }
}
