import PadCore

/// A paired client the host has heard from: its sessions, its link's liveness and figures, its pads, and what it is
/// owed (acknowledgements, a retry of a pad refused for the creation limit).
final class HostedClient {
    let key: LinkPublicKey
    var name: String
    /// Where its datagrams come from (the confirmed session's, and wherever that session's datagrams move).
    var path: DatagramPath
    let sessions = LinkSessionSet()
    var liveness: LinkLiveness
    /// Given up for lost: its pads linger until it is heard again.
    var lost = false
    var pads = HostedClientPads()
    /// The version of its pad table applied (acknowledged in every reply); nil until one is, in each session.
    var padTableVersion: UInt32?
    var acknowledgements = AcknowledgementSchedule()
    /// When a pad refused for the creation limit may be tried again (nil: none waits for it).
    var creationRetryMicroseconds: UInt64?
    /// The link's figures in this session (the status): datagrams each way, the host's loss towards the client as
    /// its last ping told, and its round trip as it reported (the host sends no pings of its own).
    var receivedDatagrams: UInt32 = 0
    var sentDatagrams: UInt32 = 0
    var lossToClientPercent: Double?
    var reportedRoundTripMicroseconds: UInt64?

    init(key: LinkPublicKey, name: String, path: DatagramPath, now: UInt64) {
        self.key = key
        self.name = name
        self.path = path
        liveness = LinkLiveness(startingAtMicroseconds: now)
    }

    /// Connected: a confirmed session and the link not lost.
    var isLive: Bool { sessions.current != nil && !lost }

    /// A new session starts afresh: the client sends its pad table again, each pad's frames from where it says, and
    /// gets every pad's whole feedback state; the figures count from zero.
    func sessionRestarted() {
        for pad in pads.all {
            pad.receiver.restart()
            pad.feedback.restartSession()
        }
        padTableVersion = nil
        receivedDatagrams = 0
        sentDatagrams = 0
    }
}

/// The clients by key, and in the order they came: the host walks them after every datagram, an array rather than a
/// dictionary's values (whose iteration retained its storage and each client).
struct HostedClients {
    private var byKey: [LinkPublicKey: HostedClient] = [:]
    private(set) var values: [HostedClient] = []

    subscript(key: LinkPublicKey) -> HostedClient? {
        get { byKey[key] }
        set {
            if let old = byKey[key] { values.removeAll { $0 === old } }
            byKey[key] = newValue
            if let newValue { values.append(newValue) }
        }
    }

    var padCount: Int { values.reduce(0) { $0 + $1.pads.count } }

    mutating func removeAll() {
        byKey.removeAll()
        values.removeAll()
    }
}

/// Sessions by their index, each pointing at its client: at most three a client, found by a linear search over the
/// indexes (the index is random, and a dictionary hashed it for every datagram: ~110 instructions).
struct SessionsByIndex {
    private var indexes: [UInt32] = []
    private var clients: [HostedClient] = []

    subscript(index: UInt32) -> HostedClient? {
        indexes.firstIndex(of: index).map { clients[$0] }
    }

    mutating func add(_ session: LinkSession, of client: HostedClient) {
        if let position = indexes.firstIndex(of: session.localIndex) {
            clients[position] = client
        } else {
            indexes.append(session.localIndex)
            clients.append(client)
        }
    }

    /// Forgets `session` (nil: nothing).
    mutating func remove(_ session: LinkSession?) {
        guard let session, let position = indexes.firstIndex(of: session.localIndex) else { return }
        indexes.remove(at: position)
        clients.remove(at: position)
    }

    mutating func removeAll() {
        indexes.removeAll()
        clients.removeAll()
    }
}

extension ForwardingHost {
    /// What one client may make the host do in a while: apply a new pad table (each may make, release and
    /// destroy virtual devices), and have a virtual pad made. A person plugging pads in and out stays far inside
    /// both; a client that sends table after table of new pads gets at most `tableBurst` tables and `creationBurst`
    /// virtual pads at once, then `tablesPerSecond` and `creationsPerSecond`: its other tables wait (unacknowledged,
    /// so they keep coming) and its other pads are not forwarded until a token comes, with the reason said.
    struct ChurnBudget {
        static let tableBurst = 10.0
        static let tablesPerSecond = 2.0
        static let creationBurst = 8.0
        static let creationsPerSecond = 0.5
        var tables: TokenBucket
        var creations: TokenBucket
        init(atMicroseconds now: UInt64) {
            tables = TokenBucket(capacity: Self.tableBurst, perSecond: Self.tablesPerSecond, atMicroseconds: now)
            creations = TokenBucket(capacity: Self.creationBurst, perSecond: Self.creationsPerSecond, atMicroseconds: now)
        }
    }
}
