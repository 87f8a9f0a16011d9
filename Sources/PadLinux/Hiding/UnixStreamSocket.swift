import CPadLinux
import Glibc
import SystemPackage

/// Owns one AF_UNIX SOCK_STREAM socket, non-blocking and close-on-exec: a listening one (the hiding service) or a
/// connection (either end). The raw descriptor never leaves PadLinux.
public struct UnixStreamSocket: ~Copyable {
    let descriptor: FileDescriptor

    init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// Listens at `path` (a socket file left there is replaced), the file given `mode`.
    public static func listening(at path: String, mode: UInt32) throws(DeviceAccessError) -> UnixStreamSocket {
        let fd = CPadLinux_unixStreamListen(path, mode)
        guard fd >= 0 else {
            throw DeviceAccessError(
                code: DeviceAccessError.code(for: Errno(rawValue: -fd)), path: path, operation: "bind/listen",
                cause: Errno(rawValue: -fd))
        }
        return UnixStreamSocket(descriptor: FileDescriptor(rawValue: fd))
    }

    /// The listening socket systemd passed (socket activation: LISTEN_PID is this process, LISTEN_FDS 1, fd 3),
    /// or nil when not started so.
    public static func passedBySystemd() -> UnixStreamSocket? {
        guard let pid = getenv("LISTEN_PID").flatMap({ pid_t(String(cString: $0)) }), pid == getpid(),
            let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), count == 1
        else { return nil }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        let fd: Int32 = 3
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return UnixStreamSocket(descriptor: FileDescriptor(rawValue: fd))
    }

    /// Connects to the socket at `path`.
    public static func connected(to path: String) throws(DeviceAccessError) -> UnixStreamSocket {
        let fd = CPadLinux_unixStreamConnect(path)
        guard fd >= 0 else {
            throw DeviceAccessError(
                code: DeviceAccessError.code(for: Errno(rawValue: -fd)), path: path, operation: "connect",
                cause: Errno(rawValue: -fd))
        }
        return UnixStreamSocket(descriptor: FileDescriptor(rawValue: fd))
    }

    /// One waiting connection, or nil when none is.
    func accept() -> UnixStreamSocket? {
        let fd = CPadLinux_acceptConnection(descriptor.rawValue)
        return fd >= 0 ? UnixStreamSocket(descriptor: FileDescriptor(rawValue: fd)) : nil
    }

    /// The connected peer as the kernel recorded it when it connected (SO_PEERCRED).
    func peer() -> (pid: pid_t, uid: uid_t, gid: gid_t)? {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        guard CPadLinux_peerCredentials(descriptor.rawValue, &pid, &uid, &gid) == 0 else { return nil }
        return (pid, uid, gid)
    }

    /// What one read gave.
    enum Received {
        case bytes([UInt8])
        /// Nothing waiting.
        case none
        /// The peer closed its end (or the connection failed).
        case closed
    }

    func receive() -> Received {
        var buffer = [UInt8](repeating: 0, count: 4096)
        switch buffer.withUnsafeMutableBytes({ descriptor.readResult(into: $0) }) {
        case .success(0): return .closed
        case .success(let count): return .bytes(Array(buffer.prefix(count)))
        case .failure(.resourceTemporarilyUnavailable), .failure(.interrupted): return .none
        case .failure: return .closed
        }
    }

    /// Sends `text` whole; false when the connection is gone (or its buffer full: the lines exchanged are short).
    func send(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.send(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            bytes = bytes.dropFirst(written)
        }
        return true
    }

    consuming func close() {}

    deinit { try? descriptor.close() }
}

/// Splits a byte stream into lines of at most `NodeHiding.maximumLineBytes`.
struct StreamLines {
    private var pending: [UInt8] = []
    /// A line went past the limit: the stream is not one of ours.
    private(set) var overflowed = false

    mutating func append(_ bytes: [UInt8]) -> [Substring] {
        pending += bytes
        var lines: [Substring] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(Substring(String(decoding: pending[..<newline], as: UTF8.self)))
            pending.removeFirst(newline + 1)
        }
        if pending.count > 4096 { overflowed = true }
        return lines
    }
}
