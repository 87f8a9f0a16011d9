import Glibc
import NIOConcurrencyHelpers
import SystemPackage

/// Messages to one loop from other threads: `post` from any thread, `handler` on the receiving loop's thread, in the
/// order posted. What a loop on a thread of its own (`LoopThread`) and the loop that made it tell each other.
public final class LoopMailbox<Message: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `pending` is behind its lock; `counter` is only signalled (any thread) and drained (the
    // receiving loop's thread) through system calls that are safe from any thread; `watch` and `handler` are set and
    // read only on the receiving loop's thread (`receive`, `stopReceiving`, the watch's handler, and the last release,
    // which is there too: whatever holds the mailbox on the receiving side lives on that loop).
    // The eventfd is declared before the watch on it, and `deinit` removes the watch before either goes.
    private let pending = NIOLockedValueBox<[Message]>([])
    private let counter: EventCounter
    private var watch: LoopWatch?
    private var handler: ((Message) -> Void)?

    /// Any thread; messages posted before `receive` wait for it.
    public init() throws(DeviceAccessError) { counter = try EventCounter() }

    /// Any thread.
    public func post(_ message: Message) {
        pending.withLockedValue { $0.append(message) }
        counter.signal()
    }

    /// On `loop`'s thread, once: from now on each message goes to `handler` there.
    public func receive(on loop: DeviceEventLoop, _ handler: @escaping (Message) -> Void) throws(DeviceAccessError) {
        self.handler = handler
        watch = try loop.makeWatch(counter.descriptor, path: "mailbox") { [weak self] _ in self?.deliver() }
    }

    /// On the receiving loop's thread: no more messages are handed over. Idempotent.
    public func stopReceiving() {
        watch?.cancel()
        watch = nil
        handler = nil
    }

    private func deliver() {
        counter.drain()
        let batch = pending.withLockedValue { messages in
            defer { messages = [] }
            return messages
        }
        for message in batch {
            guard let handler else { return }
            handler(message)
        }
    }

    deinit {
        watch?.cancel()
    }
}

/// A `DeviceEventLoop` on a POSIX thread of its own, for work whose calls block (Avahi's D-Bus round trips, which
/// wait for avahi-daemon up to libdbus's 25 s) and must never hold the loop that forwards pads.
public enum LoopThread {
    /// Starts the thread: it blocks every signal (the main thread's signalfd takes them), makes its loop, calls
    /// `setUp` with it there (which makes what runs on it: nothing made on another thread is touched), and runs the
    /// loop until something on it calls `stop()`. Throws when the thread cannot be made; a loop that cannot be made
    /// there is `setUp`'s nil.
    public static func start(_ setUp: @escaping @Sendable (DeviceEventLoop?) -> Void) throws(DeviceAccessError) {
        let started = OffThread.start {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, nil)
            guard let loop = try? DeviceEventLoop() else { return setUp(nil) }
            setUp(loop)
            try? loop.run()
        }
        guard started == 0 else { throw .creating("a thread for a loop of its own", Errno(rawValue: started)) }
    }
}
