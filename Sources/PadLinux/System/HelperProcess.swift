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

/// A `HelperProcess` run from a `DeviceEventLoop` without blocking it: its standard output is read as the loop
/// reports it readable, its deadline is a loop timer, and `completion` runs on the loop with the outcome. For the
/// long-running commands, whose loop forwards pads while a helper (SDL's scan, up to 10 s) runs. Loop-confined.
public final class LoopHelperProcess {
    private let loop: DeviceEventLoop
    private let pid: pid_t
    private var output: FileDescriptor?
    private var watch: LoopWatch?
    private var deadline: LoopDeadline?
    private var reapRetry: LoopDeadline?
    private var collected: [UInt8] = []
    private let outputLimitBytes: Int
    private var completion: ((Result<HelperProcess.Outcome, any Error>) -> Void)?
    private var timedOut = false

    /// Starts `executable` with `arguments`; past `timeout` it is killed (`.timedOut`).
    public init(
        executable: String, arguments: [String], timeout: Duration, outputLimitBytes: Int = 1 << 20,
        loop: DeviceEventLoop, completion: @escaping (Result<HelperProcess.Outcome, any Error>) -> Void
    ) throws {
        self.loop = loop
        self.outputLimitBytes = outputLimitBytes
        self.completion = completion
        let (pid, output) = try HelperProcess.spawnReadingOutput(executable: executable, arguments: arguments)
        self.pid = pid
        self.output = output
        let (seconds, attoseconds) = timeout.components
        let milliseconds = UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds) / 1_000_000_000_000_000)
        do throws(DeviceAccessError) {
            watch = try loop.makeWatch(output, path: "helper \(executable)") { [weak self] _ in self?.readOutput() }
            deadline = loop.deadline(afterMilliseconds: milliseconds) { [weak self] in self?.expire() }
        } catch {
            kill(pid, SIGKILL)
            finish(.failure(error.cause ?? .ioError))
            throw error.cause ?? .ioError
        }
    }

    private func readOutput() {
        guard let output else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = buffer.withUnsafeMutableBytes { output.readResult(into: $0) }
            switch result {
            case .success(0):
                return closeOutputAndReap()
            case .success(let count):
                collected.append(contentsOf: buffer.prefix(min(count, max(0, outputLimitBytes - collected.count))))
            case .failure(.resourceTemporarilyUnavailable), .failure(.interrupted):
                return
            case .failure:
                return closeOutputAndReap()
            }
        }
    }

    private func expire() {
        timedOut = true
        kill(pid, SIGKILL)
        closeOutputAndReap()
    }

    private func closeOutputAndReap() {
        watch?.cancel()
        watch = nil
        try? output?.close()
        output = nil
        reap()
    }

    /// The child closed its output as it exits: it is reaped as soon as it has (checked every 5 ms, never blocking);
    /// past the deadline it is killed and reaped.
    private func reap() {
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == 0 {
            reapRetry = loop.deadline(afterMilliseconds: 5) { [weak self] in self?.reap() }
            return
        } else if reaped < 0 {
            return finish(.failure(Errno(rawValue: errno)))
        }
        let termination: HelperProcess.Termination =
            if timedOut { .timedOut }
            else if CPadLinux_WIFSIGNALED(status) != 0 { .killedBySignal(CPadLinux_WTERMSIG(status)) }
            else { .exited(code: CPadLinux_WEXITSTATUS(status)) }
        finish(.success(HelperProcess.Outcome(termination: termination, standardOutput: collected)))
    }

    private func finish(_ result: Result<HelperProcess.Outcome, any Error>) {
        deadline?.cancel()
        deadline = nil
        reapRetry = nil
        guard let completion else { return }
        self.completion = nil
        completion(result)
    }

    /// Stops waiting: the child is killed and reaped, and `completion` is not called. Idempotent.
    public func cancel() {
        guard completion != nil || output != nil else { return }
        completion = nil
        watch?.cancel()
        watch = nil
        try? output?.close()
        output = nil
        deadline?.cancel()
        deadline = nil
        reapRetry = nil
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    deinit { cancel() }
}
