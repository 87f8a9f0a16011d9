import Glibc
@testable import PadLinux
import PadLinuxTestSupport
import SystemPackage
import Testing

/// The loop's thread rule (the creating thread until `run()`, then the one running it) and watches that leave the
/// loop when dropped.
@Suite("DeviceEventLoop thread rule and LoopWatch")
struct LoopThreadRuleTests {
    @Test func aDroppedWatchNoLongerCallsItsHandler() throws {
        let pipe = try FileDescriptor.pipe()
        defer {
            try? pipe.readEnd.close()
            try? pipe.writeEnd.close()
        }
        _ = try pipe.writeEnd.writeAll([1])
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        var calls = 0
        var watch: LoopWatch?
        // Level-triggered and never read: a watch still registered would be called at every turn.
        watch = try loop.makeWatch(pipe.readEnd, path: "test pipe") { _ in
            calls += 1
            watch = nil
            loop.deferWork { loop.deferWork { loop.stop() } }
        }
        try loop.run()
        #expect(!watchdog.fired)
        #expect(calls == 1, "the watch's handler ran again after the watch was dropped")
        #expect(watch == nil)
    }

    @Test func aCancelledWatchIsInactiveAndCancellingTwiceIsHarmless() throws {
        let pipe = try FileDescriptor.pipe()
        defer {
            try? pipe.readEnd.close()
            try? pipe.writeEnd.close()
        }
        let loop = try DeviceEventLoop()
        let watch = try loop.makeWatch(pipe.readEnd, path: "test pipe") { _ in }
        #expect(watch.isActive)
        watch.cancel()
        #expect(!watch.isActive)
        watch.cancel()
        #expect(!watch.isActive)
    }

    @Test func theThreadThatRunsTheLoopOwnsItFromThenOn() throws {
        // Set up here, then run and torn down on another thread, whose handlers make timers there (which the debug
        // build's check allows only if run() moved the loop to that thread).
        final class HandedOver: @unchecked Sendable {
            // @unchecked Sendable: filled on the test thread before the other thread starts, then touched only there.
            var loop: DeviceEventLoop?
            var watchdog: LoopWatchdog?
            var stopper: LoopDeadline?
        }
        let handedOver = HandedOver()
        let loop = try DeviceEventLoop()
        handedOver.loop = loop
        handedOver.watchdog = try LoopWatchdog(loop)
        loop.deferWork { [unowned loop] in
            handedOver.stopper = loop.deadline(afterMilliseconds: 1) { loop.stop() }
        }
        let done = try FileDescriptor.pipe()
        defer {
            try? done.readEnd.close()
            try? done.writeEnd.close()
        }
        let writeEnd = done.writeEnd
        let started = OffThread.start {
            var outcome: [UInt8] = [0, 0]
            if let loop = handedOver.loop, (try? loop.run()) != nil { outcome[0] = 1 }
            if handedOver.stopper != nil && handedOver.watchdog?.fired == false { outcome[1] = 1 }
            handedOver.stopper = nil
            handedOver.watchdog = nil
            handedOver.loop = nil
            _ = try? writeEnd.writeAll(outcome)
        }
        #expect(started == 0)
        var outcome: [UInt8] = [0, 0]
        // Waits for the other thread to finish with the loop (the watchdog bounds the run to 5 s).
        let count = try outcome.withUnsafeMutableBytes { try done.readEnd.read(into: $0) }
        #expect(count == 2 && outcome[0] == 1, "run() on the other thread failed")
        #expect(outcome[1] == 1, "the handler on the running thread made no timer, or the watchdog stopped the loop")
    }

    #if DEBUG
    @Test func aLoopCalledFromAnotherThreadTrapsInDebugBuilds() async {
        await #expect(processExitsWith: .failure) {
            // A loop that cannot be made exits 0 too: only the check's trap passes this test.
            guard let loop = try? DeviceEventLoop() else { exit(0) }
            nonisolated(unsafe) let misused = loop
            _ = OffThread.start {
                // Not the loop's thread: the check traps here; without it the process exits 0.
                _ = misused.makeTimer {}
                exit(0)
            }
            while true { pause() }
        }
    }
    #endif
}
