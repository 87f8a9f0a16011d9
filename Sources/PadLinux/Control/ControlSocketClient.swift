import Glibc
import PadCore
import SystemPackage

/// Why a command could not talk to a serve's control socket, with what to do.
public struct ControlSocketClientError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// No serve listens there (no socket file, or nobody accepting): the caller may do without one.
    public var noServe: Bool
}

/// A command's connection to a serve's control socket (`padbridge status`, `clients`, `revoke`, `pairing-window`):
/// blocking, with deadlines; one request at a time. The raw descriptor never leaves PadLinux.
public struct ControlSocketClient: ~Copyable {
    private let socket: UnixStreamSocket
    private let path: String
    private var lines = StreamLines()

    /// The users whose serve a command believes: root, the command's own user, and the system service's user
    /// (`padbridge`, when it exists). A socket held by anyone else (a --socket in a shared directory squatted by
    /// another user) is refused before a request goes.
    public static func trustedServerUIDs() -> Set<UInt32> {
        var uids: Set<UInt32> = [0, geteuid()]
        if let service = getpwnam(systemServiceUser) { uids.insert(service.pointee.pw_uid) }
        return uids
    }

    /// The system service's user (systemd/padbridge-serve.service, debian/padbridge.sysusers).
    public static let systemServiceUser = "padbridge"

    /// Connects to the socket at `path`; `whose` names the serve in messages ("the serve of /home/u/.config/padbridge").
    /// The program listening there must run as one of `trustedUIDs` (SO_PEERCRED), or nothing is sent to it.
    public init(path: String, whose: String, trustedUIDs: Set<UInt32> = trustedServerUIDs()) throws(ControlSocketClientError) {
        self.path = path
        let connected: UnixStreamSocket
        do {
            connected = try UnixStreamSocket.connected(to: path, timeoutMilliseconds: 2_000)
        } catch {
            switch error.code {
            case .missingDevice:
                throw ControlSocketClientError(
                    description: "no serve is running for \(whose) (no control socket at \(path)); start one with "
                        + "`padbridge serve` (same --config-dir), or name its socket with --socket",
                    noServe: true)
            case .permissionDenied:
                throw ControlSocketClientError(
                    description: "may not connect to \(path): run this as the user that runs serve (for the system "
                        + "service: sudo padbridge ... --system)",
                    noServe: false)
            default:
                throw ControlSocketClientError(
                    description: "cannot connect to \(path) (\(error)); is the serve of \(whose) running?",
                    noServe: error.cause == .connectionRefused)
            }
        }
        guard let peer = connected.peer() else {
            throw ControlSocketClientError(description: "cannot tell who listens at \(path) (SO_PEERCRED failed)", noServe: false)
        }
        guard trustedUIDs.contains(peer.uid) else {
            throw ControlSocketClientError(
                description: "the program listening at \(path) runs as uid \(peer.uid) (\(Self.userName(peer.uid))), not as "
                    + "root, you or the service's user: it is not a serve of yours, and nothing was sent to it. Another "
                    + "user may hold that path: use the default socket (no --socket), or one in a directory only you can write",
                noServe: false)
        }
        socket = connected
    }

    private static func userName(_ uid: UInt32) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "no such user" }
        return String(cString: name)
    }

    /// Sends `line` and returns the next line the host sends, waiting at most `timeoutMilliseconds`.
    public mutating func request(_ line: String, timeoutMilliseconds: Int32 = 5_000) throws(ControlSocketClientError) -> String {
        guard socket.send(line + "\n") else {
            // The host may have answered and closed before the request went (a refusal): its last words first.
            if let last = try? nextLine(timeoutMilliseconds: 200) { return last }
            throw ControlSocketClientError(description: "the serve at \(path) closed the connection", noServe: false)
        }
        guard let answer = try nextLine(timeoutMilliseconds: timeoutMilliseconds) else {
            throw ControlSocketClientError(
                description: "the serve at \(path) did not answer within \(timeoutMilliseconds) ms", noServe: false)
        }
        return answer
    }

    /// The next line the host sends (an answer or an event), nil when none came within `timeoutMilliseconds`.
    public mutating func nextLine(timeoutMilliseconds: Int32) throws(ControlSocketClientError) -> String? {
        let deadline = MonotonicInstant.now().adding(milliseconds: UInt64(max(0, timeoutMilliseconds)))
        while true {
            if let line = lines.nextLine() { return String(line) }
            let now = MonotonicInstant.now()
            guard now < deadline else { return nil }
            var poller = pollfd(fd: socket.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            let left = Int32(min((deadline.nanoseconds - now.nanoseconds) / 1_000_000 + 1, UInt64(Int32.max)))
            let ready = poll(&poller, 1, left)
            if ready < 0 && errno != EINTR {
                throw ControlSocketClientError(description: "poll on \(path) failed", noServe: false)
            }
            guard ready > 0 else { continue }
            switch socket.receive() {
            case let .bytes(bytes, descriptors: _): lines.add(bytes)
            case .none: continue
            case .closed:
                if let line = lines.nextLine() { return String(line) }
                throw ControlSocketClientError(description: "the serve at \(path) closed the connection", noServe: false)
            }
        }
    }
}
