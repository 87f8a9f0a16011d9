import CPadLinux
import Glibc
public import SystemPackage

/// A short-lived child process whose standard output is read whole: for work padbridge keeps out of its own
/// address space because a library's crash there must not end the command (SDL2's device scan, see
/// `ControllerCatalog`). The child starts with every signal at its default and none blocked, whatever the
/// caller's event loop blocks, so the deadline's SIGKILL and a user's SIGINT reach it.
public enum HelperProcess {
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        case exited(code: Int32)
        case killedBySignal(Int32)
        /// It ran past the deadline and was killed.
        case timedOut

        public var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .killedBySignal(let signal): "killed by signal \(signal) (\(String(cString: strsignal(signal))))"
            case .timedOut: "ran past its deadline and was killed"
            }
        }
    }

    public struct Outcome: Sendable, Hashable {
        public var termination: Termination
        /// Everything it wrote to standard output (at most `outputLimitBytes`; the rest is discarded).
        public var standardOutput: [UInt8]
    }

    /// Runs `executable` with `arguments` (argv[1...]) and waits for it: past `timeout` without closing its
    /// standard output it is killed. (A child that closes its output early and then hangs is waited for; the
    /// helpers padbridge runs write their answer as they exit.)
    public static func run(
        executable: String, arguments: [String], timeout: Duration, outputLimitBytes: Int = 1 << 20
    ) throws(Errno) -> Outcome {
        let (pid, output) = try spawnReadingOutput(executable: executable, arguments: arguments)
        let outputDescriptor = output.rawValue
        defer { _ = try? output.close() }

        let deadline = ContinuousClock.now + timeout
        var collected: [UInt8] = []
        var timedOut = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        reading: while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                timedOut = true
                break
            }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var poller = pollfd(fd: outputDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { read(outputDescriptor, $0.baseAddress, $0.count) }
            switch count {
            case 0: break reading
            case ..<0 where errno == EINTR || errno == EAGAIN: continue
            case ..<0: break reading
            default: collected.append(contentsOf: buffer.prefix(min(count, max(0, outputLimitBytes - collected.count))))
            }
        }
        if timedOut { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Errno(rawValue: errno) }
        }
        let termination: Termination =
            if timedOut { .timedOut }
            else if CPadLinux_WIFSIGNALED(status) != 0 { .killedBySignal(CPadLinux_WTERMSIG(status)) }
            else { .exited(code: CPadLinux_WEXITSTATUS(status)) }
        return Outcome(termination: termination, standardOutput: collected)
    }

    /// Starts `executable` with `arguments` (argv[1...]), standard input from /dev/null, every signal at its
    /// default and none blocked; returns its pid and the read end of its standard output (non-blocking,
    /// close-on-exec). The caller reaps it.
    static func spawnReadingOutput(executable: String, arguments: [String]) throws(Errno) -> (pid_t, FileDescriptor) {
        var pid: pid_t = 0
        var outputDescriptor: Int32 = -1
        let started: Int32 = withCStringArray([executable] + arguments) { argv in
            CPadLinux_spawnReadingOutput(executable, argv, &outputDescriptor, &pid)
        }
        guard started == 0 else { throw Errno(rawValue: started) }
        return (pid, FileDescriptor(rawValue: outputDescriptor))
    }

    private static func withCStringArray<Result>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result
    ) -> Result {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { copies.forEach { free($0) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
