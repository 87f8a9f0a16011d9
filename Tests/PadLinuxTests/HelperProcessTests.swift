import Glibc
import PadLinux
import Testing

@Suite("Helper processes: output read whole, how they ended, deadline")
struct HelperProcessTests {
    private func shell(_ script: String, timeout: Duration = .seconds(20), limit: Int = 1 << 20) throws
        -> HelperProcess.Outcome
    {
        try HelperProcess.run(
            executable: "/bin/sh", arguments: ["-c", script], timeout: timeout, outputLimitBytes: limit)
    }

    @Test func outputAndExitStatusComeBack() throws {
        let outcome = try shell("printf 'one\\ntwo'; exit 3")
        #expect(outcome.termination == .exited(code: 3))
        #expect(String(decoding: outcome.standardOutput, as: UTF8.self) == "one\ntwo")
    }

    @Test func aCrashIsReportedAsTheSignal() throws {
        let outcome = try shell("printf partial; kill -SEGV $$")
        #expect(outcome.termination == .killedBySignal(SIGSEGV))
        #expect(outcome.standardOutput == Array("partial".utf8))
    }

    /// padbridge's event loop blocks SIGTERM for its signalfd; a helper must not inherit that mask.
    @Test func theHelperGetsSignalsTheCallerBlocks() throws {
        var blocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let outcome = try shell("kill -TERM $$; exit 0")
        #expect(outcome.termination == .killedBySignal(SIGTERM))
    }

    @Test func aHelperPastItsDeadlineIsKilled() throws {
        let start = ContinuousClock.now
        let outcome = try shell("printf started; exec sleep 60", timeout: .milliseconds(300))
        #expect(outcome.termination == .timedOut)
        #expect(outcome.standardOutput == Array("started".utf8))
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    @Test func outputBeyondTheLimitIsDropped() throws {
        let outcome = try shell("head -c 100000 /dev/zero", limit: 1000)
        #expect(outcome.termination == .exited(code: 0))
        #expect(outcome.standardOutput.count == 1000)
    }

    @Test func aMissingExecutableIsAnError() {
        #expect(throws: (any Error).self) {
            try HelperProcess.run(executable: "/nonexistent/padbridge", arguments: [], timeout: .seconds(5))
        }
    }
}
