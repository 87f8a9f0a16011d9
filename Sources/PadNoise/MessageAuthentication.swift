import CSodium

/// HMAC-SHA256 (RFC 2104 over FIPS 180-4: `HMAC<SHA256>`'s result, byte for byte) through libsodium, for the checks a
/// host makes on every datagram a flood may send (mac1, mac2, cookies): libsodium is an optimized system library in
/// every build, and a key of any length is taken without a `SymmetricKey` or an allocation per call.
public enum MessageAuthentication {
    public static let codeSize = 32

    /// HMAC-SHA256 of `message` under `key`.
    public static func code(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> [UInt8] {
        precondition(NoiseCipher.ready)
        var code = [UInt8](repeating: 0, count: codeSize)
        var state = crypto_auth_hmacsha256_state()
        var spare: UInt8 = 0  // a pointer for an empty key or message (libsodium reads none of it)
        withUnsafeMutablePointer(to: &spare) { empty in
            code.withUnsafeMutableBytes { output in
                _ = crypto_auth_hmacsha256_init(
                    &state, key.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(empty), key.count)
                _ = crypto_auth_hmacsha256_update(
                    &state, message.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(empty),
                    UInt64(message.count))
                _ = crypto_auth_hmacsha256_final(&state, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return code
    }

    public static func code(key: ArraySlice<UInt8>, message: ArraySlice<UInt8>) -> [UInt8] {
        key.withUnsafeBytes { key in message.withUnsafeBytes { code(key: key, message: $0) } }
    }

    /// Whether `code` is the HMAC-SHA256 of `message` under `key`, compared in constant time (`sodium_memcmp`).
    public static func isValid(_ code: ArraySlice<UInt8>, key: ArraySlice<UInt8>, message: ArraySlice<UInt8>) -> Bool {
        let expected = Self.code(key: key, message: message)
        return code.withUnsafeBytes { code in
            code.count == codeSize
                && expected.withUnsafeBytes { sodium_memcmp(code.baseAddress!, $0.baseAddress!, codeSize) == 0 }
        }
    }
}
