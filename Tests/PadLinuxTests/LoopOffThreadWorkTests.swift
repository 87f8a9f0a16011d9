import Glibc
@testable import PadLinux
import PadLinuxTestSupport
import Testing

@Suite("LoopOffThreadWork", .serialized)
struct LoopOffThreadWorkTests {
    /// The work blocks until the loop itself lets it go: it can finish only if the loop keeps running meanwhile
    /// (as a listing blocked on a probing device's lock must, while the loop answers the probe).
    @Test func theLoopRunsWhileTheWorkBlocksAndGetsTheResultOnItsThread() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop, seconds: 10)
        let loopThread = pthread_self()
        var delivered: [UInt8]?
        var deliveredOnLoopThread = false
        let work = try LoopOffThreadWork(on: loop, work: { () -> [UInt8] in
            // Waits (5 s at most, so a loop that never ran fails the test rather than hanging it) for the loop's byte.
            var waiting = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 5000) == 1 else { return [] }
            var byte: UInt8 = 0
            return read(readEnd, &byte, 1) == 1 ? [byte, 1] : []
        }) { value in
            delivered = value
            deliveredOnLoopThread = pthread_equal(pthread_self(), loopThread) != 0
            loop.stop()
        }
        loop.deferWork {
            var byte: UInt8 = 42
            #expect(write(writeEnd, &byte, 1) == 1)
        }
        try loop.run()
        #expect(!watchdog.fired, "the result never reached the loop")
        #expect(delivered == [42, 1])
        #expect(deliveredOnLoopThread)
        #expect(work.isFinished)
    }

    @Test func aCancelledWorksResultIsDropped() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop, seconds: 10)
        var completions = 0
        // The cancelled work tells the second one it is about to return; the second one's result ends the loop one
        // batch of events later, by when the first one's result (had it not been dropped) would have been handled.
        let work = try LoopOffThreadWork(on: loop, work: { () -> Int in
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
            return 7
        }) { _ in completions += 1 }
        work.cancel()
        let second = try LoopOffThreadWork(on: loop, work: { () -> Int in
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            return 0
        }) { _ in loop.deferWork { loop.deferWork { loop.stop() } } }
        try loop.run()
        #expect(!watchdog.fired)
        #expect(completions == 0, "a cancelled work's completion ran")
        #expect(work.isFinished && second.isFinished)
    }
}
