/// The pure state machine between feedback requests and one physical pad's output writes.
///
/// Requests (`submit`) are partial updates; the drain keeps the latest wanted value of each field, and `takeWrite`
/// hands out only the fields that differ from what the pad was last sent, at most once per pacing interval. Time is
/// the caller's monotonic clock in nanoseconds; the drain never reads a clock and owns no timer: after `submit` the
/// caller calls `takeWrite(now:)`, and when that returns nil it arms a one-shot timer at `nextDeadline` and calls
/// `takeWrite` again when it fires.
///
/// Guarantees, for a caller that does so:
/// - a change whose pacing interval has already elapsed goes out at once (an idle pad answers immediately);
/// - no change waits longer than one pacing interval;
/// - writes are at least one pacing interval apart (except `closingWrite`, which ignores pacing);
/// - a write never repeats a value the pad already has, so setting the lightbar never re-sends or stops the rumble.
///
/// Coalescing means an intermediate value that is overtaken within one interval is never written; likewise a timed
/// rumble whose whole duration falls inside one paced interval is never written (it would be overtaken by its own
/// stop). Durations shorter than the interval are below what a rumble motor can render anyway.
public struct FeedbackDrain: Sendable {
    /// 10 ms. Under one 60 Hz frame (16.7 ms), so no change waits longer than the frame in which the game made it,
    /// and below what a person notices in a rumble motor (which needs tens of milliseconds to spin up) or an LED.
    /// At most ~100 writes/s: a 78-byte DualSense Bluetooth output report at that rate is ~62 kbit/s, a small
    /// fraction of a Bluetooth Classic link, so pacing never starves the pad's input reports on the same link,
    /// while a game that sets rumble every frame or in a tight loop no longer floods it.
    public static let defaultPacingIntervalNanoseconds: UInt64 = 10_000_000

    /// The parts the pad has; requests for others are dropped.
    private let supported: FeedbackParts
    private let pacingIntervalNanoseconds: UInt64
    /// What the pad showed before the drain touched it (restricted to `supported`).
    private let initial: Feedback

    /// The latest requested value of each field (nil = never requested).
    private var wanted = Feedback()
    /// The last full state written to the pad (each field as last written; nil = never touched).
    public private(set) var written = Feedback()
    /// When the last write was handed out; nil before the first.
    private var lastWriteAt: UInt64?
    /// What `written` was before the last write was handed out: what the pad shows if that write failed.
    private var writtenBeforeLastWrite = Feedback()
    /// Writes reported failed in a row (`writeFailed`), and the earliest time of the next try after them.
    private var failuresInARow = 0
    private var lastWriteFailed = false
    private var retryAt: UInt64?
    /// When the wanted rumble stops, if it was requested with a duration.
    private var rumbleExpiry: UInt64?
    /// A non-off rumble was written at some point.
    private var rumbleWasWritten = false
    private var droppedEver: FeedbackParts = []
    private var droppedUnreported: FeedbackParts = []
    private var isClosed = false

    /// `restoring`: what the pad showed before (read from the device where possible, e.g. lightbar and player
    /// LEDs); the closing write puts those back.
    public init(
        supported: FeedbackParts, pacingIntervalNanoseconds: UInt64 = FeedbackDrain.defaultPacingIntervalNanoseconds,
        restoring initial: Feedback = Feedback()
    ) {
        self.supported = supported
        self.pacingIntervalNanoseconds = pacingIntervalNanoseconds
        self.initial = initial.restricted(to: supported)
    }

    /// Accepts a request at `now`. Unsupported parts are dropped (remembered for `takeNewlyDropped`). Latest value
    /// of each field wins (coalescing). If `rumbleDurationNanoseconds` is set and the request sets a non-off rumble,
    /// that rumble stops (becomes `.off`) at `now + duration` unless a later rumble request replaces it first.
    /// Ignored after `closingWrite`.
    public mutating func submit(_ request: Feedback, rumbleDurationNanoseconds: UInt64? = nil, now: UInt64) {
        guard !isClosed else { return }
        let unsupported = FeedbackParts(of: request).subtracting(supported)
        droppedUnreported.formUnion(unsupported.subtracting(droppedEver))
        droppedEver.formUnion(unsupported)

        applyDueExpiry(now: now)
        let accepted = request.restricted(to: supported)
        if let rumble = accepted.rumble {
            // Any rumble request replaces the previous one, and with it the previous one's stop time.
            rumbleExpiry = rumble.isOff ? nil : rumbleDurationNanoseconds.map { FeedbackDrain.add(now, $0) }
        }
        wanted.merge(accepted)
    }

    /// The fields to write now — only those whose wanted value differs from what was last written — or nil if
    /// nothing is due, or if the previous write was less than one pacing interval ago (then `nextDeadline` says
    /// when). Marks the result as written at `now`. Also applies due rumble expiries.
    public mutating func takeWrite(now: UInt64) -> Feedback? {
        guard !isClosed else { return nil }
        applyDueExpiry(now: now)
        let changes = wanted.changes(from: written)
        guard !changes.isEmpty, now >= earliestWrite else { return nil }
        // The previous write was not reported failed: it went through, and a streak of failures is over.
        if !lastWriteFailed { failuresInARow = 0 }
        lastWriteFailed = false
        retryAt = nil
        writtenBeforeLastWrite = written
        written.merge(changes)
        lastWriteAt = now
        if let rumble = changes.rumble, !rumble.isOff { rumbleWasWritten = true }
        return changes
    }

    /// When to call `takeWrite` next: the end of the pacing interval when something is pending, or the next rumble
    /// expiry, whichever is first; nil when nothing is pending. May be at or before the caller's current time: then
    /// call `takeWrite` at once.
    public var nextDeadline: UInt64? {
        guard !isClosed else { return nil }
        let pacing: UInt64? = wanted.changes(from: written).isEmpty ? nil : earliestWrite
        switch (pacing, rumbleExpiry) {
        case let (pacing?, expiry?): return min(pacing, expiry)
        case let (pacing, expiry): return pacing ?? expiry
        }
    }

    /// The longest wait before writing again after failed writes: a second.
    public static let longestRetryNanoseconds: UInt64 = 1_000_000_000

    /// The write last handed out by `takeWrite` did not reach the pad (a write error that is not the pad going away:
    /// a USB stall, a Bluetooth timeout). The pad is taken to show what it showed before, so the same fields are
    /// written again (with any change made meanwhile), after the pacing interval, doubled for each failure in a row
    /// up to `longestRetryNanoseconds`.
    public mutating func writeFailed(now: UInt64) {
        guard !isClosed, !lastWriteFailed, lastWriteAt != nil else { return }
        lastWriteFailed = true
        failuresInARow += 1
        written = writtenBeforeLastWrite
        let doublings = UInt64(min(failuresInARow - 1, 16))
        let wait = min(max(pacingIntervalNanoseconds, 1) << doublings, max(Self.longestRetryNanoseconds, pacingIntervalNanoseconds))
        retryAt = FeedbackDrain.add(now, wait)
    }

    /// The write that leaves the pad quiet when the drain closes (exit, signal, unplug of the virtual side): rumble
    /// off if a non-off rumble was ever written, both triggers `.off` if they were ever written, lightbar / player
    /// LEDs / mic LED back to `initial` where the drain changed them and `initial` knows them. Ignores pacing.
    /// Returns nil if nothing needs writing. After it the drain accepts nothing more.
    public mutating func closingWrite() -> Feedback? {
        guard !isClosed else { return nil }
        isClosed = true
        rumbleExpiry = nil

        var closing = Feedback()
        if rumbleWasWritten { closing.rumble = .off }
        if written.leftTrigger != nil { closing.leftTrigger = .off }
        if written.rightTrigger != nil { closing.rightTrigger = .off }
        if let shown = written.lightbar, let before = initial.lightbar, shown != before { closing.lightbar = before }
        if let shown = written.playerLeds, let before = initial.playerLeds, shown != before {
            closing.playerLeds = before
        }
        if let shown = written.micLed, let before = initial.micLed, shown != before { closing.micLed = before }
        guard !closing.isEmpty else { return nil }
        written.merge(closing)
        return closing
    }

    /// Parts requested but unsupported since the last call, each reported once over the drain's life (for one
    /// debug log line).
    public mutating func takeNewlyDropped() -> FeedbackParts {
        defer { droppedUnreported = [] }
        return droppedUnreported
    }

    // MARK: Internals

    /// The first time at which pacing (or the back-off after a failed write) allows a write.
    private var earliestWrite: UInt64 {
        let paced = lastWriteAt.map { FeedbackDrain.add($0, pacingIntervalNanoseconds) } ?? 0
        return max(paced, retryAt ?? 0)
    }

    private mutating func applyDueExpiry(now: UInt64) {
        guard let expiry = rumbleExpiry, now >= expiry else { return }
        wanted.rumble = .off
        rumbleExpiry = nil
    }

    /// Saturating: a clock near `UInt64.max` must not trap.
    private static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
