import Crypto
import PadNoise
public import PadCore

/// An initiation's MACs and a host's cookie replies (WireGuard's mac1, mac2 and cookie reply, with HMAC-SHA256
/// where WireGuard has keyed BLAKE2s, and ChaCha20-Poly1305 with a random 96-bit nonce for its XChaCha20: swift-crypto
/// has neither BLAKE2 nor XChaCha20):
/// - mac1 = HMAC-SHA256(SHA-256("padbridge link 6 mac1" | the host's public key), the datagram before mac1). Only
///   a machine that knows the host's public key can make it (its paired clients: pairing is how a client learns
///   it), and a host checks it with one HMAC, in constant time, before any public-key work.
/// - mac2 = HMAC-SHA256(cookie, the datagram before mac2), or zeros without a cookie. A host under load does
///   public-key work only for an initiation with a valid mac2, and answers the others with a cookie reply:
///   `0x04 | u32 receiver index (the initiation's sender index) | nonce (12) | ChaCha20-Poly1305(cookie (32);
///   key SHA-256("padbridge link 6 cookie" | the host's public key), authenticating the initiation's mac1)`, 65
///   bytes. The cookie is the host's for the sender's address and port (`AddressCookies`): only a sender that
///   receives there gets it, and only the one that made that initiation can read it.
public struct LinkInitiationMACs: Sendable {
    private let mac1Key: [UInt8]
    private let cookieKey: SymmetricKey

    public init(hostKey: LinkPublicKey) {
        mac1Key = Array(SHA256.hash(data: Array("padbridge link 6 mac1".utf8) + hostKey.bytes))
        cookieKey = SymmetricKey(data: SHA256.hash(data: Array("padbridge link 6 cookie".utf8) + hostKey.bytes))
    }

    /// Where mac1 starts in an initiation (it covers everything before), and mac2.
    static let mac1Offset = 1 + 4 + LinkDatagram.initiationHandshakeSize
    static let mac2Offset = mac1Offset + LinkDatagram.macSize

    /// The initiation datagram carrying `handshake` (IK's first message), its MACs filled in (mac2 with `cookie`).
    public func initiation(senderIndex: UInt32, handshake: [UInt8], cookie: [UInt8]? = nil) -> [UInt8] {
        let beforeMac1 = [LinkDatagram.MessageType.initiation.rawValue] + LinkDatagram.u32(senderIndex) + handshake
        let beforeMac2 = beforeMac1 + MessageAuthentication.code(key: mac1Key[...], message: beforeMac1[...])
        return beforeMac2
            + (cookie.map { AddressCookies.mac2(cookie: $0, over: beforeMac2) }
                ?? [UInt8](repeating: 0, count: LinkDatagram.macSize))
    }

    /// Whether `datagram` is an initiation whose mac1 is this host's, compared in constant time.
    public func hasValidMac1(_ datagram: [UInt8]) -> Bool {
        guard datagram.count == LinkDatagram.initiationSize else { return false }
        return MessageAuthentication.isValid(
            datagram[Self.mac1Offset..<Self.mac2Offset], key: mac1Key[...], message: datagram[0..<Self.mac1Offset])
    }

    /// The cookie reply carrying `cookie` to the sender of `initiation`, sealed with a random nonce (a fixed one only
    /// in the protocol vectors of docs/protocol-vectors.json).
    func cookieReply(_ cookie: [UInt8], to initiation: [UInt8], nonce: ChaChaPoly.Nonce = ChaChaPoly.Nonce()) -> [UInt8]? {
        guard initiation.count == LinkDatagram.initiationSize,
            let box = try? ChaChaPoly.seal(
                cookie, using: cookieKey, nonce: nonce,
                authenticating: initiation[Self.mac1Offset..<Self.mac2Offset])
        else { return nil }
        let senderIndex = initiation[1..<5].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return LinkDatagram.cookieReply(
            receiverIndex: senderIndex, nonce: Array(box.nonce), sealedCookie: Array(box.ciphertext) + Array(box.tag)
        ).encoded
    }

    /// The cookie in a cookie reply to `initiation`; nil when it is not one (a forgery, or another initiation's).
    func openCookie(nonce: [UInt8], sealedCookie: [UInt8], answering initiation: [UInt8]) -> [UInt8]? {
        guard initiation.count == LinkDatagram.initiationSize, sealedCookie.count == LinkDatagram.macSize + 16,
            let nonce = try? ChaChaPoly.Nonce(data: nonce),
            let box = try? ChaChaPoly.SealedBox(
                nonce: nonce, ciphertext: sealedCookie.prefix(LinkDatagram.macSize), tag: sealedCookie.suffix(16)),
            let cookie = try? ChaChaPoly.open(box, using: cookieKey, authenticating: initiation[Self.mac1Offset..<Self.mac2Offset])
        else { return nil }
        return Array(cookie)
    }
}

/// What a host checks of an initiation before any public-key work (a Curve25519 operation costs a thousand times
/// an HMAC), cheapest first:
/// 1. its length (the decoder) and its mac1: junk, forgeries and initiations made for another host's key stop here;
/// 2. whether it was answered lately (by its mac1): the same initiation again, replayed by anyone, gets the same
///    answer if it comes from where the first came (a client repeats its renewal until answered), else nothing;
/// 3. the load (`HandshakeAdmission`): beyond a burst of 20 and 10 a second, only an initiation whose mac2 proves
///    its sender's address gets the work, 5 and 2 a second per source; the others get a cookie reply (smaller than
///    the initiation, so nobody is flooded through the host).
/// Pure (the time comes in), so it is tested without sockets.
struct LinkInitiationGate {
    static let limits = HandshakeAdmission.Limits(burst: 20, perSecond: 10, burstPerSource: 5, perSecondPerSource: 2)
    /// Initiations remembered as answered, and for how long (as long as the session they opened waits).
    static let answeredLimit = 256
    static let answeredLifetimeMicroseconds = LinkSessionLifetime.rekeyTimeoutMicroseconds * 2

    private let macs: LinkInitiationMACs
    private var admission: HandshakeAdmission
    private var cookies: AddressCookies
    private var answered: [[UInt8]: (address: SocketAddress, answer: [UInt8]?, expiresMicroseconds: UInt64)] = [:]
    private var answeredInOrder: [[UInt8]] = []

    init(hostKey: LinkPublicKey, atMicroseconds now: UInt64) {
        macs = LinkInitiationMACs(hostKey: hostKey)
        admission = HandshakeAdmission(Self.limits, atMicroseconds: now)
        cookies = AddressCookies(atMicroseconds: now)
    }

    enum Verdict: Sendable, Equatable {
        /// Do the public-key work (and answer if the handshake is a paired client's); then `remember` it.
        case answer
        /// Send this answer given before, again.
        case answerAgain([UInt8])
        /// Under load: send this cookie reply instead.
        case askForCookie([UInt8])
        /// Nothing: why, for the dropped count.
        case drop(LinkDropReason)
    }

    mutating func check(_ datagram: [UInt8], from address: SocketAddress, atMicroseconds now: UInt64) -> Verdict {
        guard macs.hasValidMac1(datagram) else {
            return .drop(.handshakeNotForThisHost)
        }
        let mac1 = Array(datagram[LinkInitiationMACs.mac1Offset..<LinkInitiationMACs.mac2Offset])
        if let earlier = answered[mac1], now < earlier.expiresMicroseconds {
            guard earlier.address == address, let answer = earlier.answer else { return .drop(.replayedHandshake) }
            return .answerAgain(answer)
        }
        if admission.admitsWithoutCookie(atMicroseconds: now) { return .answer }
        guard cookies.isValid(
            mac2: datagram[LinkInitiationMACs.mac2Offset...], over: datagram[0..<LinkInitiationMACs.mac2Offset],
            from: address, atMicroseconds: now)
        else {
            guard let reply = macs.cookieReply(cookies.cookie(for: address, atMicroseconds: now), to: datagram) else {
                return .drop(.cookieUnavailable)
            }
            return .askForCookie(reply)
        }
        guard admission.admitsProvenSource(address, atMicroseconds: now) else {
            return .drop(.overSourceShare(address))
        }
        return .answer
    }

    /// What an initiation checked with `.answer` got (nil: nothing, it was refused).
    mutating func remember(_ datagram: [UInt8], from address: SocketAddress, answer: [UInt8]?, atMicroseconds now: UInt64) {
        guard datagram.count == LinkDatagram.initiationSize else { return }
        let mac1 = Array(datagram[LinkInitiationMACs.mac1Offset..<LinkInitiationMACs.mac2Offset])
        while let oldest = answeredInOrder.first,
            answeredInOrder.count >= Self.answeredLimit || answered[oldest].map({ now >= $0.expiresMicroseconds }) ?? true
        {
            answeredInOrder.removeFirst()
            answered[oldest] = nil
        }
        if answered[mac1] != nil { answeredInOrder.removeAll { $0 == mac1 } }
        answeredInOrder.append(mac1)
        answered[mac1] = (address, answer, now + Self.answeredLifetimeMicroseconds)
    }
}
