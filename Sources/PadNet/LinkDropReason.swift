/// Why the host dropped a datagram unanswered (said with the count of drops, at most once a while): a name for
/// programs (`--events json`'s `cause`) and the sentence for people.
public enum LinkDropReason: Sendable, Hashable, CustomStringConvertible {
    /// Neither a link datagram nor a pairing one.
    case notPadbridges
    /// A response or cookie reply: what only a host sends.
    case answerSentToHost
    case malformed
    case unauthenticated
    /// For a session its client did not renew in time.
    case sessionTooOld
    case sessionEnded
    case unpairedOrReplayedHandshake
    /// An initiation whose mac1 is not for this host's key.
    case handshakeNotForThisHost
    case replayedHandshake
    case cookieUnavailable
    /// Under load, a source past its share of handshakes.
    case overSourceShare(SocketAddress)

    /// The case's name, as `--events json` gives it.
    public var name: String {
        switch self {
        case .notPadbridges: "notPadbridges"
        case .answerSentToHost: "answerSentToHost"
        case .malformed: "malformed"
        case .unauthenticated: "unauthenticated"
        case .sessionTooOld: "sessionTooOld"
        case .sessionEnded: "sessionEnded"
        case .unpairedOrReplayedHandshake: "unpairedOrReplayedHandshake"
        case .handshakeNotForThisHost: "handshakeNotForThisHost"
        case .replayedHandshake: "replayedHandshake"
        case .cookieUnavailable: "cookieUnavailable"
        case .overSourceShare: "overSourceShare"
        }
    }

    /// The source a reason names (`overSourceShare`).
    public var source: SocketAddress? {
        if case let .overSourceShare(address) = self { address } else { nil }
    }

    public var description: String {
        switch self {
        case .notPadbridges: "not padbridge's"
        case .answerSentToHost: "an answer sent to the host"
        case .malformed: "malformed"
        case .unauthenticated: "unauthenticated, replayed or for no session"
        case .sessionTooOld: "for a session too old (its client did not renew it)"
        case .sessionEnded: "for a session that ended"
        case .unpairedOrReplayedHandshake: "handshake from an unpaired client, or replayed"
        case .handshakeNotForThisHost:
            "a handshake not made for this host's key (junk, a forgery, or a client paired with another host)"
        case .replayedHandshake: "a replayed handshake"
        case .cookieUnavailable: "a handshake that could not be asked for a cookie"
        case let .overSourceShare(address):
            "more handshakes from \(address) than one source gets while the host is under load"
        }
    }
}
