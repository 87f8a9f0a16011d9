import PadCore
import PadTestSupport
import Testing

@Suite struct FeedbackDrainTests {
    static let interval = FeedbackDrain.defaultPacingIntervalNanoseconds
    /// An arbitrary non-zero monotonic start time.
    static let t0: UInt64 = 5_000_000_000

    static let red = LightbarColor(red: 255, green: 0, blue: 0)
    static let blue = LightbarColor(red: 0, green: 0, blue: 255)
    static let strong = Rumble(strong: 1, weak: 0.5)
    static let weapon = TriggerEffect.simpleFeedback(position: 0, strength: 110)

    // MARK: Independent fields

    @Test func settingTheLightbarNeitherResendsNorStopsTheRumble() {
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: Self.strong), now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) == Feedback(rumble: Self.strong))

        let later = Self.t0 + 3 * Self.interval
        drain.submit(Feedback(lightbar: Self.red), now: later)
        #expect(drain.takeWrite(now: later) == Feedback(lightbar: Self.red))
        #expect(drain.written == Feedback(rumble: Self.strong, lightbar: Self.red))
        #expect(drain.nextDeadline == nil)
    }

    @Test func aTriggerEffectSurvivesARumbleChange() {
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: Self.strong, rightTrigger: Self.weapon), now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) == Feedback(rumble: Self.strong, rightTrigger: Self.weapon))

        let later = Self.t0 + Self.interval
        drain.submit(Feedback(rumble: .off), now: later)
        #expect(drain.takeWrite(now: later) == Feedback(rumble: .off))
        #expect(drain.written.rightTrigger == Self.weapon)
    }

    // MARK: Failed writes

    /// A write the pad refused without going away (a USB stall's EPIPE, a Bluetooth ETIMEDOUT) is not taken as done:
    /// the drain believes the pad shows what it showed before, and the same fields are written again later.
    @Test func aFailedWriteIsWrittenAgainAfterABackOff() throws {
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: Self.strong, lightbar: Self.red), now: Self.t0)
        let first = drain.takeWrite(now: Self.t0)
        #expect(first == Feedback(rumble: Self.strong, lightbar: Self.red))
        drain.writeFailed(now: Self.t0)
        #expect(drain.written == Feedback())
        let retry = try #require(drain.nextDeadline)
        #expect(retry == Self.t0 + Self.interval)
        #expect(drain.takeWrite(now: retry - 1) == nil)
        #expect(drain.takeWrite(now: retry) == first)
        #expect(drain.written == Feedback(rumble: Self.strong, lightbar: Self.red))
    }

    /// Failures in a row wait twice as long each time, up to a second, so a pad that keeps refusing is not hammered;
    /// a write that is not reported failed ends the streak.
    @Test func failuresInARowBackOffUpToASecond() throws {
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(lightbar: Self.red), now: Self.t0)
        var now = Self.t0
        var waits: [UInt64] = []
        for _ in 0..<12 {
            #expect(drain.takeWrite(now: now) == Feedback(lightbar: Self.red))
            drain.writeFailed(now: now)
            let next = try #require(drain.nextDeadline)
            waits.append(next - now)
            now = next
        }
        #expect(waits.first == Self.interval)
        #expect(waits == waits.sorted())
        #expect(waits.last == FeedbackDrain.longestRetryNanoseconds)
        #expect(drain.takeWrite(now: now) == Feedback(lightbar: Self.red))  // this one went through
        drain.submit(Feedback(lightbar: Self.blue), now: now + 1)
        #expect(drain.nextDeadline == now + Self.interval, "back to plain pacing")
    }

    /// A change requested while a failed write waits for its retry is written with it, latest value winning.
    @Test func aChangeDuringTheBackOffJoinsTheRetry() {
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: Self.strong, lightbar: Self.red), now: Self.t0)
        _ = drain.takeWrite(now: Self.t0)
        drain.writeFailed(now: Self.t0)
        drain.submit(Feedback(lightbar: Self.blue), now: Self.t0 + 1)
        #expect(drain.takeWrite(now: Self.t0 + Self.interval) == Feedback(rumble: Self.strong, lightbar: Self.blue))
    }

    // MARK: Pacing

    @Test func aBurstWithinOneIntervalIsOneWriteOfTheLatestValueAtTheIntervalsEnd() {
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: .off), now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) == Feedback(rumble: .off))

        var latest = Rumble.off
        for step in 1...100 {
            let now = Self.t0 + UInt64(step) * (Self.interval / 101)
            latest = Rumble(strong: Double(step) / 100, weak: 1 - Double(step) / 100)
            drain.submit(Feedback(rumble: latest), now: now)
            #expect(drain.takeWrite(now: now) == nil)
            #expect(drain.nextDeadline == Self.t0 + Self.interval)
        }
        #expect(drain.takeWrite(now: Self.t0 + Self.interval - 1) == nil)
        #expect(drain.takeWrite(now: Self.t0 + Self.interval) == Feedback(rumble: latest))
        #expect(drain.takeWrite(now: Self.t0 + 2 * Self.interval) == nil)
        #expect(drain.nextDeadline == nil)
    }

    /// Idle gaps since the last write, in nanoseconds; `nil` = nothing written yet.
    @Test(arguments: [nil, interval, interval + 1, 50 * interval] as [UInt64?])
    func theFirstChangeAfterIdleGoesOutAtOnce(idleGap: UInt64?) {
        var drain = FeedbackDrain(supported: .dualSense)
        var now = Self.t0
        if let idleGap {
            drain.submit(Feedback(lightbar: Self.red), now: now)
            #expect(drain.takeWrite(now: now) != nil)
            now += idleGap
        }
        #expect(drain.nextDeadline == nil)
        drain.submit(Feedback(rumble: Self.strong), now: now)
        #expect(drain.takeWrite(now: now) == Feedback(rumble: Self.strong))
    }

    @Test func aChangeBeforeTheIntervalEndsWaitsForItAndSaysWhen() {
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(lightbar: Self.red), now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) != nil)
        drain.submit(Feedback(lightbar: Self.blue), now: Self.t0 + Self.interval - 1)
        #expect(drain.takeWrite(now: Self.t0 + Self.interval - 1) == nil)
        #expect(drain.nextDeadline == Self.t0 + Self.interval)
    }

    /// A caller that calls `takeWrite` after each submission and at each `nextDeadline`, with submissions at random
    /// times: every change reaches the pad within one interval, writes are at least one interval apart, each write
    /// brings the pad fully up to date, and a change after an idle interval goes out at the moment it is made.
    @Test(arguments: 0..<25 as Range<UInt64>)
    func noChangeWaitsLongerThanOneInterval(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let interval = Self.interval
        let colours = [Self.red, Self.blue, LightbarColor(red: 0, green: 255, blue: 0)]
        let rumbles = [Rumble.off, Rumble(strong: 0.25, weak: 0), Self.strong]

        var drain = FeedbackDrain(supported: .dualSense)
        var model = Feedback()  // what the pad should end up showing
        var writes: [UInt64] = []
        var owedSince: UInt64?  // the oldest submission not yet on the pad
        var now = Self.t0

        func record(_ write: Feedback?, at now: UInt64) {
            guard write != nil else { return }
            if let previous = writes.last { #expect(now - previous >= interval, "seed \(seed)") }
            if let owedSince {
                #expect(now - owedSince <= interval, "seed \(seed): owed since \(owedSince), written \(now)")
            }
            #expect(drain.written.merging(model) == drain.written, "seed \(seed): write at \(now) left changes behind")
            writes.append(now)
            owedSince = nil
        }
        func runTimers(until end: UInt64) {
            while let deadline = drain.nextDeadline, deadline < end {
                now = max(deadline, now)
                let write = drain.takeWrite(now: now)
                record(write, at: now)
                if write == nil, let again = drain.nextDeadline, again <= now {
                    Issue.record("seed \(seed): deadline \(again) does not advance at \(now)")
                    return
                }
            }
        }

        for _ in 0..<300 {
            // Mostly bursts well inside one interval, sometimes idle gaps of up to three intervals.
            let next = now + (random.chance(1, in: 5)
                ? UInt64.random(in: 0...(3 * interval), using: &random)
                : UInt64.random(in: 0...(interval / 4), using: &random))
            runTimers(until: next)
            now = next
            var request = Feedback()
            if random.chance(2, in: 3) { request.rumble = rumbles.randomElement(using: &random) }
            if random.chance(1, in: 3) { request.lightbar = colours.randomElement(using: &random) }
            drain.submit(request, now: now)
            model.merge(request)
            let pending = drain.written.merging(model) != drain.written
            owedSince = pending ? (owedSince ?? now) : nil
            let idle = writes.last.map { now - $0 >= interval } ?? true
            let write = drain.takeWrite(now: now)
            if pending && idle { #expect(write != nil, "seed \(seed): change after idle held back at \(now)") }
            record(write, at: now)
        }
        runTimers(until: .max)
        #expect(drain.written.merging(model) == drain.written)
        #expect(drain.nextDeadline == nil)
        #expect(writes.count > 10)
    }

    // MARK: Duplicates

    @Test func submittingTheSameValueAgainWritesNothing() {
        var drain = FeedbackDrain(supported: .dualSense)
        let all = Feedback(
            rumble: Self.strong, lightbar: Self.red, playerLeds: 0b00100, micLed: true, leftTrigger: .off,
            rightTrigger: Self.weapon)
        drain.submit(all, now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) == all)

        let later = Self.t0 + 2 * Self.interval
        drain.submit(all, now: later)
        // The same trigger bytes, spelled differently, are the same value.
        drain.submit(Feedback(leftTrigger: .raw(TriggerEffect.off.block)), now: later)
        #expect(drain.nextDeadline == nil)
        #expect(drain.takeWrite(now: later) == nil)
    }

    @Test func aChangeThatIsUndoneBeforeItsWriteWritesNothing() {
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: Self.strong), now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) != nil)
        drain.submit(Feedback(rumble: .off), now: Self.t0 + 1)
        drain.submit(Feedback(rumble: Self.strong), now: Self.t0 + 2)
        #expect(drain.nextDeadline == nil)
        #expect(drain.takeWrite(now: Self.t0 + Self.interval) == nil)
    }

    /// 0.5 and 0.501 share the 8-bit motor byte 128 but not the 16-bit evdev magnitude.
    @Test func rumbleComparesMagnitudesExactlyNotAsBytes() {
        let before = Rumble(strong: 0.5, weak: 0), after = Rumble(strong: 0.501, weak: 0)
        #expect(Rumble.byte(before.strong) == Rumble.byte(after.strong))
        var drain = FeedbackDrain(supported: .rumbleOnly)
        drain.submit(Feedback(rumble: before), now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) == Feedback(rumble: before))
        drain.submit(Feedback(rumble: after), now: Self.t0 + Self.interval)
        #expect(drain.takeWrite(now: Self.t0 + Self.interval) == Feedback(rumble: after))
    }

    // MARK: Duration

    @Test func aTimedRumbleStopsAtExactlyStartPlusDuration() {
        let duration: UInt64 = 200_000_000
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: Self.strong), rumbleDurationNanoseconds: duration, now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) == Feedback(rumble: Self.strong))
        #expect(drain.nextDeadline == Self.t0 + duration)
        #expect(drain.takeWrite(now: Self.t0 + duration - 1) == nil)
        #expect(drain.written.rumble == Self.strong)
        #expect(drain.takeWrite(now: Self.t0 + duration) == Feedback(rumble: .off))
        #expect(drain.nextDeadline == nil)
    }

    @Test func aNewerRumbleCancelsTheOldStop() {
        let duration: UInt64 = 200_000_000
        let gentle = Rumble(strong: 0.2, weak: 0.2)
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: Self.strong), rumbleDurationNanoseconds: duration, now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) != nil)

        let replaced = Self.t0 + duration / 2
        drain.submit(Feedback(rumble: gentle), now: replaced)
        #expect(drain.takeWrite(now: replaced) == Feedback(rumble: gentle))
        #expect(drain.nextDeadline == nil)
        #expect(drain.takeWrite(now: Self.t0 + duration) == nil)
        #expect(drain.written.rumble == gentle)
    }

    @Test func aNewerTimedRumbleMovesTheStop() {
        let duration: UInt64 = 200_000_000
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: Self.strong), rumbleDurationNanoseconds: duration, now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) != nil)
        let renewed = Self.t0 + duration / 2
        drain.submit(Feedback(rumble: Self.strong), rumbleDurationNanoseconds: duration, now: renewed)
        #expect(drain.takeWrite(now: renewed) == nil)  // same value: nothing to write
        #expect(drain.nextDeadline == renewed + duration)
        #expect(drain.takeWrite(now: Self.t0 + duration) == nil)
        #expect(drain.takeWrite(now: renewed + duration) == Feedback(rumble: .off))
    }

    @Test func otherPartsDoNotTouchTheRumblesStop() {
        let duration: UInt64 = 200_000_000
        var drain = FeedbackDrain(supported: .dualSense)
        drain.submit(Feedback(rumble: Self.strong), rumbleDurationNanoseconds: duration, now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) != nil)
        let later = Self.t0 + duration / 2
        drain.submit(Feedback(lightbar: Self.red), rumbleDurationNanoseconds: 1, now: later)
        #expect(drain.takeWrite(now: later) == Feedback(lightbar: Self.red))
        #expect(drain.nextDeadline == Self.t0 + duration)
    }

    // MARK: Unsupported parts

    @Test func unsupportedPartsAreDroppedAndReportedOnce() {
        var drain = FeedbackDrain(supported: .dualShock4)
        drain.submit(Feedback(rumble: Self.strong, micLed: true, leftTrigger: Self.weapon), now: Self.t0)
        #expect(drain.takeNewlyDropped() == [.micLed, .leftTrigger])
        #expect(drain.takeWrite(now: Self.t0) == Feedback(rumble: Self.strong))
        #expect(drain.takeNewlyDropped() == [])

        let later = Self.t0 + Self.interval
        drain.submit(Feedback(leftTrigger: .off, rightTrigger: Self.weapon), now: later)
        #expect(drain.takeNewlyDropped() == [.rightTrigger])
        drain.submit(Feedback(micLed: false, leftTrigger: .off, rightTrigger: .off), now: later)
        #expect(drain.takeNewlyDropped() == [])
        #expect(drain.nextDeadline == nil)
        #expect(drain.takeWrite(now: later) == nil)
        #expect(drain.written == Feedback(rumble: Self.strong))
    }

    @Test func partsOfAFeedback() {
        #expect(FeedbackParts(of: Feedback()) == [])
        #expect(FeedbackParts(of: Feedback(lightbar: Self.red, rightTrigger: .off)) == [.lightbar, .rightTrigger])
        #expect(
            FeedbackParts(
                of: Feedback(
                    rumble: .off, lightbar: Self.red, playerLeds: 1, micLed: false, leftTrigger: .off,
                    rightTrigger: .off)) == .all)
        #expect(FeedbackParts.dualSense == .all)
        #expect(FeedbackParts.dualShock4 == [.rumble, .lightbar])
        #expect(FeedbackParts.rumbleOnly == [.rumble])
    }

    // MARK: Closing

    @Test func closingRestoresLightsAndSilencesMotorsAndTriggers() {
        let initial = Feedback(lightbar: Self.blue, playerLeds: 0b00100, micLed: false)
        var drain = FeedbackDrain(supported: .dualSense, restoring: initial)
        drain.submit(
            Feedback(
                rumble: Self.strong, lightbar: Self.red, playerLeds: 0b10001, micLed: true, leftTrigger: Self.weapon),
            now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) != nil)

        // Pacing does not hold the closing write back.
        #expect(
            drain.closingWrite()
                == Feedback(
                    rumble: .off, lightbar: Self.blue, playerLeds: 0b00100, micLed: false, leftTrigger: .off))
        #expect(drain.written.lightbar == Self.blue)

        // After closing the drain accepts nothing more.
        let later = Self.t0 + 10 * Self.interval
        drain.submit(Feedback(rumble: Self.strong), now: later)
        #expect(drain.nextDeadline == nil)
        #expect(drain.takeWrite(now: later) == nil)
        #expect(drain.closingWrite() == nil)
    }

    @Test func closingLeavesAloneWhatTheDrainDidNotChangeOrCannotRestore() {
        // Lightbar set to what it already was; mic LED changed but its earlier state unknown; right trigger never
        // touched; rumble already stopped, but it was on, so it is stopped again.
        var drain = FeedbackDrain(supported: .dualSense, restoring: Feedback(lightbar: Self.blue))
        drain.submit(Feedback(rumble: Self.strong, lightbar: Self.blue, micLed: true), now: Self.t0)
        #expect(drain.takeWrite(now: Self.t0) != nil)
        drain.submit(Feedback(rumble: .off), now: Self.t0 + Self.interval)
        #expect(drain.takeWrite(now: Self.t0 + Self.interval) != nil)
        #expect(drain.closingWrite() == Feedback(rumble: .off))
    }

    @Test func closingIsNilWhenNothingWasChanged() {
        var untouched = FeedbackDrain(supported: .dualSense, restoring: Feedback(lightbar: Self.blue, playerLeds: 1))
        #expect(untouched.closingWrite() == nil)

        // Requested but never written (an off rumble, the lightbar it already had): nothing to undo.
        var unchanged = FeedbackDrain(supported: .dualSense, restoring: Feedback(lightbar: Self.blue))
        unchanged.submit(Feedback(rumble: .off, lightbar: Self.blue), now: Self.t0)
        #expect(unchanged.takeWrite(now: Self.t0) == Feedback(rumble: .off, lightbar: Self.blue))
        #expect(unchanged.closingWrite() == nil)
    }
}
