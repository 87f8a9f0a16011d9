import PadCore
import PadTestSupport
import Testing

/// The virtual pad's sensor clock follows its source's: steps equal to the source's, one offset per source clock,
/// never backwards; a source without a clock gets the time its reports go out.
@Suite struct VirtualSensorClockTests {
    /// A virtual DualSense's start: 3.4 s on its clock, created at 10 s of monotonic time.
    static let start: UInt64 = 3_400_000, created: UInt64 = 10_000_000

    static func fresh() -> VirtualSensorClock {
        VirtualSensorClock(startingAtMicroseconds: start, arrivalMicroseconds: created)
    }

    /// hid-playstation's conversion of the report's 32-bit field (1/3 µs) into MSC_TIMESTAMP (µs, u32):
    /// `dualsense_parse_report` takes the first report's ticks / 3, then adds each step (modulo 2³²) / 3, both
    /// rounded to the closest.
    struct KernelMotionTimestamps {
        var lastTicks: UInt32?
        var microseconds: UInt32 = 0

        mutating func next(ticks: UInt32) -> UInt32 {
            if let lastTicks {
                microseconds &+= UInt32((UInt64(ticks &- lastTicks) + 1) / 3)
            } else {
                microseconds = UInt32((UInt64(ticks) + 1) / 3)
            }
            lastTicks = ticks
            return microseconds
        }
    }

    /// The sensor field of the Bluetooth report a virtual DualSense sends for a sample stamped `microseconds`.
    static func reportTicks(_ microseconds: UInt64) -> UInt32 {
        var snapshot = PadSnapshot.neutral
        snapshot.motion.timestampMicroseconds = microseconds
        let report = DualSenseInputReport.encoded(snapshot, transport: .bluetooth)
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(report[2 + 27 + $1]) << (8 * UInt32($1)) }
    }

    // MARK: No sensor clock

    @Test func aSourceWithoutASensorClockGetsTheTimeItsReportsGoOut() {
        var clock = Self.fresh()
        let arrivals: [UInt64] = [Self.created, Self.created + 4_000, Self.created + 9_500, Self.created + 9_500,
                                  Self.created + 30_000]
        let stamps = arrivals.map { clock.stamp(sourceMicroseconds: 0, arrivalMicroseconds: $0) }
        #expect(stamps == arrivals.map { Self.start + $0 - Self.created })
        // An Xbox pad's frames: motion at rest, timestamp 0.
        #expect(PadSnapshot.neutral.motion.timestampMicroseconds == 0)
    }

    // MARK: Following a source's clock

    @Test func stepsEqualTheSourcesWhateverTheArrivalJitterWithOneOffset() {
        var clock = Self.fresh()
        var generator = SplitMix64(seed: 19)
        let firstSource: UInt64 = 1_431_000_000
        var arrival = Self.created + 50_000
        var offsets: Set<UInt64> = []
        var stamps: [UInt64] = []
        for k in 0..<500 {
            let source = firstSource + UInt64(k) * 4_000
            // Sent every 4 ms, delayed 1...9 ms, kept in order (a late frame holds the ones behind it).
            arrival = max(arrival, Self.created + 50_000 + UInt64(k) * 4_000 + generator.next(upTo: 8_000) + 1_000)
            let stamp = clock.stamp(sourceMicroseconds: source, arrivalMicroseconds: arrival)
            offsets.insert(stamp &- source)
            stamps.append(stamp)
        }
        #expect(offsets.count == 1, "one offset for the whole source session")
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $1 - $0 == 4_000 })
        // The first sample continues from where the clock stood, by the time since it was made (arrived 1...9 ms
        // after the 50 ms).
        #expect(stamps[0] >= Self.start + 51_000 && stamps[0] < Self.start + 59_000)
    }

    @Test func theSameSampleAgainKeepsItsStamp() {
        // A heartbeat, a pad going neutral or shown again on resume: no new sample, no time passes on its clock.
        var clock = Self.fresh()
        let first = clock.stamp(sourceMicroseconds: 7_000_000, arrivalMicroseconds: Self.created + 1_000)
        #expect(clock.stamp(sourceMicroseconds: 7_000_000, arrivalMicroseconds: Self.created + 21_000) == first)
        #expect(clock.stamp(sourceMicroseconds: 7_000_000, arrivalMicroseconds: Self.created + 400_000) == first)
        #expect(clock.stamp(sourceMicroseconds: 7_004_000, arrivalMicroseconds: Self.created + 400_100) == first + 4_000)
    }

    @Test func lostFramesAndAResumeAfterAnOutageKeepTheOffset() {
        var clock = Self.fresh()
        let first = clock.stamp(sourceMicroseconds: 2_000_000, arrivalMicroseconds: Self.created + 10_000)
        // 2.5 s of frames lost: the next one shows the source's time gone by, not a step.
        let resumed = clock.stamp(sourceMicroseconds: 4_500_000, arrivalMicroseconds: Self.created + 2_510_300)
        #expect(resumed - first == 2_500_000)
        // The backlog of an outage (presses kept for the host) comes in one burst after the newest frame went
        // ahead: each applied in order, at once, each at its own time on the source's clock.
        var stamps: [UInt64] = []
        for (index, source) in [4_600_000, 5_700_000, 6_900_000, 7_000_000].enumerated() {
            stamps.append(clock.stamp(sourceMicroseconds: UInt64(source), arrivalMicroseconds: Self.created + 7_100_000 + UInt64(index)))
        }
        #expect(stamps.map { $0 - first } == [2_600_000, 3_700_000, 4_900_000, 5_000_000])
    }

    @Test func aReconnectWithTheSameClockContinuesItAfterTheGap() {
        // `connect` restarted, or a new session: the pad's clock (the kernel's MSC_TIMESTAMP) ran on meanwhile.
        var clock = Self.fresh()
        let before = clock.stamp(sourceMicroseconds: 900_000_000, arrivalMicroseconds: Self.created + 5_000)
        let after = clock.stamp(sourceMicroseconds: 960_001_234, arrivalMicroseconds: Self.created + 60_007_000)
        #expect(after - before == 60_001_234)
    }

    @Test func aClockThatWentBackIsAnotherSourcesAndContinuesForward() {
        // The pad was plugged in again (its clock starts again near 0), or another machine's pad.
        var clock = Self.fresh()
        let before = clock.stamp(sourceMicroseconds: 900_000_000, arrivalMicroseconds: Self.created + 5_000)
        let after = clock.stamp(sourceMicroseconds: 12_000, arrivalMicroseconds: Self.created + 3_005_000)
        #expect(after - before == 3_000_000, "it goes on by the time that passed")
        // ... and follows the new clock from there with its own offset.
        #expect(clock.stamp(sourceMicroseconds: 16_000, arrivalMicroseconds: Self.created + 3_011_000) == after + 4_000)
        #expect(clock.stamp(sourceMicroseconds: 20_000, arrivalMicroseconds: Self.created + 3_012_000) == after + 8_000)
    }

    @Test func aClockThatLeapsFarAheadOfTimeIsAnotherSources() {
        var clock = Self.fresh()
        let before = clock.stamp(sourceMicroseconds: 5_000_000, arrivalMicroseconds: Self.created + 5_000)
        // An hour further on the source's clock, a second later here: not this clock.
        let after = clock.stamp(sourceMicroseconds: 3_605_000_000, arrivalMicroseconds: Self.created + 1_005_000)
        #expect(after - before == 1_000_000)
        #expect(clock.stamp(sourceMicroseconds: 3_605_004_000, arrivalMicroseconds: Self.created + 1_009_000) == after + 4_000)
    }

    @Test func theKernels32BitMicrosecondCounterWrapsAsItDoes() {
        // MSC_TIMESTAMP is a u32 of µs: it wraps after 71.6 minutes.
        var clock = Self.fresh()
        let sources: [UInt64] = [0xFFFF_F000, 0xFFFF_FC00, 0x0000_0300, 0x0000_1300]
        let stamps = sources.enumerated().map {
            clock.stamp(sourceMicroseconds: $1, arrivalMicroseconds: Self.created + 100_000 + UInt64($0) * 3_000)
        }
        #expect(zip(stamps, stamps.dropFirst()).map { $1 - $0 } == [0xC00, 0x700, 0x1000])
    }

    @Test func aWideClockGoingBackIsNotTakenForAWrap() {
        // Beyond 32 bits (a JSON-lines source's own µs) a smaller value is another clock.
        var clock = Self.fresh()
        let before = clock.stamp(sourceMicroseconds: 90_000_000_000, arrivalMicroseconds: Self.created + 5_000)
        let after = clock.stamp(sourceMicroseconds: 89_999_996_000, arrivalMicroseconds: Self.created + 9_000)
        #expect(after - before == 4_000, "forward by the time that passed, not back by the source's step")
    }

    @Test func aSourceRunningFastByDriftKeepsItsOffsetForHours() {
        // A pad's crystal 200 ppm fast against this machine's clock, one sample a second for 10 hours.
        var clock = Self.fresh()
        var offsets: Set<UInt64> = []
        for second in 0..<36_000 as Range<UInt64> {
            let source = 1_000_000 + second * 1_000_200
            offsets.insert(clock.stamp(sourceMicroseconds: source, arrivalMicroseconds: Self.created + second * 1_000_000) &- source)
        }
        #expect(offsets.count == 1)
    }

    @Test func aFrameWithoutASensorTimeAmidAClocksSamplesIsNoNewSample() {
        var clock = Self.fresh()
        let a = clock.stamp(sourceMicroseconds: 8_000_000, arrivalMicroseconds: Self.created + 1_000)
        #expect(clock.stamp(sourceMicroseconds: 0, arrivalMicroseconds: Self.created + 3_000) == a)
        #expect(clock.stamp(sourceMicroseconds: 8_004_000, arrivalMicroseconds: Self.created + 6_000) == a + 4_000)
    }

    @Test func aReconnectsFirstFrameWithoutASensorTimeKeepsTheOffset() {
        // The link lost for 3 s: the pad shown neutral (the same sample, a heartbeat every 20 ms); then a new
        // `connect` whose first frame is the pad's state read back from the kernel (no MSC_TIMESTAMP), then its
        // samples, the pad's clock having run on.
        var clock = Self.fresh()
        let last = clock.stamp(sourceMicroseconds: 500_000_000, arrivalMicroseconds: Self.created + 7_000)
        for beat in 1...150 as ClosedRange<UInt64> {
            #expect(clock.stamp(sourceMicroseconds: 500_000_000, arrivalMicroseconds: Self.created + 7_000 + beat * 20_000) == last)
        }
        #expect(clock.stamp(sourceMicroseconds: 0, arrivalMicroseconds: Self.created + 3_015_000) == last)
        #expect(clock.stamp(sourceMicroseconds: 503_004_000, arrivalMicroseconds: Self.created + 3_019_000) == last + 3_004_000)
    }

    @Test func aSourceWhoseClockStopsGetsTheTimeReportsGoOutASecondLater() {
        var clock = Self.fresh()
        let a = clock.stamp(sourceMicroseconds: 8_000_000, arrivalMicroseconds: Self.created + 1_000)
        #expect(clock.stamp(sourceMicroseconds: 0, arrivalMicroseconds: Self.created + 500_000) == a)
        #expect(clock.stamp(sourceMicroseconds: 0, arrivalMicroseconds: Self.created + 1_000_999) == a)
        // A second without a sample: from here on the time the reports go out, counted from the last sample's.
        #expect(clock.stamp(sourceMicroseconds: 0, arrivalMicroseconds: Self.created + 1_001_000) == a + 1_000_000)
        #expect(clock.stamp(sourceMicroseconds: 0, arrivalMicroseconds: Self.created + 1_021_000) == a + 1_020_000)
        // A clock again: it continues from there by the time passed, and is followed.
        let b = clock.stamp(sourceMicroseconds: 8_000_000, arrivalMicroseconds: Self.created + 1_031_000)
        #expect(b == a + 1_030_000)
        #expect(clock.stamp(sourceMicroseconds: 8_004_000, arrivalMicroseconds: Self.created + 1_036_000) == b + 4_000)
    }

    // MARK: Properties

    @Test(arguments: 0..<20 as Range<UInt64>)
    func neverBackwardsAndEveryNewSampleMovesOn(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var clock = Self.fresh()
        var arrival = Self.created
        var source: UInt64 = generator.next(upTo: 1 << 33)
        var previous: UInt64?
        var previousSample: (stamp: UInt64, source: UInt64)?
        for _ in 0..<2_000 {
            arrival += generator.next(upTo: 20_000)
            switch generator.next(upTo: 20) {
            case 0: source = 0                                          // no clock
            case 1: source = generator.next(upTo: 1 << 40)               // another clock, anywhere
            case 2: source = (source &+ 0xFFFF_0000) & 0xFFFF_FFFF       // a 32-bit wrap
            case 3: break                                                // the same sample again
            default: source &+= generator.next(upTo: 10_000)
            }
            let stamp = clock.stamp(sourceMicroseconds: source, arrivalMicroseconds: arrival)
            if let previous { #expect(stamp >= previous) }
            if source != 0 {
                if let previousSample, source != previousSample.source { #expect(stamp > previousSample.stamp) }
                previousSample = (stamp, source)
            }
            previous = stamp
        }
    }

    // MARK: Through the report and the kernel

    @Test func hidPlaystationsTimestampsStepAsTheSourcesAcrossTheFieldsWrap() {
        // The field counts 1/3 µs in 32 bits: it wraps every 1,431.66 s, and 2³² is no multiple of 3. The stamps
        // are encoded modulo 2³²; the kernel's steps, taken modulo 2³², come out exact across the wrap.
        var clock = VirtualSensorClock(startingAtMicroseconds: 1_431_000_000, arrivalMicroseconds: Self.created)
        var kernel = KernelMotionTimestamps()
        var timestamps: [UInt32] = []
        var wrapped = false
        var lastTicks: UInt32?
        for k in 0..<400 as Range<UInt64> {
            let stamp = clock.stamp(sourceMicroseconds: 50_000_000 + k * 4_000, arrivalMicroseconds: Self.created + 700 + k * 4_000)
            let ticks = Self.reportTicks(stamp)
            if let lastTicks, ticks < lastTicks { wrapped = true }
            lastTicks = ticks
            timestamps.append(kernel.next(ticks: ticks))
        }
        #expect(wrapped, "the field wrapped during the test")
        #expect(zip(timestamps, timestamps.dropFirst()).allSatisfy { $1 &- $0 == 4_000 })
    }
}

extension SplitMix64 {
    fileprivate mutating func next(upTo bound: UInt64) -> UInt64 { UInt64.random(in: 0..<bound, using: &self) }
}
