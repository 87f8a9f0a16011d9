package import Glibc
public import SystemPackage

/// An IPv4 or IPv6 socket address (what `sendto` and `recvfrom` take and give), kept inline: making one for each
/// datagram received allocates nothing.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    package var storage: SocketAddressBytes

    package init(_ pointer: UnsafeRawPointer, length: socklen_t) {
        storage = SocketAddressBytes(pointer, length: Int(length))
    }

    package var family: Int32 {
        storage.withUnsafeBytes { Int32($0.load(fromByteOffset: 0, as: sa_family_t.self)) }
    }

    public var isIPv6: Bool { family == AF_INET6 }

    /// The address without its port (the source a datagram came from, whatever port it used).
    package var hostBytes: [UInt8] {
        family == AF_INET6 ? storage[8..<min(24, storage.count)] : storage[4..<min(8, storage.count)]
    }

    public var port: UInt16 {
        storage.withUnsafeBytes { bytes in
            UInt16(bigEndian: bytes.load(fromByteOffset: 2, as: UInt16.self))
        }
    }

    /// "192.0.2.1:48100", "[::1]:48100".
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let host: String = storage.withUnsafeBytes { bytes in
            let base = bytes.baseAddress!
            let offset = family == AF_INET6 ? 8 : 4
            guard inet_ntop(family, base + offset, &text, socklen_t(text.count)) != nil else { return "?" }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Resolves "HOST", "HOST:PORT", "[IPV6]:PORT" or "IPV6" (port `defaultPort` when none is given) for UDP,
    /// numeric addresses and names alike. `passive`: for binding (an empty host then means every address).
    public static func resolve(_ text: String, defaultPort: UInt16, passive: Bool = false) throws(LinkSocketError)
        -> [SocketAddress]
    {
        let (host, port) = try split(text, defaultPort: defaultPort, allowingPortZero: passive)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host.isEmpty ? nil : host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .cannotResolve(text, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr {
                let resolved = SocketAddress(UnsafeRawPointer(address), length: current.pointee.ai_addrlen)
                if !addresses.contains(resolved) { addresses.append(resolved) }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw .cannotResolve(text, reason: "no address") }
        return addresses
    }

    /// "host:port" -> ("host", port); "[v6]:port", "v6", "host" (default port).
    /// Port 0 (any free port) only for binding.
    public static func split(_ text: String, defaultPort: UInt16, allowingPortZero: Bool) throws(LinkSocketError)
        -> (String, UInt16)
    {
        func port(_ digits: Substring) throws(LinkSocketError) -> UInt16 {
            guard let value = UInt16(digits), value > 0 || allowingPortZero else { throw .badAddress(text) }
            return value
        }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .badAddress(text) }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (host, defaultPort) }
            guard rest.hasPrefix(":") else { throw .badAddress(text) }
            return (host, try port(rest.dropFirst()))
        }
        let colons = text.filter { $0 == ":" }.count
        if colons == 1, let colon = text.firstIndex(of: ":") {
            return (String(text[..<colon]), try port(text[text.index(after: colon)...]))
        }
        return (text, defaultPort)  // a host name, an IPv4 address, or a bare IPv6 address
    }
}

/// A `sockaddr_in` or `sockaddr_in6` (at most 28 bytes), inline.
package struct SocketAddressBytes: Sendable, Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt32) = (0, 0, 0, 0)
    private let length: UInt8

    package static let capacity = 28

    package init(_ pointer: UnsafeRawPointer, length: Int) {
        self.length = UInt8(min(max(length, 0), Self.capacity))
        let count = Int(self.length)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: count)) }
    }

    package var count: Int { Int(length) }

    /// The address's bytes (as long as the address is), for `sendto`, `bind` and reading its fields.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<Int(length)])) }
    }

    subscript(range: Range<Int>) -> [UInt8] { withUnsafeBytes { Array($0[range]) } }

    /// The bytes past `length` are always zero (`init` copies only `length` bytes into zeroed words), so the words
    /// compare as the bytes do: four integer comparisons for every datagram's path, not a byte-by-byte loop.
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.length == rhs.length && lhs.words == rhs.words
    }

    package func hash(into hasher: inout Hasher) { withUnsafeBytes { hasher.combine(bytes: $0) } }
}

/// The path a datagram came by, which its reply goes back along: the peer's address and, for a socket bound to
/// every address, the local address the datagram was sent to (the reply must leave from it: a peer compares a
/// reply's source with the address it sent to).
public struct DatagramPath: Sendable, Hashable, CustomStringConvertible {
    public var remote: SocketAddress
    /// The local address (and interface) the datagram arrived at; nil: whichever the kernel picks.
    public var local: LocalDestination?

    public init(remote: SocketAddress, local: LocalDestination? = nil) {
        self.remote = remote
        self.local = local
    }

    public var description: String { remote.description }
}

/// The local end of a datagram received on a socket bound to every address: the address it was sent to and the
/// interface it came in on (`IP_PKTINFO`, `IPV6_PKTINFO`).
public struct LocalDestination: Sendable, Hashable {
    /// 4 bytes (IPv4) or 16 (IPv6, IPv4-mapped for IPv4 on a dual-stack socket), inline.
    package var address: SocketAddressBytes
    package var interfaceIndex: Int32

    package init(address: SocketAddressBytes, interfaceIndex: Int32) {
        self.address = address
        self.interfaceIndex = interfaceIndex
    }
}

/// What went wrong with the link's socket, and what to do about it.
public enum LinkSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    case badAddress(String)
    case cannotResolve(String, reason: String)
    case cannotBind(String, cause: Errno)
    case socketFailed(operation: String, cause: Errno)
    /// The kernel has no IPv6 (booted with `ipv6.disable=1`): only IPv4 addresses can be used.
    case ipv6Unavailable

    public var description: String {
        switch self {
        case let .badAddress(text):
            "\"\(text)\" is not an address: give HOST, HOST:PORT or [IPV6]:PORT"
        case let .cannotResolve(text, reason):
            "cannot resolve \"\(text)\": \(reason); check the host name (or give its IP address)"
        case let .cannotBind(address, cause) where cause == .addressInUse:
            "cannot listen on \(address): the port is in use (another `padbridge serve`?); stop it or give --listen ADDR:PORT"
        case let .cannotBind(address, cause) where cause == .permissionDenied:
            "cannot listen on \(address): permission denied (ports below 1024 need privileges); choose a port above 1023"
        case let .cannotBind(address, cause):
            "cannot listen on \(address): \(cause)"
        case let .socketFailed(operation, cause):
            "\(operation) failed: \(cause)"
        case .ipv6Unavailable:
            "this machine's kernel has IPv6 disabled: give an IPv4 address (--listen 0.0.0.0:PORT)"
        }
    }
}

