public import Crypto
public import PadCore
public import PadNoise

/// The host's side of pairing: answers pairing datagrams while a window is open. Pure apart from `accept` (which
/// stores the client's key): datagrams and the time come in, replies go out, so it is tested without sockets.
public struct PairingResponder {
    public private(set) var window: PairingWindow?
    private let identity: Curve25519.KeyAgreement.PrivateKey
    private let hostName: String
    /// Handshakes under way, by the client's address, with the first message and the answer given (a client sends
    /// its first message again until it hears back: the same answer goes back, from the same handshake). Bounded: a
    /// flood of first messages evicts the oldest.
    private var pending: [(address: SocketAddress, initiation: [UInt8], handshake: NoiseHandshake, response: [UInt8])] = []
    /// The last confirmation accepted, and the answer given (sent again if the client repeats it: the answer was lost).
    private var completed: (address: SocketAddress, confirmation: [UInt8], reply: [UInt8])?
    static let pendingLimit = 16

    public init(identity: Curve25519.KeyAgreement.PrivateKey, hostName: String) {
        self.identity = identity
        self.hostName = hostName
    }

    public mutating func open(_ code: PairingCode, atMicroseconds now: UInt64) {
        window = PairingWindow(code: code, openedAtMicroseconds: now)
        pending.removeAll()
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
    }

    /// Handles one pairing datagram from `address`: the reply to send (if any), and what happened. `accept` stores
    /// a client that completed pairing; if it throws, the pairing fails (nothing is confirmed).
    public mutating func handle(
        _ datagram: PairingDatagram, from address: SocketAddress, atMicroseconds now: UInt64,
        accept: (PairedClient) throws -> Void
    ) -> (reply: [UInt8]?, event: Event?) {
        guard var window else { return (PairingDatagram.refused(.noWindow).encoded, .refused(.noWindow)) }
        switch datagram {
        case let .initiation(message):
            if let earlier = pending.first(where: { $0.address == address && $0.initiation == message }) {
                return (PairingDatagram.response(earlier.response).encoded, nil)
            }
            if case let .closed(reason) = window.admits(atMicroseconds: now, client: nil),
                window.pairedClient == nil || reason != .noWindow
            {
                return (PairingDatagram.refused(reason).encoded, nil)
            }
            guard var handshake = try? PairingHandshake.responder(code: window.code, identity: identity),
                (try? handshake.readMessage(message)) != nil,
                let response = try? handshake.writeMessage(payload: Array(TrustFileFormat.sanitized(hostName).utf8))
            else { return (nil, nil) }
            pending.removeAll { $0.address == address }
            pending.append((address, message, handshake, response))
            if pending.count > Self.pendingLimit { pending.removeFirst() }
            return (PairingDatagram.response(response).encoded, nil)
        case let .confirmation(message):
            if let completed, completed.address == address, completed.confirmation == message {
                return (completed.reply, nil)
            }
            guard let index = pending.firstIndex(where: { $0.address == address }) else { return (nil, nil) }
            var handshake = pending.remove(at: index).handshake
            guard let payload = try? handshake.readMessage(message), let keys = try? handshake.split(),
                let remote = handshake.remoteStaticPublicKey, let clientKey = LinkPublicKey(bytes: remote)
            else {
                window.recordWrongTry()
                self.window = window
                let left = PairingWindow.wrongTriesAllowed - window.wrongTries
                let reason: PairingRefusal = left > 0 ? .wrongCode : .tooManyTries
                return (PairingDatagram.refused(reason).encoded, .wrongCode(triesLeft: max(0, left)))
            }
            guard case .open = window.admits(atMicroseconds: now, client: clientKey) else {
                return (PairingDatagram.refused(.noWindow).encoded, .refused(.noWindow))
            }
            let client = PairedClient(
                key: clientKey, name: TrustFileFormat.sanitized(String(decoding: payload, as: UTF8.self)))
            do {
                try accept(client)
            } catch {
                return (nil, nil)
            }
            let repeated = window.pairedClient != nil
            window.recordPaired(clientKey, atMicroseconds: now)
            self.window = window
            guard let sealed = try? keys.sending.seal(PairingHandshake.confirmationText, counter: 0) else { return (nil, nil) }
            let reply = PairingDatagram.paired(sealed).encoded
            completed = (address, message, reply)
            return (reply, repeated ? nil : .paired(client))
        case .response, .paired, .refused:
            return (nil, nil)  // the client's datagrams only
        }
    }
}

/// The client's side of pairing: the datagrams to send and what the host's replies mean. Pure.
public struct PairingInitiator {
    private var handshake: NoiseHandshake
    private let clientName: String
    private var keys: NoiseTransportKeys?
    private var hostName = ""

    public init(code: PairingCode, identity: Curve25519.KeyAgreement.PrivateKey, clientName: String) throws(NoiseError) {
        handshake = try PairingHandshake.initiator(code: code, identity: identity)
        self.clientName = clientName
    }

    /// The first datagram (sent again, unchanged, until the host answers).
    public mutating func start() throws(NoiseError) -> [UInt8] {
        PairingDatagram.initiation(try handshake.writeMessage()).encoded
    }

    public enum Outcome: Sendable, Equatable {
        /// Send this (the confirmation), and keep listening.
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
            guard handshake.isMyTurnToWrite == false, keys == nil,
                let payload = try? handshake.readMessage(message),
                let confirmation = try? handshake.writeMessage(payload: Array(TrustFileFormat.sanitized(clientName).utf8)),
                let split = try? handshake.split()
            else { return .ignored }
            keys = split
            hostName = TrustFileFormat.sanitized(String(decoding: payload, as: UTF8.self))
            return .send(PairingDatagram.confirmation(confirmation).encoded)
        case let .paired(sealed):
            guard let keys, let text = try? keys.receiving.open(sealed, counter: 0),
                text == PairingHandshake.confirmationText,
                let remote = handshake.remoteStaticPublicKey, let hostKey = LinkPublicKey(bytes: remote)
            else { return .ignored }
            return .paired(hostKey, hostName: hostName)
        case let .refused(reason):
            return .refused(reason)
        case .initiation, .confirmation:
            return .ignored
        }
    }

    /// The confirmation to send again if the host's answer to it was lost (nil before the host's response came).
    public var awaitingConfirmation: Bool { keys != nil }
}
