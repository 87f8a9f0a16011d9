public import Logging
public import PadCore

/// Runs a `FeedbackDrain` against a physical pad on the device loop: submits requests, writes what the drain says
/// is due, and arms one timer at the drain's next deadline (pacing, rumble durations). Loop-confined.
///
/// A `.gone` error from the sink ends the drain cleanly (an info line, `onEnded(nil)`). Any other write error (a
/// USB stall's EPIPE, a Bluetooth ETIMEDOUT: the pad is still there) is, by default, said once per streak and the
/// same fields are written again after a back-off (`FeedbackDrain.writeFailed`); with `onWriteError: .end` (a one-shot
/// command) it ends the drain with `onEnded(error)`. After the end, submissions are ignored.
public final class FeedbackDrainRunner {
    /// What a write error that is not the pad going away does.
    public enum WriteErrorPolicy: Sendable {
        /// Write the same fields again later (a pad's feedback for a whole session).
        case retry
        /// End the drain with the error (a one-shot command that reports it).
        case end
    }

    private var drain: FeedbackDrain
    private let sink: any PhysicalFeedbackSink
    private let logger: Logger
    private var timer: LoopTimer?
    private var ended = false
    private let onEnded: (DeviceAccessError?) -> Void
    private let writeErrorPolicy: WriteErrorPolicy
    /// Failed writes since the last one that went through (the first of a streak is logged, and its end).
    private var failedWrites = 0

    /// Called after every write pass that leaves the drain with nothing scheduled (no pacing, no rumble running
    /// out): the moment a one-shot command may exit.
    public var onIdle: (() -> Void)?

    /// Called with each feedback state written to the pad (what reached it, after pacing and translation).
    public var onWritten: ((Feedback) -> Void)?

    public init(
        sink: any PhysicalFeedbackSink, restoring initial: Feedback, loop: DeviceEventLoop, logger: Logger,
        pacingIntervalNanoseconds: UInt64 = FeedbackDrain.defaultPacingIntervalNanoseconds,
        onWriteError: WriteErrorPolicy = .retry, onEnded: @escaping (DeviceAccessError?) -> Void
    ) throws(DeviceAccessError) {
        self.sink = sink
        self.logger = logger
        self.onEnded = onEnded
        writeErrorPolicy = onWriteError
        drain = FeedbackDrain(
            supported: sink.supported, pacingIntervalNanoseconds: pacingIntervalNanoseconds, restoring: initial)
        timer = loop.makeTimer { [weak self] () throws(DeviceAccessError) in self?.pump() }
    }

    /// True once the pad went away or a write failed.
    public var hasEnded: Bool { ended }

    /// Whether the drain has nothing left to do (nothing paced, no rumble timing out).
    public var isIdle: Bool { ended || drain.nextDeadline == nil }

    /// Submits `feedback`; a rumble with `rumbleDurationMilliseconds` stops by itself after that long.
    public func submit(_ feedback: Feedback, rumbleDurationMilliseconds: UInt64? = nil) {
        guard !ended else { return }
        drain.submit(
            feedback, rumbleDurationNanoseconds: rumbleDurationMilliseconds.map { $0 * 1_000_000 },
            now: MonotonicInstant.now().nanoseconds)
        pump()
    }

    /// The closing write: quiet pad (rumble off, triggers off), lightbar and player LEDs restored. Then releases the
    /// timer and the sink. Idempotent.
    public func close() {
        timer?.close()
        timer = nil
        if !ended, let closing = drain.closingWrite() {
            write(closing)
        }
        ended = true
        sink.close()
    }

    /// Writes rumble off at once, ignoring pacing, if the pad was last sent a running rumble. For a command that
    /// exits without a closing write (one-shot mode keeps lightbar, LEDs and triggers as set).
    public func stopRumbleNow() {
        guard !ended, let rumble = drain.written.rumble, !rumble.isOff else { return }
        write(Feedback(rumble: .off))
    }

    private func pump() {
        guard !ended else { return }
        var now = MonotonicInstant.now().nanoseconds
        // A deadline already due means "take again now" (bounded: the drain's deadlines move forward as it writes).
        for _ in 0..<4 {
            if let feedback = drain.takeWrite(now: now) { write(feedback, failing: { drain.writeFailed(now: now) }) }
            guard !ended else { return }
            guard let deadline = drain.nextDeadline, deadline <= now else { break }
            now = MonotonicInstant.now().nanoseconds
        }
        logDropped()
        if let deadline = drain.nextDeadline {
            // Never arm at or before now (the drain's deadlines move forward as it writes).
            timer?.schedule(at: MonotonicInstant(nanoseconds: max(deadline, now &+ 1)))
        } else {
            timer?.cancel()
            onIdle?()
        }
    }

    /// Writes `feedback`; a write error that is not the pad going away calls `failing` (under `.retry`).
    private func write(_ feedback: Feedback, failing: () -> Void = {}) {
        do {
            logger.trace("writing feedback \(feedback.events)")
            try sink.write(feedback)
            if failedWrites > 0 {
                logger.notice("feedback reaches the pad again (after \(failedWrites) failed write(s))")
                failedWrites = 0
            }
            onWritten?(feedback)
        } catch where error.code == .gone || writeErrorPolicy == .end {
            end(error)
        } catch {
            failedWrites += 1
            if failedWrites == 1 { logger.warning("a feedback write failed; writing it again shortly: \(error)") }
            failing()
        }
    }

    private func logDropped() {
        let dropped = drain.takeNewlyDropped()
        guard !dropped.isEmpty else { return }
        logger.debug("this pad has no \(Self.names(dropped).joined(separator: ", ")): ignoring them")
    }

    private func end(_ error: DeviceAccessError) {
        guard !ended else { return }
        ended = true
        timer?.close()
        timer = nil
        if error.code == .gone {
            logger.info("the pad went away (\(error.path)): feedback stopped", metadata: ["event": "padWentAway", "node": "\(error.path)"])
            onEnded(nil)
        } else {
            logger.error("feedback stopped: \(error)")
            onEnded(error)
        }
    }

    /// The parts as a person names them ("rumble", "lightbar", "player LEDs", ...).
    public static func names(_ parts: FeedbackParts) -> [String] {
        let table: [(FeedbackParts, String)] = [
            (.rumble, "rumble"), (.lightbar, "lightbar"), (.playerLeds, "player LEDs"), (.micLed, "mic LED"),
            (.leftTrigger, "left adaptive trigger"), (.rightTrigger, "right adaptive trigger"),
        ]
        return table.filter { parts.contains($0.0) }.map(\.1)
    }
}
