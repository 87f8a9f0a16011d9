public import PadLinux

/// How a command that shows virtual pads ends: the first request releases every input (`release`), keeps serving
/// the pads for a grace period, so readers see the release before the nodes go, then stops the loop. The release
/// and its grace happen once: later requests (end of input right after Ctrl-C, a second signal) change nothing, and
/// the grace is short. Loop-confined.
public final class ReleaseThenStop {
    /// How long the released state stays visible before the pads are destroyed: a few frames of a game that polls
    /// state, and ample for an event reader to drain its queue (an evdev node that is gone drops what was queued).
    public static let defaultGraceMilliseconds: UInt64 = 100

    private let loop: DeviceEventLoop
    private let graceMilliseconds: UInt64
    private let release: () -> Bool
    private var grace: LoopDeadline?
    private var requested = false

    /// `release` shows the released state and returns whether it could (if not, the loop stops at once).
    public init(loop: DeviceEventLoop, graceMilliseconds: UInt64 = defaultGraceMilliseconds, release: @escaping () -> Bool) {
        self.loop = loop
        self.graceMilliseconds = graceMilliseconds
        self.release = release
    }

    /// Whether shutting down has begun.
    public var isShuttingDown: Bool { requested }

    public func request() {
        guard !requested else { return }
        requested = true
        guard release() else { return loop.stop() }
        grace = loop.deadline(afterMilliseconds: graceMilliseconds) { [loop] in loop.stop() }
    }
}

/// Waits for a burst of udev events to end before acting: a pad's nodes appear (and go) one by one, so `action`
/// runs once the events have been quiet for `milliseconds`, and sees the pad complete. One timer, re-armed per
/// event. Loop-confined.
public final class HotplugSettle {
    /// Long enough for a DualSense's four nodes, short enough not to be noticed.
    public static let defaultMilliseconds: UInt64 = 150

    private let milliseconds: UInt64
    private var timer: LoopTimer?

    public init(loop: DeviceEventLoop, milliseconds: UInt64 = defaultMilliseconds, action: @escaping () -> Void) throws(DeviceAccessError) {
        self.milliseconds = milliseconds
        timer = loop.makeTimer { action() }
    }

    /// An event came: act `milliseconds` after the last one.
    public func noteEvent() {
        timer?.schedule(at: MonotonicInstant.now().adding(milliseconds: milliseconds))
    }

    public func cancel() {
        timer?.close()
        timer = nil
    }

    deinit { timer?.close() }
}
