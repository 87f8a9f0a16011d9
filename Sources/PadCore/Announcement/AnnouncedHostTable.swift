/// An address an announced host resolved to (DNS-SD gives one per interface and protocol).
public struct AnnouncedAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public enum Family: Sendable, Hashable { case ipv4, ipv6 }

    public var family: Family
    /// The address as text, without scope: "192.0.2.2", "fe80::1".
    public var text: String
    /// An IPv6 link-local address (fe80::/10) is reachable only through the interface it was seen on.
    public var isLinkLocal: Bool
    /// The interface it was seen on (its name, or its index as text when the name is unknown).
    public var interface: String

    public init(family: Family, text: String, isLinkLocal: Bool, interface: String) {
        self.family = family
        self.text = text
        self.isLinkLocal = isLinkLocal
        self.interface = interface
    }

    /// "192.0.2.2", "fe80::1%eth0" (a link-local address names its interface).
    public var description: String { isLinkLocal ? "\(text)%\(interface)" : text }

    /// What `connect` and `pair` take: "192.0.2.2:48100", "[fe80::1%eth0]:48100".
    public func endpoint(port: UInt16) -> String {
        family == .ipv6 ? "[\(description)]:\(port)" : "\(text):\(port)"
    }

    /// Best to try first: IPv4, then global IPv6, then link-local IPv6; then by text.
    public static func < (lhs: AnnouncedAddress, rhs: AnnouncedAddress) -> Bool {
        func rank(_ address: AnnouncedAddress) -> Int { address.family == .ipv4 ? 0 : address.isLinkLocal ? 2 : 1 }
        if rank(lhs) != rank(rhs) { return rank(lhs) < rank(rhs) }
        return (lhs.text, lhs.interface) < (rhs.text, rhs.interface)
    }
}

/// A padbridge host as announced on the LAN: one service name, every address it resolved to.
public struct AnnouncedHost: Sendable, Hashable {
    public var name: String
    public var domain: String
    public var port: UInt16
    /// Best first (see `AnnouncedAddress.<`).
    public var addresses: [AnnouncedAddress]
    /// Its TXT records, read; or why they could not be.
    public var record: Result<HostAnnouncementRecord, HostAnnouncementError>

    public init(
        name: String, domain: String, port: UInt16, addresses: [AnnouncedAddress],
        record: Result<HostAnnouncementRecord, HostAnnouncementError>
    ) {
        self.name = name
        self.domain = domain
        self.port = port
        self.addresses = addresses
        self.record = record
    }

    public var fingerprint: KeyFingerprint? { try? record.get().fingerprint }
    public var pairingOpen: Bool { (try? record.get().pairingOpen) ?? false }
}

/// The hosts announced on the LAN, from what a DNS-SD browser and its resolvers report: each service instance
/// (name, type and domain, seen on one interface over one protocol) resolved to a port, an address and TXT records;
/// instances of one name are one host with all their addresses. Pure: the DNS-SD adapter feeds it.
public struct AnnouncedHostTable: Sendable {
    /// One sighting of a service: what DNS-SD browses and resolves.
    public struct Instance: Sendable, Hashable {
        public var interfaceIndex: Int32
        public var overIPv6: Bool
        public var name: String
        public var domain: String

        public init(interfaceIndex: Int32, overIPv6: Bool, name: String, domain: String) {
            self.interfaceIndex = interfaceIndex
            self.overIPv6 = overIPv6
            self.name = name
            self.domain = domain
        }
    }

    public enum Change: Sendable, Hashable {
        case appeared(AnnouncedHost)
        case changed(AnnouncedHost)
        case left(AnnouncedHost)
    }

    private struct Resolution: Sendable {
        var port: UInt16
        var address: AnnouncedAddress?
        var record: Result<HostAnnouncementRecord, HostAnnouncementError>
        /// Later resolutions win for the port and the records.
        var serial: Int
    }

    private struct HostKey: Hashable {
        var name: String
        var domain: String
    }

    /// Each host's sightings, and the host they make: a change touches its own host only (a flood of
    /// announcements costs each one its own work, not a pass over all the others).
    private var sightings: [HostKey: [Instance: Resolution]] = [:]
    private var built: [HostKey: AnnouncedHost] = [:]
    private var serial = 0

    public init() {}

    /// Every host, sorted by name (then domain).
    public var hosts: [AnnouncedHost] {
        built.values.sorted { ($0.name.lowercased(), $0.name, $0.domain) < ($1.name.lowercased(), $1.name, $1.domain) }
    }

    /// How many hosts are announced.
    public var count: Int { built.count }

    /// An instance resolved (again: a TXT change, a new address).
    @discardableResult
    public mutating func resolved(
        _ instance: Instance, port: UInt16, address: AnnouncedAddress?, txt: [[UInt8]]
    ) -> Change? {
        let key = HostKey(name: instance.name, domain: instance.domain)
        let before = built[key]
        serial += 1
        let record = Result { () throws(HostAnnouncementError) in try HostAnnouncementRecord(txt: txt) }
        sightings[key, default: [:]][instance] = Resolution(port: port, address: address, record: record, serial: serial)
        let after = rebuild(key)
        guard let after else { return nil }
        guard let before else { return .appeared(after) }
        return before == after ? nil : .changed(after)
    }

    /// An instance is no longer announced (or could not be resolved).
    @discardableResult
    public mutating func removed(_ instance: Instance) -> Change? {
        let key = HostKey(name: instance.name, domain: instance.domain)
        guard let before = built[key], sightings[key]?.removeValue(forKey: instance) != nil else { return nil }
        guard let after = rebuild(key) else { return .left(before) }
        return before == after ? nil : .changed(after)
    }

    private mutating func rebuild(_ key: HostKey) -> AnnouncedHost? {
        guard let seen = sightings[key], let latest = seen.values.max(by: { $0.serial < $1.serial }) else {
            sightings[key] = nil
            built[key] = nil
            return nil
        }
        let addresses = Set(seen.values.compactMap(\.address)).sorted()
        let host = AnnouncedHost(
            name: key.name, domain: key.domain, port: latest.port, addresses: addresses, record: latest.record)
        built[key] = host
        return host
    }
}

/// What a HOST argument (`pair NAME`, `connect NAME`) picks among the announced hosts.
public enum AnnouncedHostChoice: Sendable, Hashable {
    case host(AnnouncedHost)
    /// No announced name is it or starts with it.
    case none
    /// Several names start with it.
    case ambiguous([AnnouncedHost])
    /// An index that `padbridge hosts` did not print.
    case noSuchIndex(Int, count: Int)

    /// `text` as the index `padbridge hosts` printed, the name (any case), or a start of it that only one name has.
    public static func choose(_ text: String, from hosts: [AnnouncedHost]) -> AnnouncedHostChoice {
        if let index = index(text) {
            return hosts.indices.contains(index) ? .host(hosts[index]) : .noSuchIndex(index, count: hosts.count)
        }
        let wanted = text.lowercased()
        let exact = hosts.filter { $0.name.lowercased() == wanted }
        if exact.count == 1 { return .host(exact[0]) }
        if exact.count > 1 { return .ambiguous(exact) }
        let starting = hosts.filter { $0.name.lowercased().hasPrefix(wanted) }
        switch starting.count {
        case 0: return .none
        case 1: return .host(starting[0])
        default: return .ambiguous(starting)
        }
    }

    /// Whether `text` is an index of `padbridge hosts`' list (1 to 4 digits) rather than a name.
    public static func index(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 4, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }
}

extension Array where Element == AnnouncedHost {
    /// The hosts announcing `fingerprint`: where a paired host may be now.
    public func carrying(_ fingerprint: KeyFingerprint) -> [AnnouncedHost] {
        filter { $0.fingerprint == fingerprint }
    }

    /// The hosts announced as `name` (any case) that do not carry `fingerprint`: never to be connected to for the
    /// host paired under that name (a reinstalled host with a new key, or someone else using its name).
    public func named(_ name: String, notCarrying fingerprint: KeyFingerprint) -> [AnnouncedHost] {
        filter { $0.name.lowercased() == name.lowercased() && $0.fingerprint != fingerprint }
    }
}
