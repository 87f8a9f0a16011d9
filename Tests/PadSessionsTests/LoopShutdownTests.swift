import Glibc
@testable import PadLinux
import PadSessions
import PadLinuxTestSupport
import Testing

@Suite("ReleaseThenStop and HotplugSettle", .serialized)
struct LoopShutdownTests {
    @Test func firstRequestReleasesThenStopsAfterTheGrace() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        var releases = 0
        let ending = ReleaseThenStop(loop: loop, graceMilliseconds: 80) {
            releases += 1
            return true
        }
        var requestedAt = MonotonicInstant.now()
        loop.deferWork {
            requestedAt = .now()
            ending.request()
        }
        try loop.run()
        let elapsed = MonotonicInstant.now().nanoseconds - requestedAt.nanoseconds
        #expect(!watchdog.fired)
        #expect(releases == 1)
        #expect(ending.isShuttingDown)
        #expect(elapsed >= 80_000_000, "stopped \(elapsed) ns after the request, before the grace ended")
    }

    /// The release and its grace happen once: a later request (end of input right after Ctrl-C, a second signal)
    /// neither releases again nor cuts the grace short.
    @Test func aLaterRequestKeepsTheGrace() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        var releases = 0
        let ending = ReleaseThenStop(loop: loop, graceMilliseconds: 150) {
            releases += 1
            return true
        }
        let start = MonotonicInstant.now()
        loop.deferWork {
            ending.request()
            ending.request()
        }
        try loop.run()
        let elapsed = MonotonicInstant.now().nanoseconds - start.nanoseconds
        #expect(!watchdog.fired)
        #expect(releases == 1)
        #expect(elapsed >= 150_000_000, "stopped \(elapsed) ns after the requests, before the grace ended")
    }

    @Test func failedReleaseStopsAtOnce() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        let ending = ReleaseThenStop(loop: loop, graceMilliseconds: 3_000) { false }
        loop.deferWork { ending.request() }
        let start = MonotonicInstant.now()
        try loop.run()
        #expect(!watchdog.fired)
        #expect(MonotonicInstant.now().nanoseconds - start.nanoseconds < 2_000_000_000)
    }

    /// A burst of events (a pad's nodes appearing one by one) gives one action, after the last event.
    @Test func aBurstSettlesIntoOneActionAfterTheLastEvent() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        var actions: [MonotonicInstant] = []
        let settle = try HotplugSettle(loop: loop, milliseconds: 60) {
            actions.append(.now())
            loop.stop()
        }
        var lastEvent = MonotonicInstant.now()
        // Five events 20 ms apart: each comes before the quiet time ends.
        var sent = 0
        let burst = loop.makeTimer {
            settle.noteEvent()
            lastEvent = .now()
            sent += 1
        }
        burst.scheduleRepeating(everyMilliseconds: 20)
        let stopBurst = loop.makeTimer { burst.cancel() }
        stopBurst.schedule(at: MonotonicInstant.now().adding(milliseconds: 90))
        try loop.run()
        burst.close()
        stopBurst.close()
        #expect(!watchdog.fired)
        #expect(sent >= 3)
        #expect(actions.count == 1)
        let after = try #require(actions.first).nanoseconds - lastEvent.nanoseconds
        #expect(after >= 60_000_000, "acted \(after) ns after the last event")
    }

    @Test func noEventNoAction() throws {
        let loop = try DeviceEventLoop()
        var acted = false
        let settle = try HotplugSettle(loop: loop, milliseconds: 10) { acted = true }
        let end = loop.makeTimer { loop.stop() }
        end.schedule(at: MonotonicInstant.now().adding(milliseconds: 60))
        try loop.run()
        end.close()
        settle.cancel()
        #expect(!acted)
    }
}
