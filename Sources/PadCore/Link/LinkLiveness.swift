/// The link's timing, for one peer: when to send a keepalive, when the link counts as lost, how long to wait
/// before sending unacknowledged input or feedback again (from the measured round trip), and when the loop must wake
/// next. Pure: every time is passed in (µs on one monotonic clock), so it is tested with a fake clock.
public struct LinkLiveness: Sendable {
    /// With nothing else to send, a keepalive goes out this long after the last datagram sent.
    public static let keepaliveIntervalMicroseconds: UInt64 = 100_000
    /// With nothing heard for this long, the link is lost: the host's pads go neutral, the client's rumble stops.
    public static let timeoutMicroseconds: UInt64 = 400_000
    /// A client that sends all the time (a stream of frames: no keepalive is ever due) still puts a ping in a
    /// datagram this often, so that the round trip and both sides' loss figures stay current.
    public static let streamPingIntervalMicroseconds: UInt64 = 1_000_000
    /// With nothing heard for this long, keepalives go out faster (every `probeIntervalMicroseconds`): a few lost
    /// datagrams in a row on a lossy link must not look like a lost link, and an idle link stays at 10 a second.
    public static let quietMicroseconds: UInt64 = 150_000
    public static let probeIntervalMicroseconds: UInt64 = 25_000
    /// Unacknowledged input or feedback is sent again after 1.5 x the smoothed round trip, within these bounds.
    public static let minimumRetransmitMicroseconds: UInt64 = 5_000
    public static let maximumRetransmitMicroseconds: UInt64 = 50_000
    /// After a datagram with a new frame, up to `quickCopies` copies follow this far apart while it is not
    /// acknowledged: on a link whose round trip is longer than that, a lost datagram is then made up for in a few
    /// milliseconds instead of a retransmission interval. A stream of frames (one a millisecond) sends no copies
    /// (each frame comes sooner), nor does a link that acknowledges sooner (a LAN).
    public static let quickCopyIntervalMicroseconds: UInt64 = 2_000
    public static let quickCopies = 2
    /// The host acknowledges input it was not asked to acknowledge (a stick's or a gyro's frames) once this long has
    /// passed without more (a delayed acknowledgement, as TCP's): one per burst, not one per frame, and before the
    /// client's first quick copy is due on a LAN.
    public static let delayedAcknowledgementMicroseconds: UInt64 = 1_000
    /// ... but never later than this after the first frame it acknowledges came: a stream with no pause of
    /// `delayedAcknowledgementMicroseconds` (two pads at 1 kHz, or a host working through a backlog) still hears
    /// from the host 20 times a second, far within `timeoutMicroseconds` and before the client's probing starts
    /// (`quietMicroseconds`).
    public static let longestAcknowledgementDelayMicroseconds: UInt64 = 50_000
    /// The host acknowledges input the client asked it to (a press, a release, a touch, frames sent again) this long
    /// after it came: at once, which is from its timer at the end of the wake it came in (the loop fires a timer due
    /// at its clock after that wake's handlers), so never on the frame's own path, shared by every datagram of that
    /// wake, and without a wake of its own; back well before the client's first quick copy is due on a LAN.
    public static let requestedAcknowledgementMicroseconds: UInt64 = 0
    /// Input that comes when nothing is owed and nothing went to the client for this long is an isolated change (a
    /// stick moved once, not a stream): acknowledged as if asked, at the end of its wake, rather than 1 ms later in
    /// a wake of its own. A stream's frames come while an acknowledgement is owed, or just after one went.
    public static let isolatedInputQuietMicroseconds: UInt64 = 10_000
    /// For a peer that counts silence only while it sends (`countsSilenceOnlyWhileSending`, the client, whose
    /// datagrams are what the host answers): a pause in its own sending longer than this means it was not running
    /// (stopped, SIGSTOP, or starved of CPU; running, it sends at least every `keepaliveIntervalMicroseconds`), so
    /// silence before its next datagram says nothing about the link.
    public static let sendingPauseMicroseconds: UInt64 = 200_000

    public private(set) var lastHeardMicroseconds: UInt64
    public private(set) var lastSentMicroseconds: UInt64
    /// When this peer's sending last started again after a pause longer than `sendingPauseMicroseconds`.
    public private(set) var sendingSinceMicroseconds: UInt64
    /// Whether silence counts towards a lost link only while this peer sends: true for the client (the host only
    /// answers, so a client that sent nothing heard nothing, and a client that was not running for a while must not
    /// take that for a lost link on its first wake); false for the host, which counts any silence of the client.
    public let countsSilenceOnlyWhileSending: Bool
    /// RFC 6298's smoothed round trip and its variation; nil before the first sample.
    public private(set) var smoothedRoundTripMicroseconds: UInt64?
    public private(set) var roundTripVariationMicroseconds: UInt64 = 0
    /// Copies still to send of the newest input datagram (see `quickCopies`).
    public private(set) var quickCopiesLeft = 0

    public init(startingAtMicroseconds now: UInt64, countsSilenceOnlyWhileSending: Bool = false) {
        lastHeardMicroseconds = now
        lastSentMicroseconds = now
        sendingSinceMicroseconds = now
        self.countsSilenceOnlyWhileSending = countsSilenceOnlyWhileSending
    }

    public mutating func heard(atMicroseconds now: UInt64) { lastHeardMicroseconds = max(lastHeardMicroseconds, now) }
    public mutating func sent(atMicroseconds now: UInt64) {
        if now > lastSentMicroseconds &+ Self.sendingPauseMicroseconds { sendingSinceMicroseconds = now }
        lastSentMicroseconds = max(lastSentMicroseconds, now)
    }

    /// A round-trip sample (a pong's echo).
    public mutating func roundTrip(_ sample: UInt64) {
        guard let smoothed = smoothedRoundTripMicroseconds else {
            smoothedRoundTripMicroseconds = sample
            roundTripVariationMicroseconds = sample / 2
            return
        }
        let difference = smoothed > sample ? smoothed - sample : sample - smoothed
        roundTripVariationMicroseconds = (3 * roundTripVariationMicroseconds + difference) / 4
        smoothedRoundTripMicroseconds = (7 * smoothed + sample) / 8
    }

    /// A datagram with a new frame went out (after `sent`): its quick copies are due from now on.
    public mutating func sentNewInput() { quickCopiesLeft = Self.quickCopies }

    /// Whether a quick copy of the newest input is due (while it is unacknowledged).
    public func isQuickCopyDue(atMicroseconds now: UInt64, hasUnacknowledged: Bool) -> Bool {
        hasUnacknowledged && quickCopiesLeft > 0 && now >= lastSentMicroseconds &+ Self.quickCopyIntervalMicroseconds
    }

    /// What the quick copies were for was acknowledged: none is due any more.
    public mutating func cancelQuickCopies() { quickCopiesLeft = 0 }

    /// A quick copy went out (after `sent`).
    public mutating func sentQuickCopy() { quickCopiesLeft = max(0, quickCopiesLeft - 1) }

    /// Nothing heard for `timeoutMicroseconds`; for a peer that counts silence only while it sends, nothing heard
    /// for that long *while it sent* (its sending not paused longer than `sendingPauseMicroseconds` since then).
    public func isLost(atMicroseconds now: UInt64) -> Bool {
        guard countsSilenceOnlyWhileSending else { return now >= lastHeardMicroseconds &+ Self.timeoutMicroseconds }
        return now <= lastSentMicroseconds &+ Self.sendingPauseMicroseconds && now >= lossCheckMicroseconds
    }

    /// When the link counts as lost if nothing is heard (and, for a peer that counts silence only while it sends, it
    /// goes on sending).
    public var lossCheckMicroseconds: UInt64 {
        (countsSilenceOnlyWhileSending ? max(lastHeardMicroseconds, sendingSinceMicroseconds) : lastHeardMicroseconds)
            &+ Self.timeoutMicroseconds
    }

    public func isKeepaliveDue(atMicroseconds now: UInt64) -> Bool {
        now >= nextKeepaliveMicroseconds
    }

    /// Every 100 ms of sending nothing; every 25 ms once nothing has been heard for 150 ms.
    public var nextKeepaliveMicroseconds: UInt64 {
        let regular = lastSentMicroseconds &+ Self.keepaliveIntervalMicroseconds
        let probing = max(lastHeardMicroseconds &+ Self.quietMicroseconds, lastSentMicroseconds &+ Self.probeIntervalMicroseconds)
        return min(regular, probing)
    }

    public var retransmitIntervalMicroseconds: UInt64 {
        let smoothed = smoothedRoundTripMicroseconds ?? 20_000
        return min(max(smoothed * 3 / 2, Self.minimumRetransmitMicroseconds), Self.maximumRetransmitMicroseconds)
    }

    /// When the loop must wake next: for a keepalive, for the link-lost check, and (while something is
    /// unacknowledged) to send it again.
    public func nextWakeMicroseconds(hasUnacknowledged: Bool) -> UInt64 {
        var wake = min(nextKeepaliveMicroseconds, lossCheckMicroseconds)
        if hasUnacknowledged {
            let resend = quickCopiesLeft > 0 ? Self.quickCopyIntervalMicroseconds : retransmitIntervalMicroseconds
            wake = min(wake, lastSentMicroseconds &+ resend)
        }
        return wake
    }
}

/// How long a session's keys are used (WireGuard's timers): the client makes a new session after
/// `rekeyAfterMicroseconds`, trying again every `rekeyTimeoutMicroseconds` until the host answers, and the host opens
/// nothing with a session older than `rejectAfterMicroseconds`. Renewal is invisible: the old session works until the
/// new one carries the first datagram.
public enum LinkSessionLifetime {
    public static let rekeyAfterMicroseconds: UInt64 = 120_000_000
    public static let rekeyTimeoutMicroseconds: UInt64 = 5_000_000
    public static let rejectAfterMicroseconds: UInt64 = 180_000_000
}

/// How long a client waits before trying to reach a lost host again: 100 ms, doubling to 2 s, each wait shortened
/// by up to a quarter at random (the caller's `jitter`, 0...1) so that many clients do not retry in step.
public struct ReconnectBackoff: Sendable {
    public static let firstMicroseconds: UInt64 = 100_000
    public static let longestMicroseconds: UInt64 = 2_000_000
    private var attempt = 0

    public init() {}

    public mutating func nextDelayMicroseconds(jitter: Double) -> UInt64 {
        let base = min(Self.firstMicroseconds << UInt64(min(attempt, 20)), Self.longestMicroseconds)
        attempt += 1
        let fraction = jitter.isFinite ? min(max(jitter, 0), 1) : 0
        return base - UInt64(Double(base) * 0.25 * fraction)
    }

    /// The host answered: the next loss starts from the shortest wait again.
    public mutating func reset() { attempt = 0 }
}
