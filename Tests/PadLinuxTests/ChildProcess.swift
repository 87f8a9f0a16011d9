import Glibc
@testable import PadLinux
import SystemPackage

/// A program the tests run next to padbridge (evtest, a shell holding a file open), its standard output on a pipe.
final class ChildProcess {
    let pid: pid_t
    /// The read end of the child's standard output, non-blocking; watch it on a `DeviceEventLoop`.
    let output: FileDescriptor
    private var pending: [UInt8] = []
    private(set) var lines: [String] = []
    private var finished = false

    init(_ arguments: [String]) throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw Errno(rawValue: errno) }
        // Close-on-exec for both ends in this process; the child gets the write end as its fd 1 (dup2 clears it).
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        // A clean signal mask and default actions: a test thread may have blocked SIGTERM for a loop's signalfd.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let status = posix_spawn(&child, arguments[0], &actions, &attributes, &argv, environ)
        close(ends[1])
        guard status == 0 else {
            close(ends[0])
            throw Errno(rawValue: status)
        }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        pid = child
        output = FileDescriptor(rawValue: ends[0])
    }

    /// Blocks until the child has written one byte (a "ready" handshake; only for children that write at once).
    func awaitFirstByte() {
        var byte: UInt8 = 0
        var poller = pollfd(fd: output.rawValue, events: Int16(POLLIN), revents: 0)
        if poll(&poller, 1, 10_000) == 1, read(output.rawValue, &byte, 1) == 1 { pending.append(byte) }
    }

    /// Reads what is there; returns the complete lines that arrived.
    @discardableResult
    func readLines() -> [String] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var fresh: [String] = []
        while true {
            let count = read(output.rawValue, &chunk, chunk.count)
            if count <= 0 {
                if count == 0 { finished = true }
                break
            }
            pending += chunk[0..<count]
        }
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            fresh.append(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
        lines += fresh
        return fresh
    }

    var hasEnded: Bool { finished }

    /// Calls `until` with all lines so far whenever more arrive, on `loop`, until it returns true or `seconds` pass.
    func waitForLines(on loop: DeviceEventLoop, seconds: UInt64 = 30, until done: @escaping ([String]) -> Bool) throws -> Bool {
        if done(lines) { return true }
        let token = try loop.watch(output, path: "child output") { [self, loop] _ in
            readLines()
            if done(lines) || finished { loop.stop() }
        }
        defer { loop.removeWatch(token) }
        _ = try loop.run(forAtMost: seconds)
        return done(lines)
    }

    private var reaped = false

    func terminate() {
        guard !reaped else { return }
        reaped = true
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    deinit {
        terminate()
        close(output.rawValue)
    }
}
