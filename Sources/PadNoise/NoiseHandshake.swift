public import Crypto
import CSodium
public import Synchronization

/// What can go wrong in a Noise handshake or transport message. Every decoder here is total: any bytes give a value
/// or one of these, never a trap.
public enum NoiseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A message shorter than its pattern requires (`expected` bytes at least).
    case truncated(expected: Int, actual: Int)
    /// Authentication failed: a forged, corrupted or replayed message, the wrong key or the wrong pre-shared key.
    case authenticationFailed
    /// Everything before the payload of a message that mixes a pre-shared key authenticated (the sender took part
    /// in this handshake), but the payload did not: the two sides hold different pre-shared keys (a wrong pairing
    /// code), or the payload was altered on the way.
    case presharedKeyMismatch
    /// A public key that gives no shared secret (a low-order point).
    case invalidPublicKey
    /// `writeMessage`/`readMessage` out of turn, or after the handshake completed or failed.
    case outOfTurn
    /// The handshake failed earlier; a failed handshake is discarded, never retried.
    case failedEarlier
    /// Setting up the handshake without a key its pattern needs (the responder's static key for IK, a PSK).
    case missingKey(String)
    /// The transport counter 2^64-1 is reserved; a session that reached it must be replaced.
    case counterExhausted

    public var description: String {
        switch self {
        case let .truncated(expected, actual): "handshake message of \(actual) bytes, at least \(expected) expected"
        case .authenticationFailed: "authentication failed (wrong key or code, or a forged or corrupted message)"
        case .presharedKeyMismatch: "the pre-shared keys differ (a wrong pairing code)"
        case .invalidPublicKey: "invalid public key"
        case .outOfTurn: "handshake message out of turn"
        case .failedEarlier: "the handshake failed earlier"
        case let .missingKey(what): "missing \(what)"
        case .counterExhausted: "transport counter exhausted"
        }
    }
}

/// The handshake patterns padbridge uses (Noise specification, revision 34, sections 7.5 and 9).
public enum NoisePattern: String, Sendable, Hashable {
    /// Sessions: `<- s ... -> e, es, s, ss  <- e, ee, se`. The initiator knows the responder's static key.
    case IK
    /// Pairing: `-> e  <- e, ee, s, es  -> s, se, psk`. Static keys travel encrypted; the PSK authenticates.
    case XXpsk3
    /// For tests of the machinery: `-> e  <- e, ee`.
    case NN

    enum Token: Sendable { case e, s, ee, es, se, ss, psk }

    /// Pre-messages: whether the responder's static key is known to the initiator beforehand.
    var responderStaticIsPremessage: Bool { self == .IK }

    var messages: [[Token]] {
        switch self {
        case .IK: [[.e, .es, .s, .ss], [.e, .ee, .se]]
        case .XXpsk3: [[.e], [.e, .ee, .s, .es], [.s, .se, .psk]]
        case .NN: [[.e], [.e, .ee]]
        }
    }

    var usesPresharedKey: Bool { self == .XXpsk3 }

    public var protocolName: String { "Noise_\(rawValue)_25519_ChaChaPoly_SHA256" }
}

/// Which side of the handshake this is.
public enum NoiseRole: Sendable, Hashable { case initiator, responder }

/// One side of a Noise handshake (`Noise_IK` or `Noise_XXpsk3` over 25519, ChaChaPoly, SHA256): writes and reads
/// its messages in turn, then gives the transport keys. Only swift-crypto's primitives are used (X25519,
/// ChaCha20-Poly1305, SHA-256, HMAC). A value; not thread-safe (use from one thread).
public struct NoiseHandshake: Sendable {
    public let pattern: NoisePattern
    public let role: NoiseRole
    private var symmetric: NoiseSymmetricState
    private let localStatic: Curve25519.KeyAgreement.PrivateKey?
    private var localEphemeral: Curve25519.KeyAgreement.PrivateKey?
    private var pendingEphemeral: Curve25519.KeyAgreement.PrivateKey?
    /// The other side's static public key: given beforehand (IK initiator) or learnt from the handshake.
    public private(set) var remoteStaticPublicKey: [UInt8]?
    private var remoteEphemeral: [UInt8]?
    private let presharedKey: [UInt8]?
    private var messageIndex = 0
    private var failed = false

    /// - Parameters:
    ///   - localStatic: this side's static key (every pattern here but NN needs it).
    ///   - remoteStatic: the responder's static public key, for an IK initiator.
    ///   - presharedKey: 32 bytes, for XXpsk3.
    ///   - ephemeral: this side's ephemeral key; only test vectors give one (the default is fresh randomness).
    public init(
        pattern: NoisePattern, role: NoiseRole, prologue: [UInt8] = [],
        localStatic: Curve25519.KeyAgreement.PrivateKey?, remoteStatic: [UInt8]? = nil,
        presharedKey: [UInt8]? = nil, ephemeral: Curve25519.KeyAgreement.PrivateKey? = nil
    ) throws(NoiseError) {
        if pattern != .NN && localStatic == nil { throw .missingKey("this side's static key") }
        if pattern.usesPresharedKey && presharedKey?.count != 32 { throw .missingKey("a 32-byte pre-shared key") }
        if pattern.responderStaticIsPremessage && role == .initiator && remoteStatic?.count != 32 {
            throw .missingKey("the responder's static public key")
        }
        self.pattern = pattern
        self.role = role
        self.localStatic = localStatic
        self.presharedKey = presharedKey
        pendingEphemeral = ephemeral
        symmetric = NoiseSymmetricState(protocolName: pattern.protocolName)
        symmetric.mixHash(prologue)
        if pattern.responderStaticIsPremessage {
            let responderStatic: [UInt8] =
                role == .initiator ? remoteStatic! : Array(localStatic!.publicKey.rawRepresentation)
            symmetric.mixHash(responderStatic)
            if role == .initiator { remoteStaticPublicKey = responderStatic }
        }
    }

    /// Whether every handshake message has been written or read.
    public var isComplete: Bool { messageIndex == pattern.messages.count && !failed }

    /// Whether it is this side's turn to write.
    public var isMyTurnToWrite: Bool {
        !failed && messageIndex < pattern.messages.count && (messageIndex % 2 == 0) == (role == .initiator)
    }

    /// The handshake hash h: identical on both sides once complete (channel binding).
    public var handshakeHash: [UInt8] { symmetric.hash }

    /// The next handshake message, carrying `payload` (encrypted once a key exists).
    public mutating func writeMessage(payload: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard !failed else { throw .failedEarlier }
        guard isMyTurnToWrite else { throw .outOfTurn }
        do throws(NoiseError) {
            var message: [UInt8] = []
            for token in pattern.messages[messageIndex] {
                switch token {
                case .e:
                    let ephemeral = pendingEphemeral ?? Self.generateEphemeral()
                    pendingEphemeral = nil
                    localEphemeral = ephemeral
                    let publicKey = Array(ephemeral.publicKey.rawRepresentation)
                    message += publicKey
                    symmetric.mixHash(publicKey)
                    if pattern.usesPresharedKey { symmetric.mixKey(publicKey) }
                case .s:
                    message += try symmetric.encryptAndHash(Array(localStatic!.publicKey.rawRepresentation))
                case .psk:
                    symmetric.mixKeyAndHash(presharedKey!)
                default:
                    try mixDH(token)
                }
            }
            message += try symmetric.encryptAndHash(payload)
            messageIndex += 1
            return message
        } catch {
            failed = true
            throw error
        }
    }

    /// Reads the other side's next handshake message; returns its payload. On any error the handshake is failed
    /// for good (a new one must start), and nothing the message carried is kept: a static key it revealed before
    /// a later token or its payload failed to authenticate is forgotten.
    public mutating func readMessage(_ bytes: some Collection<UInt8>) throws(NoiseError) -> [UInt8] {
        guard !failed else { throw .failedEarlier }
        guard !isMyTurnToWrite, messageIndex < pattern.messages.count else { throw .outOfTurn }
        let message = Array(bytes)
        let (staticBefore, ephemeralBefore) = (remoteStaticPublicKey, remoteEphemeral)
        do throws(NoiseError) {
            var offset = 0
            func take(_ count: Int) throws(NoiseError) -> [UInt8] {
                guard message.count - offset >= count else {
                    throw .truncated(expected: offset + count, actual: message.count)
                }
                defer { offset += count }
                return Array(message[offset..<offset + count])
            }
            var mixedPresharedKey = false
            for token in pattern.messages[messageIndex] {
                switch token {
                case .e:
                    let publicKey = try take(32)
                    remoteEphemeral = publicKey
                    symmetric.mixHash(publicKey)
                    if pattern.usesPresharedKey { symmetric.mixKey(publicKey) }
                case .s:
                    remoteStaticPublicKey = try symmetric.decryptAndHash(try take(symmetric.hasKey ? 48 : 32))
                case .psk:
                    symmetric.mixKeyAndHash(presharedKey!)
                    mixedPresharedKey = true
                default:
                    try mixDH(token)
                }
            }
            if symmetric.hasKey && message.count - offset < 16 {
                throw .truncated(expected: offset + 16, actual: message.count)
            }
            let payload: [UInt8]
            do throws(NoiseError) {
                payload = try symmetric.decryptAndHash(Array(message[offset...]))
            } catch .authenticationFailed where mixedPresharedKey {
                throw .presharedKeyMismatch
            }
            messageIndex += 1
            return payload
        } catch {
            failed = true
            (remoteStaticPublicKey, remoteEphemeral) = (staticBefore, ephemeralBefore)
            throw error
        }
    }

    /// The transport keys, once the handshake is complete: what this side sends with and receives with.
    public func split() throws(NoiseError) -> NoiseTransportKeys {
        guard isComplete else { throw .outOfTurn }
        let (first, second) = symmetric.split()
        return role == .initiator
            ? NoiseTransportKeys(sending: first, receiving: second)
            : NoiseTransportKeys(sending: second, receiving: first)
    }

    /// ee, es, se, ss: the Diffie-Hellman of the token (initiator's key named first), mixed into the chaining key.
    private mutating func mixDH(_ token: NoisePattern.Token) throws(NoiseError) {
        let initiator = role == .initiator
        let (mine, theirs): (Curve25519.KeyAgreement.PrivateKey?, [UInt8]?)
        switch token {
        case .ee: (mine, theirs) = (localEphemeral, remoteEphemeral)
        case .ss: (mine, theirs) = (localStatic, remoteStaticPublicKey)
        case .es: (mine, theirs) = initiator ? (localEphemeral, remoteStaticPublicKey) : (localStatic, remoteEphemeral)
        case .se: (mine, theirs) = initiator ? (localStatic, remoteEphemeral) : (localEphemeral, remoteStaticPublicKey)
        default: return
        }
        guard let mine, let theirs else { throw .outOfTurn }
        symmetric.mixKey(try Self.dh(mine, theirs))
    }

    /// A fresh ephemeral key pair (its public key is a scalar multiplication: counted).
    static func generateEphemeral() -> Curve25519.KeyAgreement.PrivateKey {
        NoisePublicKeyOperations.current?.record()
        return Curve25519.KeyAgreement.PrivateKey()
    }

    static func dh(_ privateKey: Curve25519.KeyAgreement.PrivateKey, _ publicKey: [UInt8]) throws(NoiseError) -> [UInt8] {
        NoisePublicKeyOperations.current?.record()
        guard let peer = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey),
            let shared = try? privateKey.sharedSecretFromKeyAgreement(with: peer)
        else { throw .invalidPublicKey }
        let bytes = shared.withUnsafeBytes { Array($0) }
        // An all-zero output means a low-order point: refuse it (swift-crypto's X25519 may already have).
        guard bytes.contains(where: { $0 != 0 }) else { throw .invalidPublicKey }
        return bytes
    }
}

/// Counts the public-key operations (X25519 key generations and agreements, the costly part of a handshake) that
/// handshakes perform within `$current.withValue(counter) { ... }`, on the task or thread that runs them: tests
/// show with it that junk costs a host none. Outside such a scope nothing is counted.
public final class NoisePublicKeyOperations: Sendable {
    private let total = Atomic<Int>(0)

    public init() {}

    /// The operations counted so far.
    public var performed: Int { total.load(ordering: .relaxed) }

    func record() { total.add(1, ordering: .relaxed) }

    @TaskLocal public static var current: NoisePublicKeyOperations?
}

/// Noise's SymmetricState: the chaining key, the handshake hash and the current CipherState.
struct NoiseSymmetricState: Sendable {
    private(set) var chainingKey: [UInt8]
    private(set) var hash: [UInt8]
    private var key: [UInt8]?
    private var nonce: UInt64 = 0

    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        hash = name.count <= 32 ? name + [UInt8](repeating: 0, count: 32 - name.count) : Array(SHA256.hash(data: name))
        chainingKey = hash
    }

    var hasKey: Bool { key != nil }

    mutating func mixHash(_ data: [UInt8]) {
        hash = Array(SHA256.hash(data: hash + data))
    }

    mutating func mixKey(_ input: [UInt8]) {
        let outputs = NoiseKeyDerivation.hkdf(chainingKey: chainingKey, input: input, outputs: 2)
        chainingKey = outputs[0]
        key = outputs[1]
        nonce = 0
    }

    mutating func mixKeyAndHash(_ input: [UInt8]) {
        let outputs = NoiseKeyDerivation.hkdf(chainingKey: chainingKey, input: input, outputs: 3)
        chainingKey = outputs[0]
        mixHash(outputs[1])
        key = outputs[2]
        nonce = 0
    }

    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard let key else {
            mixHash(plaintext)
            return plaintext
        }
        let ciphertext = try NoiseCipher.seal(plaintext, key: key, counter: nonce, associatedData: hash)
        nonce += 1
        mixHash(ciphertext)
        return ciphertext
    }

    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard let key else {
            mixHash(ciphertext)
            return ciphertext
        }
        let plaintext = try NoiseCipher.open(ciphertext, key: key, counter: nonce, associatedData: hash)
        nonce += 1
        mixHash(ciphertext)
        return plaintext
    }

    func split() -> (NoiseTransportCipher, NoiseTransportCipher) {
        let outputs = NoiseKeyDerivation.hkdf(chainingKey: chainingKey, input: [], outputs: 2)
        return (NoiseTransportCipher(key: outputs[0]), NoiseTransportCipher(key: outputs[1]))
    }
}

/// Noise's HKDF (section 4.3), built on swift-crypto's HMAC-SHA256.
enum NoiseKeyDerivation {
    static func hmac(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }

    static func hkdf(chainingKey: [UInt8], input: [UInt8], outputs: Int) -> [[UInt8]] {
        let temporaryKey = hmac(key: chainingKey, input)
        var result: [[UInt8]] = []
        var previous: [UInt8] = []
        for index in 1...outputs {
            previous = hmac(key: temporaryKey, previous + [UInt8(index)])
            result.append(previous)
        }
        return result
    }
}

/// ChaCha20-Poly1305 (RFC 8439, libsodium's IETF construction) with Noise's nonce: 4 zero bytes, then the 64-bit
/// counter little-endian. Seals and opens in place, with no allocation and no key set-up per message (the key is
/// passed each time; libsodium keeps no context), so the link's per-datagram path costs the AEAD's work alone.
enum NoiseCipher {
    static let tagSize = 16
    static let keySize = 32

    /// libsodium's one-time set-up (idempotent, thread-safe); called before the first key is used.
    static let ready: Bool = sodium_init() >= 0

    /// Encrypts `message` where it lies and writes the 16-byte tag to `tag`.
    static func seal(
        _ message: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer, key: UnsafeRawBufferPointer,
        counter: UInt64, associatedData: UnsafeRawBufferPointer
    ) throws(NoiseError) {
        guard counter != .max else { throw .counterExhausted }
        precondition(ready && tag.count == tagSize && key.count == keySize)
        var nonce = Self.nonce(counter)
        var spare: UInt8 = 0  // a pointer for an empty message or associated data (libsodium reads none of it)
        let status = withUnsafeBytes(of: &nonce) { nonceBytes in
            withUnsafeMutablePointer(to: &spare) { empty in
                crypto_aead_chacha20poly1305_ietf_encrypt_detached(
                    Self.bytes(message) ?? empty, Self.bytes(tag)!, nil, Self.bytes(message) ?? empty,
                    UInt64(message.count), Self.bytes(associatedData) ?? empty, UInt64(associatedData.count), nil,
                    Self.bytes(nonceBytes)!, Self.bytes(key)!)
            }
        }
        guard status == 0 else { throw .authenticationFailed }
    }

    /// Decrypts `message` where it lies if `tag` authenticates it (and `associatedData`); throws, and leaves
    /// `message` as garbage, when it does not.
    static func open(
        _ message: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer,
        counter: UInt64, associatedData: UnsafeRawBufferPointer
    ) throws(NoiseError) {
        guard counter != .max else { throw .counterExhausted }
        precondition(ready && key.count == keySize)
        guard tag.count == tagSize else { throw .truncated(expected: tagSize, actual: tag.count) }
        var nonce = Self.nonce(counter)
        var spare: UInt8 = 0
        let status = withUnsafeBytes(of: &nonce) { nonceBytes in
            withUnsafeMutablePointer(to: &spare) { empty in
                crypto_aead_chacha20poly1305_ietf_decrypt_detached(
                    Self.bytes(message) ?? empty, nil, Self.bytes(message) ?? empty, UInt64(message.count),
                    Self.bytes(tag)!, Self.bytes(associatedData) ?? empty, UInt64(associatedData.count),
                    Self.bytes(nonceBytes)!, Self.bytes(key)!)
            }
        }
        guard status == 0 else { throw .authenticationFailed }
    }

    /// Noise's 12-byte nonce: 4 zero bytes, then the counter little-endian (three 32-bit words: no padding).
    private static func nonce(_ counter: UInt64) -> (UInt32, UInt32, UInt32) {
        (0, UInt32(truncatingIfNeeded: counter).littleEndian, UInt32(truncatingIfNeeded: counter >> 32).littleEndian)
    }

    private static func bytes(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
        buffer.count == 0 ? nil : buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }

    private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
        buffer.count == 0 ? nil : UnsafeMutablePointer(mutating: buffer.baseAddress?.assumingMemoryBound(to: UInt8.self))
    }

    /// `plaintext` sealed: the ciphertext followed by the tag, in a new array.
    static func seal(_ plaintext: [UInt8], key: [UInt8], counter: UInt64, associatedData: [UInt8]) throws(NoiseError)
        -> [UInt8]
    {
        var output = plaintext + [UInt8](repeating: 0, count: tagSize)
        let length = plaintext.count
        let outcome: Result<Void, NoiseError> = output.withUnsafeMutableBytes { bytes in
            key.withUnsafeBytes { keyBytes in
                associatedData.withUnsafeBytes { ad in
                    Result { () throws(NoiseError) in
                        try seal(
                            UnsafeMutableRawBufferPointer(rebasing: bytes[0..<length]),
                            tag: UnsafeMutableRawBufferPointer(rebasing: bytes[length...]), key: keyBytes,
                            counter: counter, associatedData: ad)
                    }
                }
            }
        }
        try outcome.get()
        return output
    }

    /// The plaintext of `ciphertext` (ciphertext then tag), in a new array.
    static func open(_ ciphertext: [UInt8], key: [UInt8], counter: UInt64, associatedData: [UInt8]) throws(NoiseError)
        -> [UInt8]
    {
        guard ciphertext.count >= tagSize else { throw .truncated(expected: tagSize, actual: ciphertext.count) }
        var message = Array(ciphertext.dropLast(tagSize))
        let tag = Array(ciphertext.suffix(tagSize))
        let outcome: Result<Void, NoiseError> = message.withUnsafeMutableBytes { bytes in
            tag.withUnsafeBytes { tagBytes in
                key.withUnsafeBytes { keyBytes in
                    associatedData.withUnsafeBytes { ad in
                        Result { () throws(NoiseError) in
                            try open(bytes, tag: tagBytes, key: keyBytes, counter: counter, associatedData: ad)
                        }
                    }
                }
            }
        }
        try outcome.get()
        return message
    }
}

/// One direction's transport key. Messages carry their counter explicitly (as WireGuard does over UDP), so a lost
/// or reordered datagram does not desynchronise the two sides; the caller never reuses a counter with one key and
/// drops replays with a replay window. Sealing with counters 0, 1, 2, ... gives exactly Noise's transport messages.
public struct NoiseTransportCipher: Sendable {
    let key: [UInt8]

    init(key: [UInt8]) { self.key = key }

    public func seal(_ plaintext: [UInt8], counter: UInt64, associatedData: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        try NoiseCipher.seal(plaintext, key: key, counter: counter, associatedData: associatedData)
    }

    public func open(_ ciphertext: some Collection<UInt8>, counter: UInt64, associatedData: [UInt8] = []) throws(NoiseError)
        -> [UInt8]
    {
        try NoiseCipher.open(Array(ciphertext), key: key, counter: counter, associatedData: associatedData)
    }

    /// Seals `message` where it lies, the tag written to `tag` (no allocation: the link's per-datagram path).
    public func seal(
        inPlace message: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer, counter: UInt64,
        associatedData: UnsafeRawBufferPointer
    ) throws(NoiseError) {
        let outcome: Result<Void, NoiseError> = key.withUnsafeBytes { keyBytes in
            Result { () throws(NoiseError) in
                try NoiseCipher.seal(message, tag: tag, key: keyBytes, counter: counter, associatedData: associatedData)
            }
        }
        try outcome.get()
    }

    /// Opens `message` where it lies if `tag` authenticates it; throws (and leaves garbage) when it does not.
    public func open(
        inPlace message: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer, counter: UInt64,
        associatedData: UnsafeRawBufferPointer
    ) throws(NoiseError) {
        let outcome: Result<Void, NoiseError> = key.withUnsafeBytes { keyBytes in
            Result { () throws(NoiseError) in
                try NoiseCipher.open(message, tag: tag, key: keyBytes, counter: counter, associatedData: associatedData)
            }
        }
        try outcome.get()
    }
}

/// The two transport keys of a completed handshake, from this side's point of view.
public struct NoiseTransportKeys: Sendable {
    public let sending: NoiseTransportCipher
    public let receiving: NoiseTransportCipher
}
