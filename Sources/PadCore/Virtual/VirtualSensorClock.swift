/// The sensor clock a virtual pad reports: a DualSense's report field, which hid-playstation turns into the motion
/// node's MSC_TIMESTAMP and SDL reads from hidraw. Games and Steam integrate gyro by it, so it carries the source's
/// own sensor clock rather than the time each frame reached this machine (network jitter would go into every step).
///
/// - A sample from a source with a sensor clock (`MotionSample.timestampMicroseconds` not 0) is stamped with the
///   source's time plus an offset fixed by the first sample of that source clock: every step is the source's step,
///   across lost frames, a backlog applied at once, a link lost and resumed, or a new `connect` (the pad's clock ran
///   on meanwhile). The same sample shown again (a heartbeat, going neutral, a resume) keeps its stamp.
/// - The source's clock may be the kernel's 32-bit MSC_TIMESTAMP, which wraps after 71.6 minutes: a smaller value
///   below 2³² whose step across the wrap is plausible is that wrap.
/// - Another source clock (the pad plugged in again, a different machine: its clock went back, or leapt further ahead
///   of the time its frames arrive than any frame of the clock before) starts a new offset: the stamps go on from
///   the last one by the time that passed here. They never go back, and a new sample never repeats a stamp.
/// - A source without a sensor clock (an Xbox pad, `virtual` without timestamps: 0) is stamped with the time its
///   reports go out, as the clock has run since the virtual pad was made. A frame without one amid a clock's
///   samples is no new sample and keeps the last stamp (a client's first frame after a reconnect or a replug: the
///   kernel keeps no MSC_TIMESTAMP to read back), so the clock's next sample continues with its offset; only after
///   `clockLostAfterMicroseconds` without a sample is the source taken to have no clock, and the stamps go on from
///   the last sample's by the time since it.
///
/// Pure: the caller passes the monotonic time (µs). The stamp is a 64-bit count of µs; the report's field keeps
/// what it holds (the DualSense's 32 bits of 1/3 µs wrap as the hardware's do, and the kernel's steps across that
/// wrap come out exact).
public struct VirtualSensorClock: Sendable {
    /// How much sooner, against this machine's clock, a frame may arrive than the least delayed frame of its source
    /// clock so far before its clock is taken for another one. Generous: the delay of frames varies by milliseconds
    /// on a network; a pad's crystal drifting against this machine's is absorbed as it goes.
    public static let aheadToleranceMicroseconds: Int64 = 1_000_000
    /// How long frames without a sensor time may follow a clock's samples before the source counts as one without a
    /// clock.
    public static let clockLostAfterMicroseconds: UInt64 = 1_000_000

    /// The stamp last given, in microseconds.
    public private(set) var microseconds: UInt64
    /// When the last report that moved the clock or showed a clock's sample went out.
    private var lastArrivalMicroseconds: UInt64
    /// The source clock followed, nil while the source has none.
    private var source: SourceClock?

    private struct SourceClock {
        /// The source's last timestamp as it sent it.
        var lastMicroseconds: UInt64
        /// The same on a continuous scale (the 32-bit wraps counted in).
        var position: UInt64
        /// Stamp = position + offset (modulo 2⁶⁴).
        let offset: UInt64
        /// The least (arrival − position) seen: the earliest a frame of this clock has come.
        var leastDelay: Int64

        /// Where `timestamp` lies on the continuous scale, if it can be this clock's next value: the same or later,
        /// or smaller after a 32-bit wrap.
        func position(of timestamp: UInt64) -> UInt64? {
            if timestamp >= lastMicroseconds { return position &+ (timestamp - lastMicroseconds) }
            guard lastMicroseconds <= UInt64(UInt32.max) else { return nil }
            return position &+ ((1 << 32) - lastMicroseconds + timestamp)
        }

        static func delay(arrival: UInt64, position: UInt64) -> Int64 { Int64(bitPattern: arrival &- position) }
    }

    /// A clock that stands at `microseconds` at monotonic time `arrivalMicroseconds`.
    public init(startingAtMicroseconds microseconds: UInt64, arrivalMicroseconds: UInt64) {
        self.microseconds = microseconds
        lastArrivalMicroseconds = arrivalMicroseconds
    }

    /// The stamp for a report that goes out at monotonic time `arrivalMicroseconds` showing a sample stamped
    /// `sourceMicroseconds` by its source's sensor clock (0: the source has none).
    public mutating func stamp(sourceMicroseconds timestamp: UInt64, arrivalMicroseconds arrival: UInt64) -> UInt64 {
        let elapsed = arrival > lastArrivalMicroseconds ? arrival - lastArrivalMicroseconds : 0
        if timestamp == 0 {
            if source != nil && elapsed < Self.clockLostAfterMicroseconds { return microseconds }
            source = nil
            lastArrivalMicroseconds = max(lastArrivalMicroseconds, arrival)
            microseconds &+= elapsed
            return microseconds
        }
        lastArrivalMicroseconds = max(lastArrivalMicroseconds, arrival)
        if var clock = source, let position = clock.position(of: timestamp) {
            let delay = SourceClock.delay(arrival: arrival, position: position)
            if delay >= clock.leastDelay &- Self.aheadToleranceMicroseconds {
                clock.leastDelay = min(clock.leastDelay, delay)
                clock.lastMicroseconds = timestamp
                clock.position = position
                source = clock
                microseconds = position &+ clock.offset
                return microseconds
            }
        }
        // The first sample of a source clock: it starts where this clock has got to by now.
        microseconds &+= max(elapsed, 1)
        source = SourceClock(
            lastMicroseconds: timestamp, position: timestamp, offset: microseconds &- timestamp,
            leastDelay: SourceClock.delay(arrival: arrival, position: timestamp))
        return microseconds
    }
}
