/// What `connect` keeps of the LAN's announcements while it looks for its paired host, updated from each change as
/// it comes (never a pass over every announcement): the hosts announcing the paired key (where the host may be now),
/// at most `maximumHosts` of them with at most `maximumAddressesPerHost` addresses each; and the announcements under
/// the paired name with another key, each reported once per name. Anyone may announce anything, as often as they
/// like: what is kept and said stays bounded. Pure.
public struct PairedHostSightings: Sendable {
    public static let maximumHosts = 16
    public static let maximumAddressesPerHost = 8

    public let fingerprint: KeyFingerprint
    public let pairedName: String
    /// The hosts carrying the key, in the order they were first seen.
    public private(set) var carrying: [AnnouncedHost] = []
    private var reportedNames: Set<String> = []

    public init(fingerprint: KeyFingerprint, pairedName: String) {
        self.fingerprint = fingerprint
        self.pairedName = pairedName
    }

    /// What a change means here: whether the hosts carrying the key changed, and an announcement to report (the
    /// paired name with another key), the first time for its name.
    public struct Outcome: Sendable, Hashable {
        public var carryingChanged: Bool
        public var impostor: AnnouncedHost?
    }

    /// A new search: the hosts seen are forgotten (a new browser reports them again); the names reported stay so.
    public mutating func forgetHosts() { carrying = [] }

    public mutating func apply(_ change: AnnouncedHostTable.Change) -> Outcome {
        var outcome = Outcome(carryingChanged: false, impostor: nil)
        let host: AnnouncedHost
        let present: Bool
        switch change {
        case let .appeared(announced), let .changed(announced):
            host = announced
            present = true
        case let .left(announced):
            host = announced
            present = false
        }
        let index = carrying.firstIndex { $0.name == host.name && $0.domain == host.domain }
        if present && host.fingerprint == fingerprint {
            var kept = host
            kept.addresses = Array(kept.addresses.prefix(Self.maximumAddressesPerHost))
            if let index {
                outcome.carryingChanged = carrying[index] != kept
                carrying[index] = kept
            } else if carrying.count < Self.maximumHosts {
                carrying.append(kept)
                outcome.carryingChanged = true
            }
        } else if let index {
            carrying.remove(at: index)
            outcome.carryingChanged = true
        }
        if present, host.fingerprint != fingerprint, host.name.lowercased() == pairedName.lowercased(),
            reportedNames.insert(host.name.lowercased()).inserted
        {
            outcome.impostor = host
        }
        return outcome
    }
}
