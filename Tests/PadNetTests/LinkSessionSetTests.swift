import PadCore
@testable import PadNet
import PadNetLinux
@testable import PadNoise
import Testing

/// The session set host and client share (current, previous, next), and the host's acknowledgement schedule, each
/// alone: the rules the forwarding simulation tests exercise through a whole link.
@Suite struct LinkSessionSetTests {
    static let path = DatagramPath(remote: try! SocketAddress.resolve("192.0.2.1:40000", defaultPort: 0)[0])

    static func session(index: UInt32, startedMicroseconds: UInt64 = 0) -> LinkSession {
        let cipher = NoiseTransportCipher(key: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 32))
        let keys = LinkSessionKeys(
            localIndex: index, remoteIndex: index &+ 1000, keys: NoiseTransportKeys(sending: cipher, receiving: cipher))
        return LinkSession(keys: keys, startedMicroseconds: startedMicroseconds, path: path)
    }

    static func found(_ lookup: LinkSessionSet.Lookup) -> String {
        switch lookup {
        case let .current(session): "current \(session.localIndex)"
        case let .previous(session): "previous \(session.localIndex)"
        case let .next(session): "next \(session.localIndex)"
        case .currentTooOld: "too old"
        case .ended: "ended"
        }
    }

    @Test func anAnsweredSessionOpensAsNextUntilConfirmedThenIsCurrentAndTheOldOnePrevious() throws {
        let set = LinkSessionSet()
        set.answered(Self.session(index: 1))
        #expect(Self.found(set.lookUp(index: 1, atMicroseconds: 10)) == "next 1")
        let firstConfirmed = set.confirmNext()
        let first = try #require(firstConfirmed)
        #expect(first.confirmed.localIndex == 1 && first.replaced == nil && first.dropped == nil)
        #expect(Self.found(set.lookUp(index: 1, atMicroseconds: 10)) == "current 1")

        set.answered(Self.session(index: 2, startedMicroseconds: 1_000))
        #expect(Self.found(set.lookUp(index: 1, atMicroseconds: 1_000)) == "current 1", "an answer alone changes nothing in use")
        let secondConfirmed = set.confirmNext()
        let second = try #require(secondConfirmed)
        #expect(second.replaced?.localIndex == 1 && second.dropped == nil)
        #expect(Self.found(set.lookUp(index: 2, atMicroseconds: 1_000)) == "current 2")
        #expect(Self.found(set.lookUp(index: 1, atMicroseconds: 1_000)) == "previous 1")

        set.answered(Self.session(index: 3, startedMicroseconds: 2_000))
        let thirdConfirmed = set.confirmNext()
        let third = try #require(thirdConfirmed)
        #expect(third.dropped?.localIndex == 1, "the previous one goes when another replaces the current one")
        #expect(Self.found(set.lookUp(index: 1, atMicroseconds: 2_000)) == "ended")
        #expect(set.all.map(\.localIndex).sorted() == [2, 3])
    }

    @Test func aSecondAnswerReplacesTheUnconfirmedOneAndNothingConfirmsWithoutAnAnswer() {
        let set = LinkSessionSet()
        #expect(set.confirmNext() == nil)
        #expect(set.answered(Self.session(index: 1)) == nil)
        #expect(set.answered(Self.session(index: 2))?.localIndex == 1)
        #expect(Self.found(set.lookUp(index: 1, atMicroseconds: 0)) == "ended")
        #expect(Self.found(set.lookUp(index: 2, atMicroseconds: 0)) == "next 2")
    }

    @Test func theLifetimeRuleEndsTheCurrentAndPreviousSessions() throws {
        let lifetime = LinkSessionLifetime.rejectAfterMicroseconds
        let set = LinkSessionSet()
        set.initiated(Self.session(index: 1, startedMicroseconds: 0))
        set.initiated(Self.session(index: 2, startedMicroseconds: 100))
        #expect(Self.found(set.lookUp(index: 1, atMicroseconds: lifetime - 1)) == "previous 1")
        #expect(Self.found(set.lookUp(index: 1, atMicroseconds: lifetime)) == "ended")
        #expect(Self.found(set.lookUp(index: 2, atMicroseconds: lifetime + 99)) == "current 2")
        #expect(Self.found(set.lookUp(index: 2, atMicroseconds: lifetime + 100)) == "too old")
    }

    @Test func anUnconfirmedSessionExpiresAfterItsTimeoutOnly() {
        let set = LinkSessionSet()
        set.answered(Self.session(index: 7, startedMicroseconds: 500))
        #expect(set.expireNext(atMicroseconds: 1_499, timeoutMicroseconds: 1_000) == nil)
        #expect(set.expireNext(atMicroseconds: 1_500, timeoutMicroseconds: 1_000)?.localIndex == 7)
        #expect(set.next == nil)
    }

    @Test func theInitiatorMakesItsNewSessionCurrentAtOnceAndDropsTheOneBeforeThePrevious() {
        let set = LinkSessionSet()
        #expect(set.initiated(Self.session(index: 1)) == nil)
        #expect(set.initiated(Self.session(index: 2)) == nil)
        #expect(set.current?.localIndex == 2 && set.previous?.localIndex == 1)
        #expect(set.initiated(Self.session(index: 3))?.localIndex == 1)
        #expect(set.dropPrevious()?.localIndex == 2)
        #expect(set.removeAll().map(\.localIndex) == [3])
        #expect(set.current == nil && set.previous == nil && set.next == nil)
    }

    @Test func lossIsTheShareOfCountersBelowTheHighestThatNeverCame() throws {
        let session = Self.session(index: 1)
        #expect(session.lossPercent == nil)
        for counter: UInt64 in [0, 1, 3, 4, 9] { session.noteReceived(counter: counter) }
        #expect(session.lossPercent == 50, "5 of counters 0...9 came")
    }
}

@Suite struct AcknowledgementScheduleTests {
    let requested = LinkLiveness.requestedAcknowledgementMicroseconds
    let delayed = LinkLiveness.delayedAcknowledgementMicroseconds
    let longest = LinkLiveness.longestAcknowledgementDelayMicroseconds
    let quiet = LinkLiveness.isolatedInputQuietMicroseconds

    @Test func anIsolatedChangeIsAcknowledgedAtOnceAndAStreamWhenItPauses() {
        var schedule = AcknowledgementSchedule()
        let start: UInt64 = 10_000_000
        schedule.framesCame(atMicroseconds: start, wantsAcknowledgement: false, lastSentMicroseconds: start - quiet)
        #expect(schedule.dueMicroseconds == start + requested, "nothing sent for a while: an isolated change")
        schedule.sent()
        #expect(schedule.dueMicroseconds == nil && !schedule.isDue(atMicroseconds: .max))

        // A stream: the host sent just now; each frame puts the acknowledgement off to its pause.
        schedule.framesCame(atMicroseconds: start + 1_000, wantsAcknowledgement: false, lastSentMicroseconds: start)
        #expect(schedule.dueMicroseconds == start + 1_000 + delayed)
        schedule.framesCame(atMicroseconds: start + 2_000, wantsAcknowledgement: false, lastSentMicroseconds: start)
        #expect(schedule.dueMicroseconds == start + 2_000 + delayed)
        #expect(!schedule.isDue(atMicroseconds: start + 2_000 + delayed - 1))
        #expect(schedule.isDue(atMicroseconds: start + 2_000 + delayed))
    }

    @Test func aStreamThatNeverPausesIsAcknowledgedWithinTheLongestDelay() {
        var schedule = AcknowledgementSchedule()
        let start: UInt64 = 10_000_000
        var time = start
        while time < start + 2 * longest {
            schedule.framesCame(atMicroseconds: time, wantsAcknowledgement: false, lastSentMicroseconds: start)
            time += 500
        }
        #expect(schedule.dueMicroseconds == start + longest)
    }

    @Test func aRequestIsNotPutOffByFramesThatDidNotAsk() {
        var schedule = AcknowledgementSchedule()
        let start: UInt64 = 10_000_000
        schedule.framesCame(atMicroseconds: start, wantsAcknowledgement: false, lastSentMicroseconds: start)
        schedule.framesCame(atMicroseconds: start + 100, wantsAcknowledgement: true, lastSentMicroseconds: start)
        let asked = start + 100 + requested
        #expect(schedule.dueMicroseconds == asked)
        schedule.framesCame(atMicroseconds: start + 200, wantsAcknowledgement: false, lastSentMicroseconds: start)
        #expect(schedule.dueMicroseconds == asked)
    }
}
