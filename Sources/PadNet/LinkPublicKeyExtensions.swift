public import Crypto
public import PadCore

extension LinkPublicKey {
    /// The first 16 bytes of the key's SHA-256: what a host's DNS-SD announcement carries.
    public var keyFingerprint: KeyFingerprint {
        KeyFingerprint(bytes: Array(SHA256.hash(data: bytes)).prefix(KeyFingerprint.byteCount))!
    }

    /// The key as people compare it: "SHA256:" and the first 16 bytes of its SHA-256, in groups of four hex digits.
    public var fingerprint: String { keyFingerprint.description }
}

extension LinkPublicKey {
    /// An X25519 public key's 32 bytes, which are always a `LinkPublicKey`.
    public init(_ key: Curve25519.KeyAgreement.PublicKey) {
        guard let value = LinkPublicKey(bytes: key.rawRepresentation) else {
            preconditionFailure("an X25519 public key is 32 bytes")
        }
        self = value
    }
}
