/// A host key's fingerprint, as people compare keys and as a host's DNS-SD announcement carries its key: the first
/// 16 bytes of the key's SHA-256 (the network adapter computes it: `LinkPublicKey.keyFingerprint`), printed
/// "SHA256:6668-7aad-f862-bd77-6c8f-c18b-8e9f-8e20".
///
/// 128 bits: finding another key with a given fingerprint (a second preimage) is out of reach. Even so a fingerprint
/// only ever *selects* a host; the link's Noise handshake with the pinned key is what authenticates it.
///
/// `init?(bytes:)`, `init?(hex:)`, `bytes` and `hex` (32 lowercase hex digits, the announcement's `fp=` value) come
/// from `FixedSizeBytesValue`.
public struct KeyFingerprint: FixedSizeBytesValue, Comparable, CustomStringConvertible {
    public static let byteCount = 16
    public let fixedSizeBytes: FixedSizeBytes<KeyFingerprint>

    public init(fixedSizeBytes: FixedSizeBytes<KeyFingerprint>) { self.fixedSizeBytes = fixedSizeBytes }

    /// The printed form ("SHA256:6668-7aad-..."; case and dashes do not matter); nil for anything else.
    public init?(printed text: some StringProtocol) {
        let prefix = "sha256:"
        guard text.count > prefix.count, text.lowercased().hasPrefix(prefix) else { return nil }
        self.init(hex: String(text.dropFirst(prefix.count).filter { $0 != "-" }))
    }

    /// "SHA256:" and the 16 bytes in groups of four hex digits.
    public var description: String {
        let digits = Array(hex)
        return "SHA256:" + stride(from: 0, to: digits.count, by: 4).map { String(digits[$0..<$0 + 4]) }
            .joined(separator: "-")
    }

    public static func < (lhs: KeyFingerprint, rhs: KeyFingerprint) -> Bool { lhs.fixedSizeBytes < rhs.fixedSizeBytes }
}
