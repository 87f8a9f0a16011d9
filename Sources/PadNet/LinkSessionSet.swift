import PadCore

/// One session of the link: its transport keys and when it started. A class: the session in use is read for every
/// datagram, and a copy of a struct holding the keys retained each of their references (~330 instructions a reply).
final class LinkSession {
    var keys: LinkSessionKeys
    let startedMicroseconds: UInt64
    /// The handshake clock of the initiation that made it (the host's replay rule: a new initiation must be later).
    let initiationClock: UInt64
    /// The path its handshake came along (the host's; the client's sessions all go to the host it aims at).
    let path: DatagramPath
    /// Its datagrams from the peer that authenticated, and the highest counter among them: the peer seals with
    /// counters 0, 1, 2, ..., so the gaps below the highest are what was lost on the way here (or is late).
    var receivedDatagrams: UInt64 = 0
    var highestCounter: UInt64?

    init(keys: LinkSessionKeys, startedMicroseconds: UInt64, initiationClock: UInt64 = 0, path: DatagramPath) {
        self.keys = keys
        self.startedMicroseconds = startedMicroseconds
        self.initiationClock = initiationClock
        self.path = path
    }

    var localIndex: UInt32 { keys.localIndex }

    /// Whether it still opens datagrams at `time` (`LinkSessionLifetime.rejectAfterMicroseconds` from its start).
    func isUsable(atMicroseconds time: UInt64) -> Bool {
        time < startedMicroseconds + LinkSessionLifetime.rejectAfterMicroseconds
    }

    /// Notes an authenticated datagram with `counter` (for the loss figure).
    func noteReceived(counter: UInt64) {
        receivedDatagrams &+= 1
        highestCounter = max(highestCounter ?? counter, counter)
    }

    /// The share of the peer's datagrams of this session that did not arrive, from the highest counter seen; nil
    /// before any.
    var lossPercent: Double? {
        guard let highestCounter else { return nil }
        let expected = Double(highestCounter) + 1
        return 100 * max(0, expected - Double(receivedDatagrams)) / expected
    }
}

/// The sessions one peer holds with another, as WireGuard keeps its keypairs: `current` carries everything sent;
/// `previous`, the one it replaced, still opens late datagrams sent before the switch; `next`, a session the
/// responder (the host) answered, counts only once the initiator's first datagram in it authenticates (a replayed
/// handshake opens nothing). The initiator (the client) makes a new session current at once when its handshake
/// completes. Any session opens nothing `LinkSessionLifetime.rejectAfterMicroseconds` after its start.
///
/// Every method that drops a session returns it, so an owner that indexes sessions forgets exactly those.
///
/// A class: the client's state carries it (`ForwardingClient.State.established`), and reading it out of the state on
/// every frame's path retains one reference, where a struct of three retained each (and copied the state's largest
/// case: callgrind, ~600 instructions a frame).
final class LinkSessionSet {
    private(set) var current: LinkSession?
    private(set) var previous: LinkSession?
    private(set) var next: LinkSession?

    init() {}

    /// What a datagram for `index` finds at `time`.
    enum Lookup {
        case current(LinkSession)
        case previous(LinkSession)
        /// The answered session: the datagram, if it authenticates, confirms it (`confirmNext`).
        case next(LinkSession)
        /// The session in use is older than the lifetime rule allows: its peer did not renew it.
        case currentTooOld
        /// No session here has that index any more, or the previous one is past its lifetime.
        case ended
    }

    func lookUp(index: UInt32, atMicroseconds time: UInt64) -> Lookup {
        if let current, current.localIndex == index {
            return current.isUsable(atMicroseconds: time) ? .current(current) : .currentTooOld
        }
        if let next, next.localIndex == index { return .next(next) }
        if let previous, previous.localIndex == index, previous.isUsable(atMicroseconds: time) { return .previous(previous) }
        return .ended
    }

    /// The responder answered a handshake: `session` waits to be confirmed. Returns the earlier unconfirmed one it
    /// replaces.
    @discardableResult
    func answered(_ session: LinkSession) -> LinkSession? {
        defer { next = session }
        return next
    }

    /// The answered session's first datagram authenticated: it becomes current, the one it replaces previous.
    /// Returns the confirmed session, the replaced one (now `previous`), and the previous one dropped for it; nil
    /// when nothing was answered.
    func confirmNext() -> (confirmed: LinkSession, replaced: LinkSession?, dropped: LinkSession?)? {
        guard let confirmed = next else { return nil }
        let dropped = previous
        let replaced = current
        next = nil
        previous = replaced
        current = confirmed
        return (confirmed, replaced, dropped)
    }

    /// The initiator's handshake completed: `session` is current at once, the one it replaces previous. Returns the
    /// previous one dropped for it.
    @discardableResult
    func initiated(_ session: LinkSession) -> LinkSession? {
        let dropped = previous
        previous = current
        current = session
        next = nil
        return dropped
    }

    /// Forgets the previous session (a taken-over link's old session opens nothing more). Returns it.
    @discardableResult
    func dropPrevious() -> LinkSession? {
        defer { previous = nil }
        return previous
    }

    /// An answered session never confirmed within `timeoutMicroseconds` of its answer is forgotten. Returns it.
    func expireNext(atMicroseconds time: UInt64, timeoutMicroseconds: UInt64) -> LinkSession? {
        guard let pending = next, time >= pending.startedMicroseconds + timeoutMicroseconds else { return nil }
        next = nil
        return pending
    }

    /// Every session, for an owner that forgets them all (the peer removed).
    var all: [LinkSession] { [current, previous, next].compactMap { $0 } }

    /// Forgets every session (the link lost, or stopped). Returns them.
    @discardableResult
    func removeAll() -> [LinkSession] {
        defer {
            current = nil
            previous = nil
            next = nil
        }
        return all
    }
}
