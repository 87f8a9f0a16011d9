/// Which address `connect` sends its handshake to, for a paired host whose stored address may be stale (a DHCP
/// lease that changed): the stored address first; when it has had `trialMicroseconds` without a session, the
/// addresses announced with the pinned key's fingerprint, best first, each for as long; then round again. An
/// address is only ever *tried*: a session comes only from the Noise handshake with the pinned key, so an address
/// announced by anyone else gets nothing. Pure: time and announcements come in, the address to use goes out.
public struct HostAddressTrials<Address: Hashable & Sendable>: Sendable {
    public let stored: Address
    public let trialMicroseconds: UInt64
    /// The address tried now.
    public private(set) var current: Address
    private var currentSince: UInt64
    /// The addresses announced with the key, best first.
    private var announced: [Address] = []
    /// Tried this round (the current one included).
    private var tried: Set<Address>

    public init(stored: Address, atMicroseconds now: UInt64, trialMicroseconds: UInt64) {
        self.stored = stored
        self.trialMicroseconds = trialMicroseconds
        current = stored
        currentSince = now
        tried = [stored]
    }

    /// When the current address's trial is over and another is waiting (nil: nothing else to try).
    public var deadlineMicroseconds: UInt64? {
        others.isEmpty ? nil : currentSince + trialMicroseconds
    }

    /// The announcements changed: `addresses` are those announced with the key now, best first. Returns an address
    /// to switch to at once (the current one's trial is over and a new one waits).
    public mutating func announced(_ addresses: [Address], atMicroseconds now: UInt64) -> Address? {
        announced = addresses
        return next(atMicroseconds: now)
    }

    /// Returns the address to switch to when the current one's trial is over and another is waiting.
    public mutating func next(atMicroseconds now: UInt64) -> Address? {
        guard now >= currentSince + trialMicroseconds, !others.isEmpty else { return nil }
        let order = [stored] + announced.filter { $0 != stored }
        if !order.contains(where: { !tried.contains($0) }) { tried = [current] }  // every one tried: round again
        guard let next = order.first(where: { !tried.contains($0) }) else { return nil }
        tried.insert(next)
        current = next
        currentSince = now
        return next
    }

    /// The addresses there are to try besides the current one.
    private var others: [Address] { ([stored] + announced).filter { $0 != current } }
}
