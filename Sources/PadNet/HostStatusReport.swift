/// What `padbridge serve` tells its control socket about one paired client (`padbridge status`, `clients`).
public struct HostClientStatus: Sendable, Hashable, Codable {
    public var name: String
    /// Its key's fingerprint (`SHA256:...`), as `pair` printed it.
    public var key: String
    /// When it was paired: wall-clock seconds since the Unix epoch (UTC); nil for a pairing recorded without a date
    /// (paired-clients lines written before padbridge recorded one).
    public var pairedSinceEpochSeconds: UInt64?
    /// Whether it has a live session now (a confirmed session whose link is not lost).
    public var connected: Bool
    /// Where its datagrams come from (the last session's), nil when it never connected since serve started.
    public var address: String?
    /// Milliseconds since the host last heard it, nil when it never did since serve started.
    public var lastHeardMillisecondsAgo: UInt64?
    /// The host's smoothed round-trip estimate, where it has one.
    public var roundTripMicroseconds: UInt64?
    /// Datagrams of its current session received from it and sent to it.
    public var receivedDatagrams: UInt32
    public var sentDatagrams: UInt32
    /// The share of its datagrams of the current session that did not reach the host, in percent: the gaps in their
    /// counters (the client numbers them 0, 1, 2, ...) below the highest received. Nil before a session.
    public var lossToHostPercent: Double?
    /// The share of the host's datagrams that did not reach it, in percent, as its last ping told (counted up to the
    /// pong before that ping, in that ping's session). Nil until a ping told one (its second ping).
    public var lossToClientPercent: Double?
    /// Its pads: forwarded, lingering after a loss, or not given a virtual pad (with why).
    public var pads: [HostPadStatus]

    public init(
        name: String, key: String, connected: Bool, address: String?, lastHeardMillisecondsAgo: UInt64?,
        roundTripMicroseconds: UInt64?, receivedDatagrams: UInt32, sentDatagrams: UInt32, pads: [HostPadStatus],
        pairedSinceEpochSeconds: UInt64? = nil, lossToHostPercent: Double? = nil, lossToClientPercent: Double? = nil
    ) {
        self.lossToHostPercent = lossToHostPercent
        self.lossToClientPercent = lossToClientPercent
        self.name = name
        self.key = key
        self.pairedSinceEpochSeconds = pairedSinceEpochSeconds
        self.connected = connected
        self.address = address
        self.lastHeardMillisecondsAgo = lastHeardMillisecondsAgo
        self.roundTripMicroseconds = roundTripMicroseconds
        self.receivedDatagrams = receivedDatagrams
        self.sentDatagrams = sentDatagrams
        self.pads = pads
    }
}

/// One pad a client forwards, as the host holds it.
public struct HostPadStatus: Sendable, Hashable, Codable {
    public enum State: String, Sendable, Hashable, Codable {
        /// Forwarded: the virtual pad shows the client's pad.
        case live
        /// The client's pad or link went away: neutral, kept for --linger.
        case lingering
        /// No virtual pad for it (`problem` says why).
        case notForwarded = "not-forwarded"
    }

    /// The pad's ID on the client.
    public var id: String
    public var name: String
    /// Its kind on the client (`dualsense`, `xbox360`, ...).
    public var kind: String
    public var state: State
    /// Its slot in the client's pad table, nil once it left the table.
    public var slot: Int?
    /// The virtual pad: its kind and nodes, once made.
    public var virtualKind: String?
    public var eventNodes: [String]
    public var hidraw: String?
    /// Why it has no virtual pad (`notForwarded`).
    public var problem: String?

    public init(
        id: String, name: String, kind: String, state: State, slot: Int?, virtualKind: String?, eventNodes: [String],
        hidraw: String?, problem: String? = nil
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.state = state
        self.slot = slot
        self.virtualKind = virtualKind
        self.eventNodes = eventNodes
        self.hidraw = hidraw
        self.problem = problem
    }
}
