public import PadLinux

/// Bounds a test's `DeviceEventLoop.run()`: if what the test waits for never happens, the watchdog stops the loop
/// after `seconds`, and `fired` says so (the test then fails instead of hanging).
public final class LoopWatchdog {
    public private(set) var fired = false
    private var timer: LoopTimer?

    public init(_ loop: DeviceEventLoop, seconds: UInt64 = 5) throws {
        timer = loop.makeTimer { [weak self] in
            self?.fired = true
            loop.stop()
        }
        timer?.schedule(at: MonotonicInstant.now().adding(milliseconds: seconds * 1000))
    }

    deinit { timer?.close() }
}

extension DeviceEventLoop {
    /// Runs until a handler calls `stop()` or `seconds` pass; returns false on timeout.
    public func run(forAtMost seconds: UInt64) throws -> Bool {
        let watchdog = try LoopWatchdog(self, seconds: seconds)
        try run()
        return !watchdog.fired
    }
}
