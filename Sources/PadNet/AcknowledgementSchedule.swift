import PadCore

/// When the host acknowledges a client's frames that came without anything else to answer. Acknowledging costs
/// nothing on a frame's own path (it goes from the host's timer) and one acknowledgement covers a burst:
/// - asked for (a press, a release, a touch, or frames sent again), or an isolated change (nothing owed and nothing
///   sent to the client for `LinkLiveness.isolatedInputQuietMicroseconds`: not a stream): at the end of this wake
///   (`LinkLiveness.requestedAcknowledgementMicroseconds`);
/// - a stream of stick or motion frames that did not ask: once it pauses
///   (`LinkLiveness.delayedAcknowledgementMicroseconds` after its last frame), and never later than
///   `LinkLiveness.longestAcknowledgementDelayMicroseconds` after its first unacknowledged frame (a stream that never
///   pauses for 1 ms, two pads at 1 kHz, must still be answered, or the client takes the link for lost).
/// Any message sent to the client carries every acknowledgement, and clears the schedule (`sent()`).
struct AcknowledgementSchedule {
    /// When the acknowledgement owed is due; nil when none is owed.
    private(set) var dueMicroseconds: UInt64?
    /// Whether the one due goes at the end of the wake (asked for, or an isolated change): then frames that did not
    /// ask do not put it off.
    private var requested = false
    /// When the first frame the acknowledgement due covers came.
    private var owedSinceMicroseconds: UInt64?

    init() {}

    /// Frames came at `time` with nothing else to answer; `wantsAcknowledgement` as their message says;
    /// `lastSentMicroseconds`: when the host last sent anything to this client.
    @inline(__always)
    mutating func framesCame(atMicroseconds time: UInt64, wantsAcknowledgement: Bool, lastSentMicroseconds: UInt64) {
        let isolated = owedSinceMicroseconds == nil
            && time >= lastSentMicroseconds + LinkLiveness.isolatedInputQuietMicroseconds
        let atOnce = wantsAcknowledgement || isolated
        let delay = atOnce
            ? LinkLiveness.requestedAcknowledgementMicroseconds : LinkLiveness.delayedAcknowledgementMicroseconds
        let owedSince = owedSinceMicroseconds ?? time
        owedSinceMicroseconds = owedSince
        let due = min(time + delay, owedSince + LinkLiveness.longestAcknowledgementDelayMicroseconds)
        if atOnce {
            dueMicroseconds = min(dueMicroseconds ?? due, due)
            requested = true
        } else if !requested {
            dueMicroseconds = due
        }
    }

    /// Whether the acknowledgement owed is due at `time`.
    func isDue(atMicroseconds time: UInt64) -> Bool { dueMicroseconds.map { time >= $0 } ?? false }

    /// A message went to the client: it acknowledged everything received.
    mutating func sent() {
        dueMicroseconds = nil
        requested = false
        owedSinceMicroseconds = nil
    }
}
