import Crypto
public import PadCore

extension LinkPublicKey {
    /// The first 16 bytes of the key's SHA-256: what a host's DNS-SD announcement carries.
    public var keyFingerprint: KeyFingerprint {
        KeyFingerprint(bytes: Array(SHA256.hash(data: bytes)).prefix(KeyFingerprint.byteCount))!
    }

    /// The key as people compare it: "SHA256:" and the first 16 bytes of its SHA-256, in groups of four hex digits.
    public var fingerprint: String { keyFingerprint.description }
}
