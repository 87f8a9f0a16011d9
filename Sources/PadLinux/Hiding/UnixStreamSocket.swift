import CPadLinux
import PadCore
import Glibc
import SystemPackage

/// Owns one AF_UNIX SOCK_STREAM socket, non-blocking and close-on-exec: a listening one (the hiding service) or a
/// connection (either end). The raw descriptor never leaves PadLinux.
public struct UnixStreamSocket: ~Copyable {
    let descriptor: FileDescriptor

    init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// Listens at `path` (a socket file left there is replaced), the file given `mode`. By default with the
    /// kernel's largest backlog: a connection waits there until the service's loop accepts it, and one user opening
    /// many at once should not fill it for everybody else.
    public static func listening(at path: String, mode: UInt32, backlog: Int32? = nil)
        throws(DeviceAccessError) -> UnixStreamSocket
    {
        let fd = CPadLinux_unixStreamListen(path, mode, backlog ?? SOMAXCONN)
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

    /// Connects to the socket at `path`, waiting up to `timeoutMilliseconds` while its listener's backlog is full
    /// (a service busy accepting others' connections is not a refusal).
    public static func connected(to path: String, timeoutMilliseconds: Int32 = 5_000) throws(DeviceAccessError)
        -> UnixStreamSocket
    {
        let fd = CPadLinux_unixStreamConnect(path, timeoutMilliseconds)
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
        /// Bytes, and the descriptors the peer passed with them (SCM_RIGHTS; usually none).
        case bytes([UInt8], descriptors: [PassedDescriptor])
        /// Nothing waiting.
        case none
        /// The peer closed its end (or the connection failed), or passed more descriptors than one read takes.
        case closed
    }

    /// The most descriptors one read takes; a peer that passes more is treated as gone.
    static let maximumDescriptorsPerRead = 64

    /// One read of at most 4 KiB, with any descriptors passed along.
    func receive() -> Received {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptors = [Int32](repeating: -1, count: Self.maximumDescriptorsPerRead)
        var received: Int32 = 0
        var truncated: Int32 = 0
        let count = buffer.withUnsafeMutableBytes { bytes in
            descriptors.withUnsafeMutableBufferPointer { fds in
                CPadLinux_receiveWithDescriptors(
                    descriptor.rawValue, bytes.baseAddress, UInt(bytes.count), fds.baseAddress, Int32(fds.count),
                    &received, &truncated)
            }
        }
        let passed = descriptors.prefix(Int(received)).map { PassedDescriptor(FileDescriptor(rawValue: $0)) }
        if count < 0 {
            return count == -Int(EAGAIN) || count == -Int(EINTR) ? .none : .closed
        }
        if count == 0 || truncated != 0 { return .closed }
        return .bytes(Array(buffer.prefix(count)), descriptors: passed)
    }

    /// Sends `text` whole, the `descriptors` passed with its first bytes (SCM_RIGHTS); false when the connection is
    /// gone or its buffer is full (the lines exchanged are short: a peer that does not read them is not waited for).
    func send(_ text: String, passing descriptors: [Int32] = []) -> Bool {
        var bytes = Array(text.utf8)[...]
        var pending = descriptors
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { raw in
                pending.withUnsafeBufferPointer { fds in
                    CPadLinux_sendWithDescriptors(
                        descriptor.rawValue, raw.baseAddress, UInt(raw.count), fds.baseAddress, Int32(fds.count))
                }
            }
            if written <= 0 { return false }
            pending = []
            bytes = bytes.dropFirst(written)
        }
        return true
    }

    consuming func close() {}

    deinit { try? descriptor.close() }
}

/// A descriptor another process passed over a unix socket: owned here, closed when this goes (or by `close()`).
/// Its raw value never leaves PadLinux.
final class PassedDescriptor {
    private(set) var descriptor: FileDescriptor?

    init(_ descriptor: FileDescriptor) { self.descriptor = descriptor }

    var rawValue: Int32 { descriptor?.rawValue ?? -1 }

    func close() {
        try? descriptor?.close()
        descriptor = nil
    }

    deinit { close() }
}

/// Splits a byte stream into lines of at most `NodeHiding.maximumLineBytes`.
struct StreamLines {
    private var pending: [UInt8] = []
    /// A line went past the limit: the stream is not one of ours.
    private(set) var overflowed = false

    /// Adds bytes read; take the lines with `nextLine()`.
    mutating func add(_ bytes: [UInt8]) {
        guard !overflowed else { return }
        pending += bytes
        if !hasLine && pending.count > NodeHiding.maximumLineBytes {
            overflowed = true
            pending = []
        }
    }

    /// Whether a whole line is waiting.
    var hasLine: Bool { pending.contains(UInt8(ascii: "\n")) }

    /// The next whole line (without its newline), or nil. A line longer than the limit is never returned: the
    /// stream is marked overflowed and what is pending dropped, so a request past the limit is refused before it runs.
    mutating func nextLine() -> Substring? {
        guard !overflowed, let newline = pending.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        if newline > NodeHiding.maximumLineBytes {
            overflowed = true
            pending = []
            return nil
        }
        let line = Substring(String(decoding: pending[..<newline], as: UTF8.self))
        pending.removeFirst(newline + 1)
        return line
    }

    /// Adds bytes read and takes every whole line.
    mutating func append(_ bytes: [UInt8]) -> [Substring] {
        add(bytes)
        var lines: [Substring] = []
        while let line = nextLine() { lines.append(line) }
        return lines
    }
}
