public import Crypto
public import PadCore
public import PadNoise

/// The host's side of pairing: answers pairing datagrams while a window is open. Pure apart from `accept` (which
/// stores the client's key): datagrams and the time come in, replies go out, so it is tested without sockets.
///
/// What others on the network cannot do to it: make it answer an answer (it replies only to a client's first
/// message or confirmation, never to a response, a confirmation of pairing or a refusal, so two hosts never bounce
/// datagrams between them); make it send more than it received (a first message must be padded to
/// `PairingDatagram.minimumInitiationSize`, larger than any answer); evict a person's exchange in progress (a full
/// table turns new first messages away instead, and one source holds at most `pendingPerSource` exchanges, a new
/// one replacing its own oldest); keep a person from pairing or stall the host with a flood of first messages (public-key work
/// only within `limits`: beyond a burst and a steady rate the host is under load, and a first message gets an
/// exchange only if its mac2 proves its sender's address with the cookie the host gave it, at a few a second per
/// source; random bytes fail the first message's own check, which needs no public-key work, and get nothing);
/// close the window with junk (a confirmation whose sender's key does not even authenticate is noise, not a wrong
/// code); close it for others with wrong codes (counted per source address, `PairingWindow.wrongTriesPerSource`,
/// up to `wrongTriesAllowed` in all).
public struct PairingResponder {
    public private(set) var window: PairingWindow?
    private let identity: Curve25519.KeyAgreement.PrivateKey
    private let hostName: String

    private struct Exchange {
        let address: SocketAddress
        let initiation: [UInt8]
        let handshake: NoiseHandshake
        let response: [UInt8]
        let startedMicroseconds: UInt64
    }

    /// Handshakes under way, by the client's address, with the first message and the answer given (a client sends
    /// its first message again until it hears back: the same answer goes back, from the same handshake).
    private var pending: [Exchange] = []
    /// The last confirmation accepted, and the answer given (sent again if the client repeats it: the answer was lost).
    private var completed: (address: SocketAddress, confirmation: [UInt8], reply: [UInt8])?
    /// Wrong codes by source address (without the port).
    private var wrongTriesBySource: [[UInt8]: Int] = [:]
    /// At most this many exchanges at once; a first message beyond it is turned away (no exchange is evicted).
    static let pendingLimit = 64
    /// At most this many from one source (`SourceGrouping`: an IPv4 address; an IPv6 address on the host's links, a /64
    /// beyond them): a new one replaces the source's oldest
    /// (a person who runs `pair` again; a flooder churns only its own).
    static let pendingPerSource = 2
    /// New exchanges (each a key generation and two agreements): a burst of 8 and 2 a second from anyone, then
    /// 3 and 1 a second per source that proved its address.
    static let limits = HandshakeAdmission.Limits(burst: 8, perSecond: 2, burstPerSource: 3, perSecondPerSource: 1)
    private var admission = HandshakeAdmission(Self.limits, atMicroseconds: 0)
    private var cookies = AddressCookies()
    /// The ephemeral key of the next exchange, used once; nil (always, outside the protocol vectors of
    /// docs/protocol-vectors.json) draws a fresh random key for each.
    var nextExchangeEphemeral: Curve25519.KeyAgreement.PrivateKey?
    /// An exchange not confirmed within this long is forgotten (a client confirms within a round trip).
    static let pendingLifetimeMicroseconds: UInt64 = 10_000_000

    public init(identity: Curve25519.KeyAgreement.PrivateKey, hostName: String) {
        self.identity = identity
        self.hostName = hostName
    }

    public mutating func open(_ code: PairingCode, atMicroseconds now: UInt64) {
        window = PairingWindow(code: code, openedAtMicroseconds: now)
        pending.removeAll()
        wrongTriesBySource.removeAll()
    }

    /// Closes the window (the control socket's `close-pairing`): no pairing until one is opened again.
    public mutating func close() {
        window = nil
        pending.removeAll()
        wrongTriesBySource.removeAll()
    }

    /// Whether a window is open now.
    public func isOpen(atMicroseconds now: UInt64) -> Bool {
        guard let window else { return false }
        return !window.isOver(atMicroseconds: now)
    }

    /// What happened with a datagram, for the host's status line.
    public enum Event: Sendable, Equatable {
        case paired(PairedClient)
        case wrongCode(triesLeft: Int)
        case refused(PairingRefusal)
        /// The client paired, but its key could not be stored (why); it was told.
        case notStored(String)
        /// Under load (a flood of first messages?): a first message was asked to prove its sender's address.
        case askedForCookie
    }

    /// Handles one pairing datagram from `address`: the reply to send (if any), and what happened. `accept` stores
    /// a client that completed pairing; if it throws, the pairing fails and both sides are told.
    public mutating func handle(
        _ datagram: PairingDatagram, from address: SocketAddress, atMicroseconds now: UInt64,
        accept: (PairedClient) throws -> Void
    ) -> (reply: [UInt8]?, event: Event?) {
        switch datagram {
        case let .initiation(message):
            // Smaller than the answer would be: nothing (not even a refusal, for a bare type byte).
            guard 1 + message.count >= PairingDatagram.minimumInitiationSize else { return (nil, nil) }
            return initiation(message, from: address, atMicroseconds: now)
        case let .confirmation(message):
            return confirmation(message, from: address, atMicroseconds: now, accept: accept)
        case .response, .paired, .refused, .cookieReply:
            return (nil, nil)  // answers: never answered
        }
    }

    private mutating func initiation(_ message: [UInt8], from address: SocketAddress, atMicroseconds now: UInt64)
        -> (reply: [UInt8]?, event: Event?)
    {
        guard let window else { return (PairingDatagram.refused(.noWindow).encoded, .refused(.noWindow)) }
        pending.removeAll { now >= $0.startedMicroseconds + Self.pendingLifetimeMicroseconds }
        // The first message without its mac2 (the client sends it again with one when asked for a cookie).
        let handshakeMessage = Array(message.dropLast(PairingDatagram.macSize))
        if let earlier = pending.first(where: { $0.address == address && $0.initiation == handshakeMessage }) {
            return (PairingDatagram.response(earlier.response).encoded, nil)
        }
        if let refusal = refusal(for: address, window: window, atMicroseconds: now) {
            return (PairingDatagram.refused(refusal).encoded, nil)
        }
        // Its own check first (hashes and one ChaCha20-Poly1305, no public-key work): random bytes stop here.
        let ephemeral = nextExchangeEphemeral
        nextExchangeEphemeral = nil
        guard var handshake = try? PairingHandshake.responder(code: window.code, identity: identity, ephemeral: ephemeral),
            (try? handshake.readMessage(handshakeMessage)) != nil
        else { return (nil, nil) }
        // An earlier exchange of this client's (another first message) gives way to this one, and so does the
        // oldest of its source's when the source holds its share: a source never evicts another's exchange.
        var others = pending.filter { $0.address != address }
        let source = admission.source(of: address, atMicroseconds: now)
        let sameSource = others.map { admission.source(of: $0.address, atMicroseconds: now) == source }
        if let oldest = sameSource.firstIndex(of: true), sameSource.count(where: { $0 }) >= Self.pendingPerSource {
            others.remove(at: oldest)
        }
        guard others.count < Self.pendingLimit else {
            return (nil, nil)  // busy: the exchanges under way go on; this client sends again
        }
        if !admission.admitsWithoutCookie(atMicroseconds: now) {
            let beforeMac2 = [0x50] + handshakeMessage
            guard cookies.isValid(
                mac2: message.suffix(PairingDatagram.macSize), over: beforeMac2[...], from: address, atMicroseconds: now)
            else {
                let cookie = cookies.cookie(for: address, atMicroseconds: now)
                let reply = PairingDatagram.cookieReply(digest: PairingDatagram.digest(ofFirstMessage: beforeMac2), cookie: cookie)
                return (reply.encoded, .askedForCookie)
            }
            guard admission.admitsProvenSource(address, atMicroseconds: now) else { return (nil, nil) }
        }
        guard let response = try? handshake.writeMessage(payload: PairingHandshake.namePayload(hostName)) else {
            return (nil, nil)
        }
        pending = others
        pending.append(Exchange(address: address, initiation: handshakeMessage, handshake: handshake, response: response, startedMicroseconds: now))
        return (PairingDatagram.response(response).encoded, nil)
    }

    private mutating func confirmation(
        _ message: [UInt8], from address: SocketAddress, atMicroseconds now: UInt64, accept: (PairedClient) throws -> Void
    ) -> (reply: [UInt8]?, event: Event?) {
        if let completed, completed.address == address, completed.confirmation == message {
            return (completed.reply, nil)
        }
        guard var window, let index = pending.firstIndex(where: { $0.address == address }) else { return (nil, nil) }
        var handshake = pending[index].handshake
        let payload: [UInt8]
        do {
            payload = try handshake.readMessage(message)
        } catch .presharedKeyMismatch {
            // The sender took part in this exchange (its key authenticated) with another code: a wrong code.
            pending.remove(at: index)
            window.recordWrongTry()
            self.window = window
            let source = address.hostBytes
            let tries = wrongTriesBySource[source, default: 0] + 1
            wrongTriesBySource[source] = tries
            let left = max(0, min(PairingWindow.wrongTriesPerSource - tries, PairingWindow.wrongTriesAllowed - window.wrongTries))
            return (PairingDatagram.refused(left > 0 ? .wrongCode : .tooManyTries).encoded, .wrongCode(triesLeft: left))
        } catch {
            return (nil, nil)  // junk, or not from the party that sent the first message: noise (the exchange stays)
        }
        pending.remove(at: index)
        guard let keys = try? handshake.split(), let remote = handshake.remoteStaticPublicKey,
            let clientKey = LinkPublicKey(bytes: remote)
        else { return (nil, nil) }
        guard case .open = window.admits(atMicroseconds: now, client: clientKey) else {
            return (PairingDatagram.refused(.noWindow).encoded, .refused(.noWindow))
        }
        let client = PairedClient(key: clientKey, name: TrustFileFormat.sanitized(String(decoding: payload, as: UTF8.self)))
        do {
            try accept(client)
        } catch {
            return (PairingDatagram.refused(.hostCannotStore).encoded, .notStored("\(error)"))
        }
        let repeated = window.pairedClient != nil
        window.recordPaired(clientKey, atMicroseconds: now)
        self.window = window
        guard let sealed = try? keys.sending.seal(PairingHandshake.confirmationText, counter: 0) else { return (nil, nil) }
        let reply = PairingDatagram.paired(sealed).encoded
        completed = (address, message, reply)
        return (reply, repeated ? nil : .paired(client))
    }

    /// Why a new exchange from `address` is refused now, if it is.
    private func refusal(for address: SocketAddress, window: PairingWindow, atMicroseconds now: UInt64) -> PairingRefusal? {
        if wrongTriesBySource[address.hostBytes, default: 0] >= PairingWindow.wrongTriesPerSource { return .tooManyTries }
        guard case let .closed(reason) = window.admits(atMicroseconds: now, client: nil) else { return nil }
        // After a pairing, the paired client may run it again from where it paired, for a while (its confirmation
        // may have been lost): whether it is that client is decided at the confirmation, where its key is known.
        // Anyone else, and everyone once that while is over, is refused here, before any public-key work (an answer
        // would also hand out the host's key while its announcement says pairing=closed).
        if window.pairedClient != nil, reason == .noWindow, !window.isOver(atMicroseconds: now),
            completed?.address.hostBytes == address.hostBytes
        {
            return nil
        }
        return reason
    }
}

/// The client's side of pairing: the datagrams to send and what the host's replies mean. Pure.
///
/// Every distinct response is followed (up to `branchLimit`): a response spoofed by someone who saw the first
/// message does not make the client ignore the host's own; the host's confirmation of pairing is checked against
/// each.
public struct PairingInitiator {
    /// The handshake after the first message: each response is read from a copy of it.
    private var afterFirstMessage: NoiseHandshake
    private let clientName: String
    /// The first datagram without its mac2, and whole (mac2 zeros, or made with the host's cookie).
    private var firstMessageBeforeMac2: [UInt8]?
    private var firstMessage: [UInt8]?
    private var cookie: [UInt8]?
    private var branches: [(response: [UInt8], keys: NoiseTransportKeys, hostKey: LinkPublicKey, hostName: String, confirmation: [UInt8])] = []
    static let branchLimit = 4

    public init(code: PairingCode, identity: Curve25519.KeyAgreement.PrivateKey, clientName: String) throws(NoiseError) {
        try self.init(code: code, identity: identity, clientName: clientName, ephemeral: nil)
    }

    /// `ephemeral`: only the protocol vectors (docs/protocol-vectors.json) give one; nil draws a fresh random key.
    init(
        code: PairingCode, identity: Curve25519.KeyAgreement.PrivateKey, clientName: String,
        ephemeral: Curve25519.KeyAgreement.PrivateKey?
    ) throws(NoiseError) {
        afterFirstMessage = try PairingHandshake.initiator(code: code, identity: identity, ephemeral: ephemeral)
        self.clientName = clientName
    }

    /// The first datagram (sent again, unchanged, until the host answers or asks for a cookie), padded to
    /// `PairingDatagram.minimumInitiationSize`.
    public mutating func start() throws(NoiseError) -> [UInt8] {
        if let firstMessage { return firstMessage }
        let padding = PairingDatagram.minimumInitiationSize - 1 - 32 - 16 - PairingDatagram.macSize
        let beforeMac2 = PairingDatagram.initiation(
            try afterFirstMessage.writeMessage(payload: [UInt8](repeating: 0, count: padding))).encoded
        firstMessageBeforeMac2 = beforeMac2
        let datagram = beforeMac2 + [UInt8](repeating: 0, count: PairingDatagram.macSize)
        firstMessage = datagram
        return datagram
    }

    public enum Outcome: Sendable, Equatable {
        /// Send this (a confirmation, or the first message with the host's cookie), and keep listening.
        case send([UInt8])
        /// Both sides stored the other's key: the host's key and name.
        case paired(LinkPublicKey, hostName: String)
        case refused(PairingRefusal)
        /// Not for us, or not now.
        case ignored
    }

    public mutating func receive(_ datagram: PairingDatagram) -> Outcome {
        switch datagram {
        case let .response(message):
            guard !branches.contains(where: { $0.response == message }) else { return .ignored }
            var handshake = afterFirstMessage
            guard let payload = try? handshake.readMessage(message),
                let confirmation = try? handshake.writeMessage(payload: PairingHandshake.namePayload(clientName)),
                let keys = try? handshake.split(),
                let remote = handshake.remoteStaticPublicKey, let hostKey = LinkPublicKey(bytes: remote)
            else { return .ignored }
            let encoded = PairingDatagram.confirmation(confirmation).encoded
            branches.append((
                message, keys, hostKey, TrustFileFormat.sanitized(String(decoding: payload, as: UTF8.self)), encoded
            ))
            if branches.count > Self.branchLimit { branches.removeFirst() }
            return .send(encoded)
        case let .paired(sealed):
            for branch in branches {
                if let text = try? branch.keys.receiving.open(sealed, counter: 0), text == PairingHandshake.confirmationText {
                    return .paired(branch.hostKey, hostName: branch.hostName)
                }
            }
            return .ignored
        case let .refused(reason):
            return .refused(reason)
        case let .cookieReply(digest, cookie):
            // A host under load asks for the first message again, proving this client's address with its cookie.
            guard branches.isEmpty, let beforeMac2 = firstMessageBeforeMac2,
                digest == PairingDatagram.digest(ofFirstMessage: beforeMac2), cookie != self.cookie
            else { return .ignored }
            self.cookie = cookie
            let datagram = beforeMac2 + AddressCookies.mac2(cookie: cookie, over: beforeMac2)
            firstMessage = datagram
            return .send(datagram)
        case .initiation, .confirmation:
            return .ignored
        }
    }

    /// Whether a host's response came (confirmations are then what is sent again).
    public var awaitingConfirmation: Bool { !branches.isEmpty }

    /// Whether a host answered at all: a response, or a cookie it asked the first message to carry (a host under
    /// load). Neither is proof of the host (nothing is before the code is checked): only a reason to keep trying.
    public var heardFromAHost: Bool { !branches.isEmpty || cookie != nil }

    /// What to send again while no answer came: the first message, then every confirmation made.
    public var datagramsToRepeat: [[UInt8]] {
        branches.isEmpty ? (firstMessage.map { [$0] } ?? []) : branches.map(\.confirmation)
    }
}

/// One run of `padbridge pair`, in time: the initiator, plus how a refusal is taken. A refusal is not authenticated
/// (there is no shared key yet), so it ends the attempt only when nothing contradicts it for
/// `refusalGraceMicroseconds`: a refusal spoofed ahead of the host's response does not abort pairing. Pure.
public struct PairingAttempt {
    public static let refusalGraceMicroseconds: UInt64 = 1_000_000

    private var initiator: PairingInitiator
    private var refusal: (reason: PairingRefusal, atMicroseconds: UInt64)?

    public init(initiator: PairingInitiator) { self.initiator = initiator }

    public mutating func start(atMicroseconds now: UInt64) throws(NoiseError) -> [UInt8] { try initiator.start() }

    /// What a datagram means now: a confirmation to send, pairing done, or nothing yet (a refusal waits).
    public mutating func receive(_ datagram: PairingDatagram, atMicroseconds now: UInt64) -> PairingInitiator.Outcome? {
        switch initiator.receive(datagram) {
        case let .refused(reason):
            if refusal == nil { refusal = (reason, now) }
            return nil
        case .ignored:
            return nil
        case let outcome:
            refusal = nil
            return outcome
        }
    }

    /// The refusal heard, once nothing contradicted it for the grace time.
    public func verdict(atMicroseconds now: UInt64) -> PairingInitiator.Outcome? {
        guard let refusal, now >= refusal.atMicroseconds + Self.refusalGraceMicroseconds else { return nil }
        return .refused(refusal.reason)
    }

    /// When a refusal heard becomes the verdict (nil: none heard).
    public var verdictDueMicroseconds: UInt64? { refusal.map { $0.atMicroseconds + Self.refusalGraceMicroseconds } }

    public var datagramsToRepeat: [[UInt8]] { initiator.datagramsToRepeat }

    /// Whether a host answered (see `PairingInitiator.heardFromAHost`).
    public var heardFromAHost: Bool { initiator.heardFromAHost }
}
