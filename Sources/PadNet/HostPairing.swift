public import PadCore

/// `serve`'s side of pairing as one value: the responder and its window, and what each pairing datagram that reached
/// the host means for the person watching (the counts of unanswered datagrams and of first messages asked for a
/// cookie, rate-limited). Pure apart from `accept`, which stores a client that completed pairing.
public struct HostPairing {
    public private(set) var responder: PairingResponder
    private var unanswered = RateLimitedCount(intervalMicroseconds: 1_000_000)
    private var askedForCookies = RateLimitedCount(intervalMicroseconds: 10_000_000)

    /// What a pairing datagram meant, to be said.
    public enum Event: Sendable, Hashable {
        /// This many pairing datagrams were dropped unanswered since it was last said (at most once a second).
        case unanswered(count: Int)
        /// The client paired, but its key could not be stored (why); it was told.
        case notStored(from: SocketAddress, problem: String)
        case paired(PairedClient, from: SocketAddress)
        /// A wrong code; `triesLeft` 0: the window closed, to everyone (`closedToEveryone`) or to that address.
        case wrongCode(from: SocketAddress, triesLeft: Int, closedToEveryone: Bool)
        /// This many first messages were asked to prove their address with a cookie (at most once in 10 s).
        case underLoad(count: Int)
    }

    /// What to do with one datagram: the reply to send back along its path, what to say, and whether the window
    /// changed (a pairing, or wrong codes closing it: the announcement and `status` follow).
    public struct Handled: Sendable, Hashable {
        public var reply: [UInt8]?
        public var event: Event?
        public var windowChanged: Bool
    }

    public init(responder: PairingResponder) { self.responder = responder }

    public var window: PairingWindow? { responder.window }

    /// Whether a window admits pairing now.
    public func isOpen(atMicroseconds now: UInt64) -> Bool { window?.admits(atMicroseconds: now) == .open }

    public mutating func open(_ code: PairingCode, atMicroseconds now: UInt64) { responder.open(code, atMicroseconds: now) }

    public mutating func close() { responder.close() }

    /// The window as `status` and the control socket show it.
    public func status(atMicroseconds now: UInt64) -> PairingWindowStatus {
        guard let window, window.admits(atMicroseconds: now) == .open else { return PairingWindowStatus(open: false) }
        return PairingWindowStatus(
            open: true, code: "\(window.code)",
            secondsLeft: Int((window.expiresAtMicroseconds - min(now, window.expiresAtMicroseconds)) / 1_000_000))
    }

    /// Handles one pairing datagram from `from`.
    public mutating func handle(
        _ datagram: PairingDatagram, from: SocketAddress, atMicroseconds now: UInt64, accept: (PairedClient) throws -> Void
    ) -> Handled {
        let (reply, responderEvent) = responder.handle(datagram, from: from, atMicroseconds: now, accept: accept)
        var event: Event?
        switch responderEvent {
        case let .notStored(problem)?:
            event = .notStored(from: from, problem: problem)
        case let .paired(client)?:
            event = .paired(client, from: from)
        case let .wrongCode(left)?:
            event = .wrongCode(
                from: from, triesLeft: left,
                closedToEveryone: left == 0 && (window?.wrongTries ?? 0) >= PairingWindow.wrongTriesAllowed)
        case .askedForCookie?:
            if let count = askedForCookies.note(atMicroseconds: now) { event = .underLoad(count: count) }
        case .refused?:
            break
        case nil:
            if reply == nil, let count = unanswered.note(atMicroseconds: now) { event = .unanswered(count: count) }
        }
        return Handled(reply: reply, event: event, windowChanged: responderEvent != nil)
    }
}
