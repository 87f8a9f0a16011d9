/// A DSU server's subscribers: which client asked for which slots, until when. A client is its source address and the
/// id it sends; it renews its subscription every second or so, and a slot it stops renewing expires after
/// `lifetimeMicroseconds` (5 s, as other DSU servers keep them). At most `capacity` clients at once: a client more is
/// refused until one expires. Each client counts its own packets. No clock of its own (time is passed in) and no
/// allocation after `init` (a frame's fan-out runs per pad frame).
public struct DSUSubscriptions<Address: Hashable & Sendable>: Sendable {
    public struct Client: Sendable, Hashable {
        public var address: Address
        public var clientID: UInt32

        public init(address: Address, clientID: UInt32) {
            self.address = address
            self.clientID = clientID
        }
    }

    public enum Outcome: Sendable, Hashable {
        /// A client new to the table, or new slots for it: send it their current state at once.
        case subscribed(added: DSUSlotSet)
        /// Only renewed.
        case renewed
        /// The table is full: nothing is sent to this client.
        case refused
    }

    private struct Entry: Sendable {
        var client: Client
        /// When each slot's subscription ends (µs); 0: not subscribed.
        var expiry: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var nextPacketNumber: UInt32 = 0

        subscript(slot: Int) -> UInt64 {
            get {
                switch slot {
                case 0: expiry.0
                case 1: expiry.1
                case 2: expiry.2
                default: expiry.3
                }
            }
            set {
                switch slot {
                case 0: expiry.0 = newValue
                case 1: expiry.1 = newValue
                case 2: expiry.2 = newValue
                default: expiry.3 = newValue
                }
            }
        }

        func slots(activeAt now: UInt64) -> DSUSlotSet {
            var slots = DSUSlotSet()
            for slot in 0..<DSUProtocol.slotCount where self[slot] > now { slots.insert(slot) }
            return slots
        }
    }

    public static var lifetimeMicroseconds: UInt64 { 5_000_000 }
    public let capacity: Int
    private var entries: [Entry] = []

    public init(capacity: Int = 16) {
        self.capacity = max(1, capacity)
        entries.reserveCapacity(self.capacity)
    }

    /// Clients with at least one slot subscribed (some may have expired since the last `expire`).
    public var clientCount: Int { entries.count }

    /// `client` asks for `slots` at `now`: each slot's subscription runs `lifetimeMicroseconds` from now.
    public mutating func subscribe(_ client: Client, to slots: DSUSlotSet, now: UInt64) -> Outcome {
        let until = now &+ Self.lifetimeMicroseconds
        if let index = entries.firstIndex(where: { $0.client == client }) {
            let before = entries[index].slots(activeAt: now)
            for slot in slots { entries[index][slot] = until }
            let added = DSUSlotSet(rawValue: slots.rawValue & ~before.rawValue)
            return added.isEmpty ? .renewed : .subscribed(added: added)
        }
        guard !slots.isEmpty else { return .renewed }
        if entries.count >= capacity {
            // A full table may hold clients that have expired but not been swept yet.
            _ = expire(now: now) { _, _ in }
            guard entries.count < capacity else { return .refused }
        }
        var entry = Entry(client: client)
        for slot in slots { entry[slot] = until }
        entries.append(entry)
        return .subscribed(added: slots)
    }

    /// Drops every slot subscription that ended by `now`; calls `ended` with each client whose last slot ended (it is
    /// forgotten, its packet count with it) and the slots that ended. Returns how many clients were forgotten.
    @discardableResult
    public mutating func expire(now: UInt64, _ ended: (Client, DSUSlotSet) -> Void) -> Int {
        var forgotten = 0
        var index = 0
        while index < entries.count {
            var endedSlots = DSUSlotSet()
            for slot in 0..<DSUProtocol.slotCount where entries[index][slot] != 0 && entries[index][slot] <= now {
                entries[index][slot] = 0
                endedSlots.insert(slot)
            }
            if entries[index].slots(activeAt: now).isEmpty {
                let client = entries[index].client
                entries.remove(at: index)
                forgotten += 1
                ended(client, endedSlots)
            } else {
                index += 1
            }
        }
        return forgotten
    }

    /// When the earliest subscription ends (µs), nil when there is none.
    public var nextExpiry: UInt64? {
        var earliest: UInt64?
        for entry in entries {
            for slot in 0..<DSUProtocol.slotCount where entry[slot] != 0 {
                earliest = min(earliest ?? .max, entry[slot])
            }
        }
        return earliest
    }

    /// Whether anyone's subscription to `slot` runs at `now`.
    public func hasSubscribers(of slot: Int, now: UInt64) -> Bool {
        // An index loop, not `contains(where:)`: unspecialized (a debug build), that allocates per call.
        for index in 0..<entries.count where entries[index][slot] > now { return true }
        return false
    }

    /// The slots `client` is subscribed to at `now`.
    public func slots(of client: Client, now: UInt64) -> DSUSlotSet {
        entries.first { $0.client == client }?.slots(activeAt: now) ?? DSUSlotSet()
    }

    /// Calls `send` for each client subscribed to `slot` at `now`, with the packet number its next datagram carries
    /// (counted per client, whichever slot it is for).
    public mutating func forEachSubscriber(of slot: Int, now: UInt64, _ send: (Client, UInt32) -> Void) {
        for index in 0..<entries.count where entries[index][slot] > now {
            let number = entries[index].nextPacketNumber
            entries[index].nextPacketNumber = number &+ 1
            send(entries[index].client, number)
        }
    }

    /// The packet number `client`'s next datagram carries, counted as sent (for a datagram to one client: the
    /// current state sent when it subscribes). Nil for a client not in the table.
    public mutating func takePacketNumber(for client: Client) -> UInt32? {
        guard let index = entries.firstIndex(where: { $0.client == client }) else { return nil }
        let number = entries[index].nextPacketNumber
        entries[index].nextPacketNumber = number &+ 1
        return number
    }
}

/// How many requests a DSU server answers, per source and in all: a token bucket for each source it has heard from
/// lately (at most `sourceCapacity`; the one heard from longest ago makes room) and one for everyone. A request over
/// either limit is dropped unanswered: one source's flood cannot make the server spend its time (or others' bandwidth:
/// a port-info request of 28 bytes asks for up to four replies of 32) answering it, while the pads' data keeps going.
/// No clock of its own; no allocation after `init`.
public struct DSURequestLimiter<Source: Hashable & Sendable>: Sendable {
    public struct Rate: Sendable, Hashable {
        public var requestsPerSecond: UInt64
        public var burst: UInt64

        public init(requestsPerSecond: UInt64, burst: UInt64) {
            self.requestsPerSecond = max(1, requestsPerSecond)
            self.burst = max(1, burst)
        }
    }

    private struct Bucket: Sendable {
        /// Tokens in millionths (one request costs 1,000,000).
        var microtokens: UInt64
        var updated: UInt64
    }

    /// A client renews about once a second per pad and asks for the pad list about once a second: 20 a second with
    /// a burst of 40 is ample for one, and nothing for a flood.
    public static var defaultPerSource: Rate { Rate(requestsPerSecond: 20, burst: 40) }
    public static var defaultTotal: Rate { Rate(requestsPerSecond: 400, burst: 800) }

    public let perSource: Rate
    public let total: Rate
    public let sourceCapacity: Int
    private var sources: [Source] = []
    private var buckets: [Bucket] = []
    private var everyone: Bucket?
    /// Requests dropped so far.
    public private(set) var dropped: UInt64 = 0

    public init(perSource: Rate = Self.defaultPerSource, total: Rate = Self.defaultTotal, sourceCapacity: Int = 64) {
        self.perSource = perSource
        self.total = total
        self.sourceCapacity = max(1, sourceCapacity)
        sources.reserveCapacity(self.sourceCapacity)
        buckets.reserveCapacity(self.sourceCapacity)
    }

    /// Whether a request from `source` at `now` (µs) is answered; takes its token if so.
    public mutating func admit(_ source: Source, now: UInt64) -> Bool {
        var all = everyone ?? Bucket(microtokens: total.burst * 1_000_000, updated: now)
        Self.refill(&all, rate: total, now: now)
        everyone = all
        let index: Int
        if let known = sources.firstIndex(of: source) {
            index = known
            Self.refill(&buckets[index], rate: perSource, now: now)
        } else if sources.count < sourceCapacity {
            sources.append(source)
            buckets.append(Bucket(microtokens: perSource.burst * 1_000_000, updated: now))
            index = sources.count - 1
        } else {
            // The source heard from longest ago makes room (it starts afresh when it comes back).
            var oldest = 0
            for candidate in 0..<buckets.count where buckets[candidate].updated < buckets[oldest].updated {
                oldest = candidate
            }
            sources[oldest] = source
            buckets[oldest] = Bucket(microtokens: perSource.burst * 1_000_000, updated: now)
            index = oldest
        }
        guard buckets[index].microtokens >= 1_000_000, all.microtokens >= 1_000_000 else {
            dropped &+= 1
            return false
        }
        buckets[index].microtokens -= 1_000_000
        everyone?.microtokens -= 1_000_000
        return true
    }

    private static func refill(_ bucket: inout Bucket, rate: Rate, now: UInt64) {
        guard now > bucket.updated else { return }
        let elapsed = now - bucket.updated
        let cap = rate.burst * 1_000_000
        // elapsed µs × requests/s = millionths of a request; capped before multiplying past the bucket.
        let gained = elapsed >= cap ? cap : min(cap, elapsed * rate.requestsPerSecond)
        bucket.microtokens = min(cap, bucket.microtokens + gained)
        bucket.updated = now
    }
}
