import Glibc

/// The one loopback rule of padbridge: which addresses only this machine reaches. `serve` does not announce itself
/// when it listens on one, `console` answers only its own user's programs on one and warns when it listens on any
/// other. 127.0.0.0/8 (every 127.x.y.z, not only 127.0.0.1), ::1, and an IPv4 loopback address mapped into IPv6
/// (::ffff:127.x.y.z, as a dual-stack socket shows it).
extension SocketAddress {
    /// Whether the address is a loopback address (any port).
    public var isLoopback: Bool { Self.isLoopback(hostBytes: hostBytes) }

    /// Whether `text`, an address without its port ("127.0.0.2", "::1", "[::1]", "::ffff:127.0.0.1", or the name
    /// localhost, loopback by RFC 6761), is a loopback address. Parsed as a numeric address, never looked up: a
    /// name other than localhost is not known to be loopback.
    public static func isLoopback(host text: String) -> Bool {
        if text.lowercased() == "localhost" { return true }
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        if let bytes = numericHostBytes(bare) { return isLoopback(hostBytes: bytes) }
        return false
    }

    /// The 4 or 16 bytes of a numeric IPv4 or IPv6 address (inet_pton); nil: not one.
    static func numericHostBytes(_ text: String) -> [UInt8]? {
        var ipv4 = in_addr()
        if inet_pton(AF_INET, text, &ipv4) == 1 { return withUnsafeBytes(of: &ipv4) { Array($0) } }
        var ipv6 = in6_addr()
        if inet_pton(AF_INET6, text, &ipv6) == 1 { return withUnsafeBytes(of: &ipv6) { Array($0) } }
        return nil
    }

    /// The rule over an address's bytes in network order: 4 (IPv4) or 16 (IPv6).
    static func isLoopback(hostBytes bytes: [UInt8]) -> Bool {
        switch bytes.count {
        case 4:
            return bytes[0] == 127
        case 16:
            let prefix = bytes[0..<10]
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }  // ::1
            // ::ffff:127.x.y.z, an IPv4 loopback address on an IPv6 socket.
            return prefix.allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
        default:
            return false
        }
    }
}
