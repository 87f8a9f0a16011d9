import Glibc
import Crypto
import PadNoise

/// A rate with a burst: `capacity` tokens, `perSecond` come back each second (up to the capacity). Pure.
struct TokenBucket: Sendable {
    let capacity: Double
    let perSecond: Double
    private var tokens: Double
    private var updatedMicroseconds: UInt64

    init(capacity: Double, perSecond: Double, atMicroseconds now: UInt64) {
        self.capacity = capacity
        self.perSecond = perSecond
        tokens = capacity
        updatedMicroseconds = now
    }

    private mutating func refill(at now: UInt64) {
        guard now > updatedMicroseconds else { return }
        tokens = min(capacity, tokens + Double(now - updatedMicroseconds) * perSecond / 1_000_000)
        updatedMicroseconds = now
    }

    /// Takes a token if there is one.
    mutating func take(atMicroseconds now: UInt64) -> Bool {
        refill(at: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// When the next token comes (now when one is there).
    func nextTokenMicroseconds(atMicroseconds now: UInt64) -> UInt64 {
        let available = tokens + Double(now > updatedMicroseconds ? now - updatedMicroseconds : 0) * perSecond / 1_000_000
        guard available < 1 else { return now }
        return now + UInt64(((1 - available) * 1_000_000 / perSecond).rounded(.up))
    }

    /// Whether it is full again (nothing to remember it for).
    func isFull(atMicroseconds now: UInt64) -> Bool {
        tokens + Double(now > updatedMicroseconds ? now - updatedMicroseconds : 0) * perSecond / 1_000_000 >= capacity
    }
}

/// Which handshakes a host does public-key work for (WireGuard's load rule, in one thread): up to a burst, then a
/// steady rate, whoever sends them; beyond that the host is under load, and only a sender that proved its address
/// with a cookie (`AddressCookies`) gets the work, at a rate of its own per source (`SourceGrouping`: an IPv4
/// address; an IPv6 address on the host's own links, a /64 beyond them).
/// So a flood, spoofed or not, costs the host at most the steady rate plus each real source's own, and a person
/// asked for a cookie gets through after one more round trip. Pure (the time comes in).
struct HandshakeAdmission: Sendable {
    struct Limits: Sendable {
        var burst: Double
        var perSecond: Double
        var burstPerSource: Double
        var perSecondPerSource: Double
        /// Sources remembered at most (only those that proved their address are): beyond it, a new one waits.
        var sourcesTracked = 1024
    }

    let limits: Limits
    private var everyone: TokenBucket
    private var bySource: [[UInt8]: TokenBucket] = [:]
    private var grouping: SourceGrouping

    init(
        _ limits: Limits, atMicroseconds now: UInt64,
        onLinkPrefixes: @escaping @Sendable () -> Set<[UInt8]> = SourceGrouping.interfacePrefixes
    ) {
        self.limits = limits
        everyone = TokenBucket(capacity: limits.burst, perSecond: limits.perSecond, atMicroseconds: now)
        grouping = SourceGrouping(onLinkPrefixes: onLinkPrefixes)
    }

    /// The source `address` counts as (its limit's key).
    mutating func source(of address: SocketAddress, atMicroseconds now: UInt64) -> [UInt8] {
        grouping.source(of: address, atMicroseconds: now)
    }

    /// Whether a handshake gets public-key work without proving its address (the host is not under load); takes
    /// its share if so.
    mutating func admitsWithoutCookie(atMicroseconds now: UInt64) -> Bool { everyone.take(atMicroseconds: now) }

    /// Under load: whether a handshake from `source`, which proved its address, gets public-key work; takes the
    /// source's share if so.
    mutating func admitsProvenSource(_ source: SocketAddress, atMicroseconds now: UInt64) -> Bool {
        let key = grouping.source(of: source, atMicroseconds: now)
        var bucket: TokenBucket
        if let known = bySource[key] {
            bucket = known
        } else {
            if bySource.count >= limits.sourcesTracked { bySource = bySource.filter { !$0.value.isFull(atMicroseconds: now) } }
            guard bySource.count < limits.sourcesTracked else { return false }
            bucket = TokenBucket(capacity: limits.burstPerSource, perSecond: limits.perSecondPerSource, atMicroseconds: now)
        }
        let admitted = bucket.take(atMicroseconds: now)
        bySource[key] = bucket
        return admitted
    }
}

/// A host's cookies (WireGuard's): HMAC-SHA256 of the sender's address and port under a random secret that changes
/// every two minutes. Only a sender that receives datagrams at that address learns its cookie; with it, it makes a
/// MAC over its handshake (mac2) that the host checks with one HMAC. Nothing is stored per sender.
struct AddressCookies: Sendable {
    static let secretLifetimeMicroseconds: UInt64 = 120_000_000

    private var current: [UInt8]
    private var previous: [UInt8]?
    private var rotatedMicroseconds: UInt64

    init(atMicroseconds now: UInt64 = 0) {
        current = Self.newSecret()
        rotatedMicroseconds = now
    }

    /// 32 random bytes (the system's generator, through swift-crypto).
    private static func newSecret() -> [UInt8] { SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) } }

    private mutating func rotate(at now: UInt64) {
        guard now >= rotatedMicroseconds + Self.secretLifetimeMicroseconds else { return }
        // Two lifetimes or more: the previous secret is too old to honour as well.
        previous = now >= rotatedMicroseconds + 2 * Self.secretLifetimeMicroseconds ? nil : current
        current = Self.newSecret()
        rotatedMicroseconds = now
    }

    /// The cookie for `address` now.
    mutating func cookie(for address: SocketAddress, atMicroseconds now: UInt64) -> [UInt8] {
        rotate(at: now)
        return Self.cookie(for: address, secret: current)
    }

    /// Whether `mac2` is the MAC of `covered` under a cookie this host gave `address`, now or under the previous
    /// secret (a cookie lasts two to four minutes): swift-crypto's constant-time check.
    mutating func isValid(mac2: ArraySlice<UInt8>, over covered: ArraySlice<UInt8>, from address: SocketAddress, atMicroseconds now: UInt64)
        -> Bool
    {
        rotate(at: now)
        for secret in [current, previous].compactMap({ $0 }) {
            let cookie = Self.cookie(for: address, secret: secret)
            if MessageAuthentication.isValid(mac2, key: cookie[...], message: covered) { return true }
        }
        return false
    }

    private static func cookie(for address: SocketAddress, secret: [UInt8]) -> [UInt8] {
        MessageAuthentication.code(key: secret[...], message: address.cookieInput[...])
    }

    /// MAC with a cookie: what a sender puts in its handshake's mac2 field.
    static func mac2(cookie: [UInt8], over covered: [UInt8]) -> [UInt8] {
        MessageAuthentication.code(key: cookie[...], message: covered[...])
    }
}

/// Which addresses one per-source limit counts together: an IPv4 address (also when an IPv6 socket sees it as
/// ::ffff:a.b.c.d); an IPv6 address whole when it is link-local (every one is in fe80::/64) or in a /64 of the
/// host's own links (the neighbours of one LAN share their SLAAC prefix); else its /64, what one machine beyond the
/// link may hold whole. So a neighbour flooding from fe80::bad takes nothing from fe80::1234.
struct SourceGrouping: Sendable {
    private let onLinkPrefixes: @Sendable () -> Set<[UInt8]>
    private var prefixes: Set<[UInt8]> = []
    private var readMicroseconds: UInt64?
    /// The host's prefixes are read again at most this often (addresses come and go).
    static let prefixesLifetimeMicroseconds: UInt64 = 10_000_000

    init(onLinkPrefixes: @escaping @Sendable () -> Set<[UInt8]>) { self.onLinkPrefixes = onLinkPrefixes }

    mutating func source(of address: SocketAddress, atMicroseconds now: UInt64) -> [UInt8] {
        let host = address.hostBytes
        guard address.isIPv6, host.count == 16 else { return host }
        if host[0..<10].allSatisfy({ $0 == 0 }) && host[10] == 0xFF && host[11] == 0xFF { return Array(host[12..<16]) }
        if host[0] == 0xFE && host[1] & 0xC0 == 0x80 { return host }  // fe80::/10, link-local
        if readMicroseconds.map({ now >= $0 + Self.prefixesLifetimeMicroseconds || now < $0 }) ?? true {
            prefixes = onLinkPrefixes()
            readMicroseconds = now
        }
        let prefix = Array(host[0..<8])
        return prefixes.contains(prefix) ? host : prefix
    }

    /// The /64 prefixes of this host's global and unique-local IPv6 addresses (getifaddrs).
    @Sendable static func interfacePrefixes() -> Set<[UInt8]> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var prefixes: Set<[UInt8]> = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET6) {
                let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
                if !(bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80) && !bytes[0..<15].allSatisfy({ $0 == 0 }) {
                    prefixes.insert(Array(bytes[0..<8]))
                }
            }
            entry = current.pointee.ifa_next
        }
        return prefixes
    }
}

extension SocketAddress {
    /// What a cookie binds: the address and the port.
    var cookieInput: [UInt8] { [UInt8(truncatingIfNeeded: port >> 8), UInt8(truncatingIfNeeded: port)] + hostBytes }
}
