import PadNoise
import Testing

/// libsodium's HMAC-SHA256 as the host's flood checks use it, against RFC 4231's published test vectors.
@Suite struct MessageAuthenticationTests {
    /// RFC 4231 test cases 1, 2, 4 and 6 (a short key, a key shorter than the hash, a 25-byte key over 50 bytes, a key
    /// longer than SHA-256's block).
    @Test(arguments: [
        ([UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (Array(1...25), [UInt8](repeating: 0xCD, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        ([UInt8](repeating: 0xAA, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    ] as [([UInt8], [UInt8], String)])
    func rfc4231Vectors(key: [UInt8], message: [UInt8], expected: String) {
        let code = MessageAuthentication.code(key: key[...], message: message[...])
        #expect(code == bytes(expected))
        #expect(MessageAuthentication.isValid(code[...], key: key[...], message: message[...]))
        var forged = code
        forged[31] ^= 1
        #expect(!MessageAuthentication.isValid(forged[...], key: key[...], message: message[...]), "one bit off")
        #expect(!MessageAuthentication.isValid(code.prefix(16), key: key[...], message: message[...]), "cut short")
        #expect(!MessageAuthentication.isValid(code[...], key: key.dropFirst(), message: message[...]), "another key")
    }

    @Test func anEmptyMessageHasACode() {
        let key = [UInt8](repeating: 7, count: 32)
        let code = MessageAuthentication.code(key: key[...], message: [][...])
        #expect(code.count == 32 && MessageAuthentication.isValid(code[...], key: key[...], message: [][...]))
        #expect(code != MessageAuthentication.code(key: key[...], message: [0][...]))
    }
}
