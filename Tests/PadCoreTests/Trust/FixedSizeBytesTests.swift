import PadCore
import Testing

/// `FixedSizeBytes` and the values built on it (`FixedSizeBytesValue`: `LinkPublicKey`, `KeyFingerprint`).
@Suite struct FixedSizeBytesTests {
    enum FourBytes: FixedByteCount {
        static let byteCount = 4
    }

    /// A value of its own outside PadCore: it gets the checked initialisers too.
    struct Tag: FixedSizeBytesValue {
        static let byteCount = 3
        let fixedSizeBytes: FixedSizeBytes<Tag>
        init(fixedSizeBytes: FixedSizeBytes<Tag>) { self.fixedSizeBytes = fixedSizeBytes }
    }

    @Test func onlyExactlyTheLengthIsAccepted() {
        #expect(FixedSizeBytes<FourBytes>(bytes: [UInt8]()) == nil)
        #expect(FixedSizeBytes<FourBytes>(bytes: [1, 2, 3]) == nil)
        #expect(FixedSizeBytes<FourBytes>(bytes: [1, 2, 3, 4, 5]) == nil)
        #expect(FixedSizeBytes<FourBytes>(bytes: [1, 2, 3, 4])?.bytes == [1, 2, 3, 4])
        #expect(FixedSizeBytes<FourBytes>(bytes: [9, 1, 2, 3, 4].dropFirst())?.bytes == [1, 2, 3, 4])
        #expect(Tag(bytes: [1, 2]) == nil)
        #expect(Tag(bytes: [1, 2, 3, 4]) == nil)
        #expect(LinkPublicKey(bytes: [UInt8](repeating: 7, count: 31)) == nil)
        #expect(LinkPublicKey(bytes: [UInt8](repeating: 7, count: 33)) == nil)
        #expect(LinkPublicKey(bytes: [UInt8](repeating: 7, count: 32))?.bytes.count == 32)
        #expect(KeyFingerprint(bytes: [UInt8](repeating: 7, count: 32)) == nil)
        #expect(KeyFingerprint(bytes: [UInt8](repeating: 7, count: 16))?.bytes.count == 16)
    }

    @Test func badHexIsRefused() {
        for text in ["", "0102", "0102030", "010203040", "0102030405", "01020g04", "0102 304", "+1020304", "０1020304"] {
            #expect(FixedSizeBytes<FourBytes>(hex: text) == nil, "\(text)")
        }
        #expect(Tag(hex: "01020") == nil)
        #expect(Tag(hex: "01020x") == nil)
        #expect(LinkPublicKey(hex: String(repeating: "ab", count: 16)) == nil)
        #expect(KeyFingerprint(hex: String(repeating: "ab", count: 32)) == nil)
    }

    @Test func bytesAndHexRoundTripInEitherCase() throws {
        let value = try #require(FixedSizeBytes<FourBytes>(hex: "00Fa5B7f"))
        #expect(value.bytes == [0x00, 0xfa, 0x5b, 0x7f])
        #expect(value.hex == "00fa5b7f")
        #expect(FixedSizeBytes<FourBytes>(bytes: value.bytes) == value)
        #expect(FixedSizeBytes<FourBytes>(hex: value.hex) == value)
        let tag = try #require(Tag(bytes: [0xde, 0xad, 0x01]))
        #expect(tag.hex == "dead01" && Tag(hex: "DEAD01") == tag && tag.bytes == [0xde, 0xad, 0x01])
        let keyHex = "8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f"
        let key = try #require(LinkPublicKey(hex: keyHex.uppercased()))
        #expect(key.hex == keyHex && key.description == keyHex && LinkPublicKey(bytes: key.bytes) == key)
        let fingerprint = try #require(KeyFingerprint(bytes: Array(key.bytes.prefix(16))))
        #expect(fingerprint.hex == String(keyHex.prefix(32)) && KeyFingerprint(hex: fingerprint.hex) == fingerprint)
        #expect(fingerprint.description == "SHA256:8f40-c5ad-b68f-2562-4ae5-b214-ea76-7a6e")
    }

    @Test func equalityHashingAndOrderFollowTheBytes() throws {
        let low = try #require(FixedSizeBytes<FourBytes>(bytes: [1, 2, 3, 4]))
        let high = try #require(FixedSizeBytes<FourBytes>(bytes: [1, 2, 4, 0]))
        #expect(low < high && !(high < low) && !(low < low))
        #expect(Set([low, high, FixedSizeBytes<FourBytes>(hex: "01020304")!]).count == 2)
        let first = try #require(KeyFingerprint(bytes: [UInt8](repeating: 0, count: 15) + [1]))
        let second = try #require(KeyFingerprint(bytes: [0x01] + [UInt8](repeating: 0, count: 15)))
        #expect([second, first].sorted() == [first, second])
        #expect(Set([LinkPublicKey(bytes: [UInt8](repeating: 1, count: 32))!, LinkPublicKey(hex: String(repeating: "01", count: 32))!]).count == 1)
    }
}
