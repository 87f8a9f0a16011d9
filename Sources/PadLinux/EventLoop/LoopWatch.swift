import SystemPackage

/// A watch on a descriptor (`DeviceEventLoop.makeWatch`, or `watch(_:onChange:)` for a udev monitor): its handler
/// runs on the loop thread while the watch lives, and the watch leaves the loop when dropped or cancelled, as a
/// `LoopDeadline` does. It may keep what it watches alive (and so its descriptor open) until then.
///
/// The owner of the descriptor removes the watch (or drops it) before it closes the descriptor: epoll would
/// otherwise be told to remove a descriptor number that may already name another file. So an owner whose `deinit`
/// closes the descriptor calls `cancel()` there first, rather than rely on the order stored properties are destroyed.
///
/// Not Sendable: the loop's thread only. Holds its loop weakly (a loop gone has no watches left to remove).
public final class LoopWatch {
    private weak var loop: DeviceEventLoop?
    /// The registration; a removed one is simply ignored by the loop.
    let token: DeviceEventLoop.WatchToken
    /// What the handler reads from, kept alive until the watch ends.
    private var watched: AnyObject?

    init(loop: DeviceEventLoop, token: DeviceEventLoop.WatchToken, watched: AnyObject? = nil) {
        self.loop = loop
        self.token = token
        self.watched = watched
    }

    /// Whether the watch is still registered (not removed, loop not gone).
    public var isActive: Bool { loop?.isWatching(token) ?? false }

    /// Changes what the watch waits for.
    public func update(events: DeviceEventLoop.WatchedEvents) throws(DeviceAccessError) {
        try loop?.updateWatch(token, events: events)
    }

    /// Stops watching. Idempotent.
    public func cancel() {
        loop?.removeWatch(token)
        loop = nil
        watched = nil
    }

    deinit { cancel() }
}
