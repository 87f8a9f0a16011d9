import Glibc
@testable import PadLinux
import PadLinuxTestSupport
import SystemPackage

/// A program the tests run next to padbridge (evtest, a shell holding a file open), its standard output on a
/// non-blocking pipe, its lines read as they come (`HelperProcess.run` is for children read whole).
final class ChildProcess {
    let pid: pid_t
    /// The read end of the child's standard output, non-blocking; watch it on a `DeviceEventLoop`.
    let output: FileDescriptor
    private var pending: [UInt8] = []
    private(set) var lines: [String] = []
    private var finished = false

    /// Starts `arguments[0]` (a path) with the rest as its arguments, as padbridge starts its helpers: every
    /// signal at its default and none blocked (a test thread may have blocked SIGTERM for a loop's signalfd).
    init(_ arguments: [String]) throws {
        (pid, output) = try HelperProcess.spawnReadingOutput(executable: arguments[0], arguments: Array(arguments.dropFirst()))
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
        let watch = try loop.makeWatch(output, path: "child output") { [self, loop] _ in
            readLines()
            if done(lines) || finished { loop.stop() }
        }
        defer { watch.cancel() }
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
