import PadCore
import PadTestSupport
import Testing

/// A seeded lossy network: each datagram is lost, duplicated and delayed (so reordered) at random.
struct LossyChannel<Datagram> {
    var generator: SplitMix64
    var lossPercent: Int
    var duplicatePercent = 5
    var maximumDelayMicroseconds: UInt64 = 8_000
    private(set) var inFlight: [(arrival: UInt64, order: Int, datagram: Datagram)] = []
    private var sent = 0

    init(seed: UInt64, lossPercent: Int) {
        generator = SplitMix64(seed: seed)
        self.lossPercent = lossPercent
    }

    mutating func send(_ datagram: Datagram, at now: UInt64) {
        sent += 1
        if generator.chance(lossPercent, in: 100) { return }
        let copies = generator.chance(duplicatePercent, in: 100) ? 2 : 1
        for _ in 0..<copies {
            let delay = 1_000 + UInt64.random(in: 0...maximumDelayMicroseconds, using: &generator)
            inFlight.append((now + delay, sent, datagram))
        }
    }

    /// The datagrams that arrived by `now`, in arrival order.
    mutating func deliver(until now: UInt64) -> [Datagram] {
        let arrived = inFlight.filter { $0.arrival <= now }.sorted { ($0.arrival, $0.order) < ($1.arrival, $1.order) }
        inFlight.removeAll { $0.arrival <= now }
        return arrived.map(\.datagram)
    }
}

@Suite struct LinkRedundancyTests {
    /// The discrete states a sequence of snapshots passes through (consecutive repeats folded).
    static func discreteHistory(_ snapshots: [PadSnapshot]) -> [UInt32] {
        var history: [UInt32] = []
        var last: PadSnapshot?
        for snapshot in snapshots where last.map({ !$0.hasSameDiscreteState(as: snapshot) }) ?? true {
            history.append(snapshot.buttons.rawValue)
            last = snapshot
        }
        return history
    }

    /// 200 short taps (press in one frame, release in the next) among 1 kHz analog frames, over a link with 10 %
    /// loss, duplication and reordering both ways: the host applies every press and release, once, in order, and
    /// its applied sequence numbers only grow.
    @Test(arguments: [0x1A55 as UInt64, 0xBEEF, 0x5EED_0001])
    func everyTapArrivesOnceAndInOrderUnderLoss(seed: UInt64) {
        var sender = InputRedundancySender()
        var receiver = InputRedundancyReceiver()
        var forward = LossyChannel<LinkInputBlock>(seed: seed, lossPercent: 10)
        var backward = LossyChannel<UInt32>(seed: seed ^ 0xFFFF, lossPercent: 10)
        var source: [PadSnapshot] = []
        var applied: [PadSnapshot] = [.neutral]
        var appliedSequences: [UInt32] = []
        var generator = SplitMix64(seed: seed &+ 1)
        let buttons: [Button] = [.a, .b, .x, .y, .dpup, .leftshoulder]
        var now: UInt64 = 0
        var lastSent: UInt64 = 0
        var snapshot = PadSnapshot.neutral
        var frame = 0
        var taps = 0
        while taps < 200 || sender.hasUnacknowledged {
            now += 1_000
            frame += 1
            var changed = false
            if taps < 200 && frame % 7 == 0 {
                snapshot[buttons[taps % buttons.count]].toggle()  // press, then release 7 frames later
                if !snapshot[buttons[taps % buttons.count]] { taps += 1 }
                changed = true
            }
            if taps < 200 && frame % 2 == 0 {
                snapshot.leftX = Int16.random(in: -30_000...30_000, using: &generator)
                changed = true
            }
            if changed {
                source.append(snapshot)
                sender.record(snapshot)
                forward.send(sender.block(slot: 0), at: now)
                lastSent = now
            } else if sender.hasUnacknowledged && now - lastSent >= 10_000 {
                forward.send(sender.block(slot: 0), at: now)  // retransmission: nothing new, something unacknowledged
                lastSent = now
            }
            for block in forward.deliver(until: now) {
                for shown in receiver.receive(block) { applied.append(shown) }
                guard let sequence = receiver.applied else { continue }
                appliedSequences.append(sequence)
                backward.send(sequence, at: now)
            }
            for acknowledgement in backward.deliver(until: now) { sender.acknowledge(acknowledgement) }
            #expect(now < 60_000_000, "the link never settled")
            if now >= 60_000_000 { break }
        }
        #expect(Self.discreteHistory(applied) == Self.discreteHistory([.neutral] + source))
        #expect(zip(appliedSequences, appliedSequences.dropFirst()).allSatisfy { !LinkSequence.isNewer($0, than: $1) })
        #expect(applied.last == source.last, "the pad ends in the source's last state")
        #expect(sender.overflowed == 0)
    }

    @Test func aLateDatagramNeverRollsThePadBack() {
        var sender = InputRedundancySender()
        var receiver = InputRedundancyReceiver()
        var pressed = PadSnapshot.neutral
        pressed[.a] = true
        sender.record(pressed)
        let early = sender.block(slot: 0)
        sender.record(.neutral)
        let late = sender.block(slot: 0)
        #expect(receiver.receive(late).map { $0[.a] } == [true, false])
        #expect(receiver.receive(early).isEmpty)
        #expect(receiver.receive(late).isEmpty, "a duplicate applies nothing")
        #expect(receiver.applied == 2)
    }

    @Test func acknowledgedFramesAreNotSentAgainAndAnalogFramesAreNotKept() {
        var sender = InputRedundancySender()
        var pressed = PadSnapshot.neutral
        pressed[.b] = true
        sender.record(pressed)  // 1: discrete
        pressed.leftX = 100
        sender.record(pressed)  // 2: analog only
        pressed.leftX = 200
        sender.record(pressed)  // 3: analog only
        #expect(sender.framesToSend.map(\.sequence) == [1, 3])
        sender.acknowledge(1)
        #expect(sender.framesToSend.map(\.sequence) == [3])
        sender.acknowledge(3)
        #expect(!sender.hasUnacknowledged)
        sender.acknowledge(2)
        #expect(sender.acknowledged == 3, "an older acknowledgement changes nothing")
    }

    /// Finding 7: the host starts each session's baseline where the client says, so a pad past 2^31 frames in one
    /// `connect` run (weeks at 1 kHz) is not frozen by a reconnection.
    @Test func aNewSessionStartsWhereTheClientSays() {
        var sender = InputRedundancySender(startingAfter: 0x8000_0010)
        var receiver = InputRedundancyReceiver()
        receiver.restart()
        sender.record(.holding(.a))
        #expect(receiver.receive(sender.block(slot: 0)).map { $0[.a] } == [true])
        sender.record(.neutral)
        #expect(receiver.receive(sender.block(slot: 0)).map { $0[.a] } == [false])
        #expect(receiver.applied == 0x8000_0012)
        for _ in 0..<3 { sender.record(.holding(.b)) }
        sender.acknowledge(0x8000_0015)
        receiver.restart()
        sender.record(.neutral)
        #expect(receiver.receive(sender.block(slot: 0)) == [.neutral], "after another new session")
    }

    /// A session whose client numbers on (the same `connect` after a renewal or a lost link): frames applied in the
    /// session before are not applied again though their acknowledgement never reached the client, and what follows
    /// them is; a client that does not say so (a new `connect`, numbering from 1) starts afresh.
    @Test func aSessionThatNumbersOnSkipsWhatTheSessionBeforeApplied() {
        var sender = InputRedundancySender()
        var receiver = InputRedundancyReceiver()
        for tap in 0..<4 {
            sender.record(tap % 2 == 0 ? .holding(.a) : .neutral)
            _ = receiver.receive(sender.block(slot: 0))
        }
        #expect(receiver.applied == 4 && sender.unacknowledged.count == 4, "applied, none acknowledged")
        receiver.restart()
        receiver.continueNumbering()
        sender.record(.holding(.b))
        #expect(receiver.receive(sender.block(slot: 0)) == [.holding(.b)], "only the frame after those applied")

        receiver.restart()
        receiver.restart()  // a renewal with no frame in between keeps what was applied before it
        receiver.continueNumbering()
        sender.record(.neutral)
        #expect(receiver.receive(sender.block(slot: 0)) == [.neutral])

        var newConnect = InputRedundancySender()
        receiver.restart()
        newConnect.record(.holding(.x))
        #expect(receiver.receive(newConnect.block(slot: 0)) == [.holding(.x)], "a new numbering from 1 starts afresh")
    }

    /// Finding 6: a block whose base is beyond what the receiver applied (the block before it was lost) is not
    /// applied: applying it would skip the presses in between for good. At a session's start, a block that
    /// continues another (a pad's frames split over datagrams) waits for the one it continues.
    @Test func aBlockAfterAGapWaitsForTheBlockBeforeIt() {
        var receiver = InputRedundancyReceiver()
        let first = LinkInputBlock(slot: 0, base: 0, frames: [LinkFrame(sequence: 1, snapshot: .holding(.a))])
        let second = LinkInputBlock(
            slot: 0, base: 1, continues: true, frames: [LinkFrame(sequence: 2, snapshot: .neutral)])
        let third = LinkInputBlock(
            slot: 0, base: 2, continues: true, frames: [LinkFrame(sequence: 3, snapshot: .holding(.b))])
        #expect(receiver.receive(second).isEmpty)
        #expect(receiver.applied == nil)
        #expect(receiver.receive(first) == [.holding(.a)])
        #expect(receiver.receive(third).isEmpty, "the block before it is missing")
        #expect(receiver.receive(second) == [.neutral])
        #expect(receiver.receive(third) == [.holding(.b)])
    }

    @Test func sequenceNumbersCompareAcrossTheWrap() {
        #expect(LinkSequence.isNewer(1, than: 0))
        #expect(LinkSequence.isNewer(0, than: UInt32.max))
        #expect(!LinkSequence.isNewer(UInt32.max, than: 0))
        #expect(!LinkSequence.isNewer(5, than: 5))
        #expect(LinkSequence.isNewer(0x7FFF_FFFF, than: 0) && !LinkSequence.isNewer(0x8000_0000, than: 0))
    }

    @Test func feedbackIsAppliedOncePerChangeAndRumbleEndsWithTheLink() {
        var sender = FeedbackStateSender()
        var receiver = FeedbackStateReceiver()
        sender.update(.lightbar(LightbarColor(red: 9, green: 8, blue: 7)))
        sender.update(.rumble(Rumble(strong: 0.5, weak: 0.25)))
        let first = sender.pending!
        #expect(receiver.receive(version: first.version, state: first.state)
            == Feedback(rumble: Rumble(strong: 0.5, weak: 0.25), lightbar: LightbarColor(red: 9, green: 8, blue: 7)))
        #expect(receiver.receive(version: first.version, state: first.state) == nil, "a repeat applies nothing")
        sender.update(.rumble(.off))
        let second = sender.pending!
        #expect(receiver.receive(version: second.version, state: second.state) == Feedback(rumble: .off))
        #expect(receiver.receive(version: first.version, state: first.state) == nil, "a late one applies nothing")
        sender.acknowledge(second.version)
        #expect(sender.pending == nil)
        sender.update(.rumble(Rumble(strong: 1, weak: 1)))
        let third = sender.pending!
        _ = receiver.receive(version: third.version, state: third.state)
        #expect(receiver.linkLost() == Feedback(rumble: .off))
        sender.restartSession()
        #expect(sender.pending?.state.lightbar == LightbarColor(red: 9, green: 8, blue: 7), "a new session gets it all")
    }
}

@Suite struct ReplayWindowTests {
    /// Accepts each counter in turn; the results.
    static func accept(_ window: inout ReplayWindow, _ counters: [UInt64]) -> [Bool] {
        counters.map { window.accept($0) }
    }

    @Test func eachCounterIsAcceptedOnceAndOldOnesAreRefused() {
        var window = ReplayWindow()
        #expect(Self.accept(&window, [0, 0, 5, 3, 3, 4, 1]) == [true, false, true, true, false, true, true])
        #expect(!window.check(5))
        #expect(Self.accept(&window, [ReplayWindow.size + 5]) == [true])
        #expect(!window.check(5), "exactly one window behind: too old")
        #expect(window.check(6))
        #expect(Self.accept(&window, [6, 6]) == [true, false])
    }

    @Test func aFarJumpForgetsEverythingBehind() {
        var window = ReplayWindow()
        #expect(Self.accept(&window, Array(0..<100)).allSatisfy { $0 })
        #expect(Self.accept(&window, [1_000_000]) == [true])
        #expect(!window.check(99) && window.check(999_999))
        #expect(Self.accept(&window, [999_000, 999_000]) == [true, false])
    }

    @Test func randomOrderWithinTheWindowAcceptsEachExactlyOnce() {
        var generator = SplitMix64(seed: 0x5EE)
        var window = ReplayWindow()
        var counters = Array(0..<UInt64(1_500)) + Array(0..<UInt64(1_500))
        counters.shuffle(using: &generator)
        var accepted: [UInt64] = []
        for counter in counters where window.accept(counter) { accepted.append(counter) }
        #expect(accepted.count == 1_500 && Set(accepted).count == 1_500)
    }
}

@Suite struct LinkLivenessTests {
    @Test func keepaliveThenLostAtTheTimeout() {
        var liveness = LinkLiveness(startingAtMicroseconds: 1_000)
        #expect(!liveness.isKeepaliveDue(atMicroseconds: 100_999) && liveness.isKeepaliveDue(atMicroseconds: 101_000))
        #expect(!liveness.isLost(atMicroseconds: 400_999) && liveness.isLost(atMicroseconds: 401_000))
        #expect(liveness.nextWakeMicroseconds(hasUnacknowledged: false) == 101_000)
        // Nothing heard for 150 ms: keepalives every 25 ms after the last one sent.
        liveness.sent(atMicroseconds: 350_000)
        #expect(liveness.nextWakeMicroseconds(hasUnacknowledged: false) == 375_000)
        #expect(!liveness.isKeepaliveDue(atMicroseconds: 374_999) && liveness.isKeepaliveDue(atMicroseconds: 375_000))
        liveness.heard(atMicroseconds: 390_000)
        #expect(liveness.nextWakeMicroseconds(hasUnacknowledged: false) == 450_000, "heard again: 100 ms after the last sent")
        #expect(!liveness.isLost(atMicroseconds: 700_000) && liveness.isLost(atMicroseconds: 790_000))
    }

    @Test func retransmissionFollowsTheRoundTripWithinBounds() {
        var liveness = LinkLiveness(startingAtMicroseconds: 0)
        #expect(liveness.retransmitIntervalMicroseconds == 30_000, "1.5 x an assumed 20 ms before any sample")
        liveness.roundTrip(1_000)
        #expect(liveness.retransmitIntervalMicroseconds == LinkLiveness.minimumRetransmitMicroseconds)
        for _ in 0..<50 { liveness.roundTrip(200_000) }
        #expect(liveness.retransmitIntervalMicroseconds == LinkLiveness.maximumRetransmitMicroseconds)
        #expect(liveness.nextWakeMicroseconds(hasUnacknowledged: true) == 50_000)
    }

    @Test func aNewFrameIsCopiedTwiceTwoMillisecondsApartWhileUnacknowledged() {
        var liveness = LinkLiveness(startingAtMicroseconds: 0)
        for _ in 0..<8 { liveness.roundTrip(10_000) }   // 10 ms: 15 ms retransmissions
        liveness.sentNewInput()
        liveness.sent(atMicroseconds: 100_000)
        #expect(liveness.nextWakeMicroseconds(hasUnacknowledged: true) == 102_000)
        #expect(!liveness.isQuickCopyDue(atMicroseconds: 101_999, hasUnacknowledged: true))
        #expect(!liveness.isQuickCopyDue(atMicroseconds: 102_000, hasUnacknowledged: false), "acknowledged: no copy")
        #expect(liveness.isQuickCopyDue(atMicroseconds: 102_000, hasUnacknowledged: true))
        liveness.sent(atMicroseconds: 102_000)
        liveness.sentQuickCopy()
        #expect(liveness.isQuickCopyDue(atMicroseconds: 104_000, hasUnacknowledged: true))
        liveness.sent(atMicroseconds: 104_000)
        liveness.sentQuickCopy()
        #expect(!liveness.isQuickCopyDue(atMicroseconds: 110_000, hasUnacknowledged: true), "two copies, no more")
        #expect(liveness.nextWakeMicroseconds(hasUnacknowledged: true) == 119_000, "then the retransmission interval")
        // A stream (a frame every millisecond) never waits 2 ms: no copies while it flows.
        liveness.sentNewInput()
        for millisecond in 105...120 {
            #expect(!liveness.isQuickCopyDue(atMicroseconds: UInt64(millisecond) * 1_000, hasUnacknowledged: true))
            liveness.sent(atMicroseconds: UInt64(millisecond) * 1_000)
        }
    }

    @Test func backoffDoublesToTwoSecondsAndResets() {
        var backoff = ReconnectBackoff()
        let delays = (0..<7).map { _ in backoff.nextDelayMicroseconds(jitter: 0) }
        #expect(delays == [100_000, 200_000, 400_000, 800_000, 1_600_000, 2_000_000, 2_000_000])
        #expect(backoff.nextDelayMicroseconds(jitter: 1) == 1_500_000)
        backoff.reset()
        #expect(backoff.nextDelayMicroseconds(jitter: 0) == 100_000)
    }
}
