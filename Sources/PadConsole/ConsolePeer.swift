import Glibc
import PadLinux

/// Whose program is at the other end of a loopback connection, and whether the console talks to it.
///
/// Every local user can reach `127.0.0.1`, so on loopback the console also asks the kernel who owns the peer's socket:
/// the row of `/proc/net/tcp` (or `/proc/net/tcp6`) whose local address is the peer's address and port and whose
/// remote address is the console's, and that row's `uid` column. Root, the console's own user (and, for a console
/// started with sudo, the user who ran sudo) are let in; any other user, or a socket that cannot be found, is not.
public enum ConsolePeer {
    /// A TCP endpoint: the address's bytes in network order (4 for IPv4, 16 for IPv6) and the port.
    public struct Endpoint: Sendable, Equatable, CustomStringConvertible {
        public var address: [UInt8]
        public var port: UInt16

        public init(address: [UInt8], port: UInt16) {
            self.address = address
            self.port = port
        }

        /// The same IPv4 endpoint as an IPv6 socket sees it (`::ffff:a.b.c.d`); nil for an IPv6 endpoint.
        var v4Mapped: Endpoint? {
            guard address.count == 4 else { return nil }
            return Endpoint(address: [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + address, port: port)
        }

        public var description: String {
            address.count == 4
                ? address.map(String.init).joined(separator: ".") + ":\(port)"
                : "[" + stride(from: 0, to: address.count, by: 2).map {
                    String(UInt16(address[$0]) << 8 | UInt16(address[$0 + 1]), radix: 16)
                }.joined(separator: ":") + "]:\(port)"
        }
    }

    /// Who the console lets in on loopback: root and the users in `users`.
    public struct Policy: Sendable, Equatable {
        public var users: Set<UInt32>

        public init(users: Set<UInt32>) {
            self.users = users
        }

        /// The console's own user; when it runs as root under sudo, also the user who ran sudo (`SUDO_UID`), whose
        /// browser opens the page of `sudo padbridge console --system`.
        public static func consoleUser() -> Policy {
            let own = UInt32(geteuid())
            var users: Set<UInt32> = [own]
            if own == 0, let text = getenv("SUDO_UID").map({ String(cString: $0) }), let sudoUser = UInt32(text) {
                users.insert(sudoUser)
            }
            return Policy(users: users)
        }

        /// Whether a peer whose socket belongs to `owner` is let in (nil: its socket was not found, refused).
        public func admits(owner: UInt32?) -> Bool {
            guard let owner else { return false }
            return owner == 0 || users.contains(owner)
        }
    }

    /// The uid that owns the socket at `local` connected to `remote`, read from `table`, the text of `/proc/net/tcp`
    /// or `/proc/net/tcp6`; nil when no row has both (a line that cannot be read is passed over).
    public static func owner(ofSocketAt local: Endpoint, connectedTo remote: Endpoint, inTable table: String) -> UInt32? {
        for line in table.split(separator: "\n").dropFirst() {
            // "  sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when retrnsmt   uid  timeout inode ..."
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7, let rowLocal = endpoint(fields[1]), rowLocal == local,
                  let rowRemote = endpoint(fields[2]), rowRemote == remote
            else { continue }
            return UInt32(fields[7])
        }
        return nil
    }

    /// `0100007F:BB95` (an IPv4 address as the kernel prints it: the 32-bit word as it lies in memory, read as a native
    /// integer, in hex; the port in hex) or its IPv6 form (four such words), as an endpoint.
    static func endpoint(_ field: Substring) -> Endpoint? {
        let parts = field.split(separator: ":")
        guard parts.count == 2, parts[0].count == 8 || parts[0].count == 32, let port = UInt16(parts[1], radix: 16) else { return nil }
        var address: [UInt8] = []
        var start = parts[0].startIndex
        while start < parts[0].endIndex {
            let end = parts[0].index(start, offsetBy: 8)
            guard let word = UInt32(parts[0][start..<end], radix: 16) else { return nil }
            withUnsafeBytes(of: word) { address += $0 }
            start = end
        }
        return Endpoint(address: address, port: port)
    }

    /// The uid that owns the peer's socket (`peer`, connected to the console's `console`), from the kernel's tables;
    /// nil when it is in neither. Reads files: not for an event loop's thread.
    public static func owner(ofPeer peer: Endpoint, connectedTo console: Endpoint) -> UInt32? {
        if peer.address.count == 4 {
            if let table = readTable("/proc/net/tcp"), let owner = owner(ofSocketAt: peer, connectedTo: console, inTable: table) {
                return owner
            }
            // A program with an IPv6 socket may reach 127.0.0.1 as ::ffff:127.0.0.1.
            guard let mappedPeer = peer.v4Mapped, let mappedConsole = console.v4Mapped else { return nil }
            return readTable("/proc/net/tcp6").flatMap { owner(ofSocketAt: mappedPeer, connectedTo: mappedConsole, inTable: $0) }
        }
        return readTable("/proc/net/tcp6").flatMap { owner(ofSocketAt: peer, connectedTo: console, inTable: $0) }
    }

    static func readTable(_ path: String) -> String? {
        (try? TextFile.read(atPath: path))?.text
    }
}
