import Crypto
import Glibc
public import PadCore

/// The link's defaults, in one place.
public enum LinkEndpointDefaults {
    /// The UDP port `serve` listens on and `connect`/`pair` reach by default (not Sunshine's 47984-48010).
    public static let port: UInt16 = 48100

    /// This machine's host name, the default name the other side knows it by.
    public static func machineName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "unnamed" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A fresh pairing code from the system's random generator (through swift-crypto's key generation).
    public static func newPairingCode() -> PairingCode {
        PairingCode(randomBytes: Array(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }))!
    }
}

/// A host as the user names it ("pc", "pc:48100", "[::1]:48100"), with its canonical form for paired-hosts.
public struct LinkHostAddress: Sendable, Hashable, CustomStringConvertible {
    public let text: String
    public let defaultPort: UInt16

    public init(_ text: String, defaultPort: UInt16) throws(LinkSocketError) {
        _ = try SocketAddress.split(text, defaultPort: defaultPort, allowingPortZero: false)
        self.text = text
        self.defaultPort = defaultPort
    }

    /// "HOST:PORT" ("[V6]:PORT"), the port filled in: what paired-hosts is keyed by.
    public var canonical: String {
        let (host, port) = try! SocketAddress.split(text, defaultPort: defaultPort, allowingPortZero: false)  // checked in init
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    public var description: String { canonical }

    /// The first address it resolves to.
    public func resolved() throws(LinkSocketError) -> SocketAddress {
        try SocketAddress.resolve(text, defaultPort: defaultPort)[0]
    }
}

/// Counts something noisy (dropped datagrams) and says when to log it: at most once per interval.
public struct RateLimitedCount: Sendable {
    private let intervalMicroseconds: UInt64
    private var count = 0
    private var lastLoggedMicroseconds: UInt64?

    public init(intervalMicroseconds: UInt64) { self.intervalMicroseconds = intervalMicroseconds }

    /// Counts one; returns the count to log (and resets it) when the interval since the last log has passed.
    public mutating func note(atMicroseconds now: UInt64) -> Int? {
        count += 1
        if let last = lastLoggedMicroseconds, now < last + intervalMicroseconds { return nil }
        lastLoggedMicroseconds = now
        defer { count = 0 }
        return count
    }
}
