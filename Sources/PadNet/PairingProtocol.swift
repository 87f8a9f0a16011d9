public import Crypto
public import PadCore
public import PadNoise

/// The datagrams of pairing. Byte 0 says which; the rest is a Noise `XXpsk3` handshake message or, for the
/// confirmation, a transport message sealed with the new keys. Every decoder is total.
///
/// ```
/// client -> host  0x50 "P" | msg1 (-> e; payload: zeros, padding it to 160 bytes) | mac2 (32)          192 bytes
/// host -> client  0x51     | msg2 (<- e, ee, s, es; payload: the host's name, at most 64 bytes)
/// client -> host  0x52     | msg3 (-> s, se, psk; payload: the client's name, at most 64 bytes)
/// host -> client  0x53     | sealed("padbridge paired", counter 0): both keys are stored
/// host -> client  0x54     | reason (1 byte): refused (0: wrong code, 1: no pairing window open, 2: too many tries,
///                            3: the host could not store the pairing)
/// host -> client  0x55     | SHA-256(the first message before mac2), 16 bytes | cookie (32)              49 bytes
/// ```
/// mac2 is zeros, or HMAC-SHA256(cookie, the first message before mac2): a host under load (a flood of first
/// messages) makes a new exchange only for a first message whose mac2 proves its sender's address, and answers the
/// others with its cookie for that address (0x55; the digest tells the client which first message it answers).
/// No answer is larger than what it answers: the first message is padded to 192 bytes, more than a response can
/// be (1 + 32 + 48 + 64 + 16 = 161).
public enum PairingDatagram: Sendable, Hashable {
    case initiation([UInt8])
    case response([UInt8])
    case confirmation([UInt8])
    case paired([UInt8])
    case refused(PairingRefusal)
    case cookieReply(digest: [UInt8], cookie: [UInt8])

    public static let firstByte: ClosedRange<UInt8> = 0x50...0x55
    /// A first message (whole datagram) is at least this long; a host ignores a shorter one.
    public static let minimumInitiationSize = 192
    static let macSize = 32
    static let digestSize = 16
    public static let cookieReplySize = 1 + digestSize + macSize

    /// What a cookie reply names its first message by.
    static func digest(ofFirstMessage beforeMac2: some Collection<UInt8>) -> [UInt8] {
        Array(SHA256.hash(data: Array(beforeMac2)).prefix(digestSize))
    }

    public init?(_ bytes: some Collection<UInt8>) {
        guard let kind = bytes.first else { return nil }
        let body = Array(bytes.dropFirst())
        switch kind {
        case 0x50: self = .initiation(body)
        case 0x51: self = .response(body)
        case 0x52: self = .confirmation(body)
        case 0x53: self = .paired(body)
        case 0x54:
            guard body.count == 1, let reason = PairingRefusal(rawValue: body[0]) else { return nil }
            self = .refused(reason)
        case 0x55:
            guard bytes.count == Self.cookieReplySize else { return nil }
            self = .cookieReply(digest: Array(body.prefix(Self.digestSize)), cookie: Array(body.dropFirst(Self.digestSize)))
        default: return nil
        }
    }

    public var encoded: [UInt8] {
        switch self {
        case let .initiation(body): [0x50] + body
        case let .response(body): [0x51] + body
        case let .confirmation(body): [0x52] + body
        case let .paired(body): [0x53] + body
        case let .refused(reason): [0x54, reason.rawValue]
        case let .cookieReply(digest, cookie): [0x55] + digest + cookie
        }
    }
}

public enum PairingRefusal: UInt8, Sendable, Hashable, CustomStringConvertible {
    case wrongCode = 0
    case noWindow = 1
    case tooManyTries = 2
    case hostCannotStore = 3

    public var description: String {
        switch self {
        case .hostCannotStore: "the host could not store the pairing (its status lines say why); pair again once it is fixed"
        case .wrongCode: "the host refused the code: check it (it is shown by `padbridge serve --pair` on the host)"
        case .noWindow: "the host has no pairing window open: run `padbridge serve --pair` (or `padbridge pairing-window` while it serves) there"
        case .tooManyTries: "the host closed its pairing window to this machine after three wrong codes: open a new one there"
        }
    }
}

/// The shared constants of the pairing handshake.
public enum PairingHandshake {
    /// Bumped with every change of pairing's datagrams: 2 added the first message's mac2.
    public static let prologue = Array("padbridge pair 2".utf8)
    public static let confirmationText = Array("padbridge paired".utf8)
    /// The longest name (UTF-8 bytes) either side sends.
    public static let nameLimit = 64

    /// A machine's name as a handshake payload: printable, cut at a character within `nameLimit` bytes.
    public static func namePayload(_ name: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for scalar in TrustFileFormat.sanitized(name).unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            guard bytes.count + encoded.count <= nameLimit else { break }
            bytes += encoded
        }
        return bytes
    }

    /// The pre-shared key a code gives: SHA-256 of its canonical symbols with a label.
    public static func presharedKey(_ code: PairingCode) -> [UInt8] { Array(SHA256.hash(data: code.keyMaterial)) }

    public static func initiator(code: PairingCode, identity: Curve25519.KeyAgreement.PrivateKey) throws(NoiseError)
        -> NoiseHandshake
    {
        try initiator(code: code, identity: identity, ephemeral: nil)
    }

    public static func responder(code: PairingCode, identity: Curve25519.KeyAgreement.PrivateKey) throws(NoiseError)
        -> NoiseHandshake
    {
        try responder(code: code, identity: identity, ephemeral: nil)
    }

    /// `ephemeral`: only the protocol vectors (docs/protocol-vectors.json) give one; nil draws a fresh random key.
    static func initiator(
        code: PairingCode, identity: Curve25519.KeyAgreement.PrivateKey, ephemeral: Curve25519.KeyAgreement.PrivateKey?
    ) throws(NoiseError) -> NoiseHandshake {
        try NoiseHandshake(
            pattern: .XXpsk3, role: .initiator, prologue: prologue, localStatic: identity,
            presharedKey: presharedKey(code), ephemeral: ephemeral)
    }

    /// `ephemeral`: only the protocol vectors (docs/protocol-vectors.json) give one; nil draws a fresh random key.
    static func responder(
        code: PairingCode, identity: Curve25519.KeyAgreement.PrivateKey, ephemeral: Curve25519.KeyAgreement.PrivateKey?
    ) throws(NoiseError) -> NoiseHandshake {
        try NoiseHandshake(
            pattern: .XXpsk3, role: .responder, prologue: prologue, localStatic: identity,
            presharedKey: presharedKey(code), ephemeral: ephemeral)
    }
}

/// A host's pairing window: one code, valid until `expiresAtMicroseconds`, for one pairing; three wrong codes from
/// one source close it to that source, `wrongTriesAllowed` in all close it. Pure (time comes in), so it is tested
/// with a fake clock.
public struct PairingWindow: Sendable {
    public static let lifetimeMicroseconds: UInt64 = 300_000_000
    /// Wrong codes one source address may try (the responder counts them).
    public static let wrongTriesPerSource = 3
    /// Wrong codes from every source together that close the window (a 60-bit code: 12 guesses are nothing).
    public static let wrongTriesAllowed = 12
    /// How long a client that completed pairing may run it again (its confirmation may have been lost).
    public static let repeatMicroseconds: UInt64 = 60_000_000

    public let code: PairingCode
    public let expiresAtMicroseconds: UInt64
    public private(set) var wrongTries = 0
    /// The client that paired through this window, and when.
    public private(set) var pairedClient: (key: LinkPublicKey, atMicroseconds: UInt64)?

    public init(code: PairingCode, openedAtMicroseconds now: UInt64) {
        self.code = code
        expiresAtMicroseconds = now + Self.lifetimeMicroseconds
    }

    public enum Admission: Sendable, Hashable { case open, closed(PairingRefusal) }

    /// Whether a new pairing handshake may start now (or `client`'s completed one be repeated).
    public func admits(atMicroseconds now: UInt64, client: LinkPublicKey? = nil) -> Admission {
        if wrongTries >= Self.wrongTriesAllowed { return .closed(.tooManyTries) }
        if let paired = pairedClient {
            return client == paired.key && now < paired.atMicroseconds + Self.repeatMicroseconds ? .open : .closed(.noWindow)
        }
        return now < expiresAtMicroseconds ? .open : .closed(.noWindow)
    }

    /// A confirmation that did not authenticate: a wrong code (or a forgery, which counts the same).
    public mutating func recordWrongTry() { wrongTries += 1 }

    public mutating func recordPaired(_ client: LinkPublicKey, atMicroseconds now: UInt64) {
        if pairedClient == nil { pairedClient = (client, now) }
    }

    /// Whether the window can be forgotten (expired, used up, or its repeat time over).
    public func isOver(atMicroseconds now: UInt64) -> Bool {
        if case .closed = admits(atMicroseconds: now, client: pairedClient?.key) { return true }
        return false
    }
}
