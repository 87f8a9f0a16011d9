import CSodium

/// HMAC-SHA256 (RFC 2104 over FIPS 180-4: `HMAC<SHA256>`'s result, byte for byte) through libsodium, for the checks a
/// host makes on every datagram a flood may send (mac1, mac2, cookies): libsodium is an optimized system library in
/// every build, and a key of any length is taken without a `SymmetricKey`. A check (`isValid`) allocates nothing;
/// `code` returns its 32 bytes in a new array.
public enum MessageAuthentication {
    public static let codeSize = 32

    /// HMAC-SHA256 of `message` under `key`.
    public static func code(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: codeSize) { output, count in
            compute(key: key, message: message, into: output.baseAddress!)
            count = codeSize
        }
    }

    public static func code(key: ArraySlice<UInt8>, message: ArraySlice<UInt8>) -> [UInt8] {
        key.withUnsafeBytes { key in message.withUnsafeBytes { code(key: key, message: $0) } }
    }

    /// Whether `code` is the HMAC-SHA256 of `message` under `key`, compared in constant time (`sodium_memcmp`).
    public static func isValid(_ code: ArraySlice<UInt8>, key: ArraySlice<UInt8>, message: ArraySlice<UInt8>) -> Bool {
        guard code.count == codeSize else { return false }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: codeSize) { expected in
            key.withUnsafeBytes { key in
                message.withUnsafeBytes { compute(key: key, message: $0, into: expected.baseAddress!) }
            }
            return code.withUnsafeBytes { sodium_memcmp($0.baseAddress!, expected.baseAddress!, codeSize) == 0 }
        }
    }

    /// The code into `output` (`codeSize` bytes).
    private static func compute(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) {
        precondition(NoiseCipher.ready)
        var state = crypto_auth_hmacsha256_state()
        var spare: UInt8 = 0  // a pointer for an empty key or message (libsodium reads none of it)
        withUnsafeMutablePointer(to: &spare) { empty in
            _ = crypto_auth_hmacsha256_init(
                &state, key.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(empty), key.count)
            _ = crypto_auth_hmacsha256_update(
                &state, message.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(empty),
                UInt64(message.count))
            _ = crypto_auth_hmacsha256_final(&state, output)
        }
    }
}
