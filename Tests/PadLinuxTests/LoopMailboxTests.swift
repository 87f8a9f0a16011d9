import Glibc
@testable import PadLinux
import PadLinuxTestSupport
import Testing

@Suite("LoopMailbox and LoopThread", .serialized)
struct LoopMailboxTests {
    /// A loop on a thread of its own posts back to this loop: every message arrives, in order, on this loop's thread,
    /// and this loop runs meanwhile (it is the other thread that waits on its own loop).
    @Test func messagesFromAnotherLoopsThreadArriveInOrderOnTheReceivingLoop() throws {
        let loop = try DeviceEventLoop()
        let loopThread = pthread_self()
        let replies = try LoopMailbox<Int>()
        let requests = try LoopMailbox<Int>()
        var received: [Int] = []
        var onLoopThread = true
        try replies.receive(on: loop) { value in
            received.append(value)
            onLoopThread = onLoopThread && pthread_equal(pthread_self(), loopThread) != 0
            if received.count == 100 { loop.stop() }
        }
        // Posted before the other loop receives: kept until it does.
        requests.post(0)
        try LoopThread.start { other in
            guard let other else { return }
            try? requests.receive(on: other) { first in
                for value in first..<(first + 100) { replies.post(value) }
                requests.stopReceiving()
                other.stop()
            }
        }
        #expect(try loop.run(forAtMost: 10), "the other loop's messages never all came")
        #expect(received == Array(0..<100))
        #expect(onLoopThread)
        replies.stopReceiving()
    }

    /// After `stopReceiving` nothing more is handed over.
    @Test func nothingArrivesAfterStopReceiving() throws {
        let loop = try DeviceEventLoop()
        let mailbox = try LoopMailbox<Int>()
        var received: [Int] = []
        try mailbox.receive(on: loop) { value in
            received.append(value)
            loop.stop()
        }
        mailbox.post(1)
        #expect(try loop.run(forAtMost: 5))
        mailbox.stopReceiving()
        mailbox.post(2)
        loop.deferWork { loop.deferWork { loop.stop() } }
        #expect(try loop.run(forAtMost: 5))
        #expect(received == [1])
    }
}
