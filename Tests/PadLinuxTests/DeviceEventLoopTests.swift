import Glibc
@testable import PadLinux
import SystemPackage
import PadLinuxTestSupport
import Testing

@Suite("DeviceEventLoop", .serialized)
struct DeviceEventLoopTests {
    @Test func stopBeforeRunReturnsAtOnce() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop, seconds: 2)
        let start = MonotonicInstant.now()
        loop.stop()
        try loop.run()
        #expect(!watchdog.fired, "run() waited for the watchdog instead of returning at once")
        #expect(MonotonicInstant.now().nanoseconds - start.nanoseconds < 1_000_000_000)
    }

    @Test func deferredWorkRunsOnTheLoop() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        defer { #expect(!watchdog.fired) }
        var order: [Int] = []
        loop.deferWork {
            order.append(1)
            loop.deferWork {
                order.append(2)
                loop.stop()
            }
        }
        try loop.run()
        #expect(order == [1, 2])
    }

    @Test func oneShotAndRepeatingTimers() throws {
        let loop = try DeviceEventLoop()
        var ticks = 0
        let start = MonotonicInstant.now()
        var firedAt: MonotonicInstant?
        let repeating = loop.makeTimer {
            ticks += 1
        }
        let deadline = loop.makeTimer {
            firedAt = .now()
            loop.stop()
        }
        repeating.scheduleRepeating(everyMilliseconds: 5)
        deadline.schedule(at: start.adding(milliseconds: 60))
        try loop.run()
        let elapsed = try #require(firedAt).nanoseconds - start.nanoseconds
        #expect(elapsed >= 60_000_000)
        #expect(ticks >= 3)
        repeating.close()
        deadline.close()
    }

    @Test func cancelledTimerDoesNotFire() throws {
        let loop = try DeviceEventLoop()
        var fired = false
        let timer = loop.makeTimer { fired = true }
        timer.schedule(at: MonotonicInstant.now().adding(milliseconds: 10))
        timer.cancel()
        let stopper = loop.makeTimer { loop.stop() }
        stopper.schedule(at: MonotonicInstant.now().adding(milliseconds: 40))
        try loop.run()
        #expect(!fired)
    }

    /// The loop keeps its timers' deadlines in a table of slots: a closed or dropped timer never fires, its slot goes
    /// to the next timer made, and timers due together fire earliest first, each once.
    @Test func closedAndDroppedTimersNeverFireAndTheirSlotsAreReused() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop, seconds: 5)
        defer { #expect(!watchdog.fired, "the stopping timer never fired") }
        var fired: [String] = []
        let start = MonotonicInstant.now()
        let slotsBefore = loop.timerTable.count  // the watchdog's
        let closed = loop.makeTimer { fired.append("closed") }
        closed.schedule(at: start)
        closed.close()
        closed.schedule(at: start)  // a closed timer cannot be armed again
        var dropped: LoopTimer? = loop.makeTimer { fired.append("dropped") }
        dropped?.schedule(at: start)
        #expect(loop.timerTable.count == slotsBefore + 1, "the closed timer's slot went to the next timer")
        dropped = nil
        var timers: [LoopTimer] = []
        for (name, offset) in [("third", 3), ("first", 1), ("second", 2)] {
            let timer = loop.makeTimer { fired.append(name) }
            timer.schedule(at: start.adding(milliseconds: UInt64(offset)))
            timers.append(timer)
        }
        #expect(loop.timerTable.count == slotsBefore + 3, "the dropped timer's slot went to the first of these")
        let stopper = loop.makeTimer { loop.stop() }
        stopper.schedule(at: start.adding(milliseconds: 20))
        try loop.run()
        #expect(fired == ["first", "second", "third"])
        for timer in timers { timer.close() }
        stopper.close()
    }

    @Test func handlerErrorsEndRun() throws {
        let loop = try DeviceEventLoop()
        let failing = loop.makeTimer { () throws(DeviceAccessError) in
            throw DeviceAccessError(code: .gone, path: "/dev/test", operation: "read")
        }
        failing.schedule(at: .now())
        let error = #expect(throws: DeviceAccessError.self) { try loop.run() }
        #expect(error?.code == .gone)
    }

    /// Replaces fd 0 with a pipe for the duration of `body`.
    static func withStandardInput(_ text: [UInt8], closeWriter: Bool, _ body: () throws -> Void) throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        // Close-on-exec: a child another test spawns meanwhile must not hold the write end open (no end of file).
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let saved = dup(0)
        dup2(fds[0], 0)
        close(fds[0])
        _ = text.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        if closeWriter { close(fds[1]) }
        defer {
            dup2(saved, 0)
            close(saved)
            if !closeWriter { close(fds[1]) }
        }
        try body()
    }

    /// Replaces fd 0 with a file holding `text` for the duration of `body`.
    static func withStandardInputFile(_ text: [UInt8], _ body: () throws -> Void) throws {
        var template = Array("/tmp/padbridge-stdin-XXXXXX".utf8CString)
        let file = mkstemp(&template)
        #expect(file >= 0)
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        _ = text.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        lseek(file, 0, SEEK_SET)
        let saved = dup(0)
        dup2(file, 0)
        close(file)
        defer {
            dup2(saved, 0)
            close(saved)
        }
        try body()
    }

    @Test func standardInputLinesWithPartialLastLine() throws {
        var lines: [String] = []
        var ended = false
        try Self.withStandardInput(Array("first\nsecond\n\nlast without newline".utf8), closeWriter: true) {
            let loop = try DeviceEventLoop()
            let watchdog = try LoopWatchdog(loop)
            try loop.watchStandardInputLines({ lines.append($0) }, onEndOfFile: {
                ended = true
                loop.stop()
            })
            try loop.run()
            #expect(!watchdog.fired)
        }
        #expect(lines == ["first", "second", "", "last without newline"])
        #expect(ended)
    }

    /// epoll refuses regular files (EPERM); the loop reads them between events instead.
    @Test func standardInputFromARegularFile() throws {
        var template = Array("/tmp/padbridge-stdin-XXXXXX".utf8CString)
        let file = mkstemp(&template)
        #expect(file >= 0)
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        let text = Array("alpha\nbeta\n".utf8)
        _ = text.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        lseek(file, 0, SEEK_SET)
        let saved = dup(0)
        dup2(file, 0)
        close(file)
        defer {
            dup2(saved, 0)
            close(saved)
        }
        var lines: [String] = []
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        try loop.watchStandardInputLines({ lines.append($0) }, onEndOfFile: { loop.stop() })
        try loop.run()
        #expect(!watchdog.fired)
        #expect(lines == ["alpha", "beta"])
    }

    @Test func standardInputDoesNotBlockTheLoop() throws {
        var lines: [String] = []
        var timerFired = false
        try Self.withStandardInput(Array("one\ntw".utf8), closeWriter: false) {
            let loop = try DeviceEventLoop()
            try loop.watchStandardInputLines({ lines.append($0) }, onEndOfFile: {})
            let timer = loop.makeTimer {
                timerFired = true
                loop.stop()
            }
            timer.schedule(at: MonotonicInstant.now().adding(milliseconds: 50))
            try loop.run()
        }
        #expect(lines == ["one"])
        #expect(timerFired)
    }

    /// A command shutting down stops reading its input: lines and end of input that come later are not delivered.
    @Test func standardInputStopsBeingReadWhenAsked() throws {
        var lines: [String] = []
        var ended = false
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let saved = dup(0)
        dup2(fds[0], 0)
        close(fds[0])
        defer {
            dup2(saved, 0)
            close(saved)
        }
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        try loop.watchStandardInputLines(
            { line in
                lines.append(line)
                loop.stopReadingStandardInput()
                // More input and its end, after reading stopped: neither may be delivered.
                _ = Array("two\n".utf8).withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
                close(fds[1])
            }, onEndOfFile: { ended = true })
        _ = Array("one\n".utf8).withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        let stopper = loop.makeTimer { loop.stop() }
        stopper.schedule(at: MonotonicInstant.now().adding(milliseconds: 100))
        try loop.run()
        #expect(!watchdog.fired)
        #expect(lines == ["one"])
        #expect(!ended)
    }

    /// Input without a newline does not grow the buffer without bound: past the limit the line is dropped, said
    /// once, and the lines after it are read as usual.
    @Test func anOverlongLineIsSkippedAndReported() throws {
        var lines: [String] = []
        var overlong: [Int] = []
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: DeviceEventLoop.maximumLineBytes * 3 + 5)
        // A file, not a pipe: the text is larger than a pipe holds before anyone reads it.
        try Self.withStandardInputFile(Array("first\n".utf8) + long + Array("\nlast\n".utf8)) {
            let loop = try DeviceEventLoop()
            let watchdog = try LoopWatchdog(loop)
            try loop.watchStandardInputLines(
                { lines.append($0) }, onOverlongLine: { overlong.append(lines.count) },
                onEndOfFile: { loop.stop() })
            try loop.run()
            #expect(!watchdog.fired)
        }
        #expect(lines == ["first", "last"])
        #expect(overlong == [1], "reported once, in its place among the lines")
    }

    @Test func signalsArriveThroughTheLoop() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        var received: [Int32] = []
        try loop.watchSignals([SIGUSR2]) { signal in
            received.append(signal)
            loop.stop()
        }
        // Thread-directed, so it is pending on this (the loop's) thread, where it is blocked.
        raise(SIGUSR2)
        try loop.run()
        #expect(!watchdog.fired)
        #expect(received == [SIGUSR2])
    }
}
