import CPadLinux
import Glibc
public import SystemPackage

/// One thread, one epoll: device fds, an eventfd for `stop()` and deferred work, a signalfd; timers are the loop's
/// own (the wait's timeout is the next timer's deadline), so arming, re-arming or cancelling a timer costs no system
/// call and a timer firing costs only the wait it ends.
///
/// Confined to the thread that calls `run()` (the CLI's main thread, never the Swift cooperative pool): create it,
/// create pads on it and call `run()` from that one thread; handlers run there too. Not `Sendable` on purpose.
///
/// The thread rule, checked in debug builds at the top of every API (as NIO's `preconditionInEventLoop`; `assert`,
/// so nothing is checked or paid for in release): until `run()` is first called the loop belongs to the thread that
/// made it (set-up: watches, timers, pads); from then on to the thread that last called `run()`, including after
/// `run()` returns (tear-down on that thread). Only `LoopMailbox.post` and the work of `LoopOffThreadWork` may run
/// on other threads.
public final class DeviceEventLoop {
    /// What a registered descriptor's handler is told: the epoll event bits (EPOLLIN, EPOLLHUP, ...).
    public struct Readiness: Sendable {
        let rawValue: UInt32
        public var isReadable: Bool { rawValue & CPadLinux_EPOLLIN != 0 }
        public var isHangUp: Bool { rawValue & (CPadLinux_EPOLLHUP | CPadLinux_EPOLLERR) != 0 }
        /// For watches that wait to write (`WatchedEvents.writable`).
        public var isWritable: Bool { rawValue & CPadLinux_EPOLLOUT != 0 }
        /// EPOLLHUP alone (`isHangUp` is it or EPOLLERR).
        public var isPeerHangUp: Bool { rawValue & CPadLinux_EPOLLHUP != 0 }
        /// EPOLLERR alone.
        public var isError: Bool { rawValue & CPadLinux_EPOLLERR != 0 }
    }

    /// What a watch waits for; hang-ups and errors are always reported.
    public struct WatchedEvents: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let readable = WatchedEvents(rawValue: 1)
        public static let writable = WatchedEvents(rawValue: 2)

        var epollBits: UInt32 {
            (contains(.readable) ? CPadLinux_EPOLLIN : 0) | (contains(.writable) ? CPadLinux_EPOLLOUT : 0)
        }
    }

    /// Identifies one registration; never reused, so a stale token is simply ignored.
    public struct WatchToken: Hashable, Sendable {
        let rawValue: UInt64
    }

    public typealias ReadinessHandler = (Readiness) throws(DeviceAccessError) -> Void

    private struct Watch {
        let descriptor: FileDescriptor
        let handler: ReadinessHandler
    }

    private var epoll: EpollInstance
    private var wake: EventCounter
    private let wakeToken = WatchToken(rawValue: 0)
    private var watches = WatchTable<Watch>()
    private var deferredWork: [() throws(DeviceAccessError) -> Void] = []
    private var stopRequested = false
    private var signalSubscriptions: [SignalSubscription] = []
    /// Every timer not closed, armed or not: its deadline as a plain number, scanned at every turn.
    let timerTable: LoopTimerTable
    /// When the loop last woke (`CLOCK_MONOTONIC`, read once per wake, before any handler of the batch runs): the
    /// "now" of everything handled in that batch, so a handler reads no clock of its own (in an emulated guest,
    /// where the vDSO falls back to a system call, the link read the clock 9 times per forwarded frame). Timers
    /// fire against it too: one that came due while a batch was handled fires at most that batch's duration late.
    public var now: MonotonicInstant { wakeClock.now }
    /// `now`, for a reader that must not keep the loop alive (the link's clock): it holds nothing, so holding it
    /// strongly makes no cycle, and reading it costs no weak-reference load.
    public let wakeClock = LoopWakeClock()
    private var standardInputReader: StandardInputLineReader?
    private var standardInputWatch: WatchToken?
    /// The thread the loop belongs to (see the type's thread rule); shared with its timers.
    let confinement = LoopThreadConfinement()

    public init() throws(DeviceAccessError) {
        timerTable = LoopTimerTable(confinement: confinement)
        epoll = try EpollInstance()
        wake = try EventCounter()
        if case let .failure(failure) = epoll.add(wake.descriptor, events: CPadLinux_EPOLLIN, token: wakeToken.rawValue) {
            throw .controlling("epoll", operation: "epoll_ctl(ADD eventfd)", failure)
        }
    }

    /// Dispatches readiness, timers, signals and deferred work until `stop()`. Throws if epoll fails or a device
    /// handler hits an error it cannot recover from (the loop is stopped then).
    ///
    /// Calling `stop()` before `run()` makes `run()` return at once.
    public func run() throws(DeviceAccessError) {
        confinement.takeOwnership()
        defer { stopRequested = false }
        let capacity = 32
        let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        wakeClock.now = .now()
        while !stopRequested {
            try runDeferredWork()
            if stopRequested { break }
            try fireDueTimers()
            if stopRequested { break }
            var timeout: UInt64?
            if !deferredWork.isEmpty {
                timeout = 0
            } else if let next = nextTimerDeadlineNanoseconds {
                let now = self.now.nanoseconds
                timeout = next > now ? next - now : 0
            }
            let count = try epoll.wait(into: events, timeoutNanoseconds: timeout)
            wakeClock.now = .now()
            for index in 0..<count {
                let token = WatchToken(rawValue: events[index].data.u64)
                if token == wakeToken {
                    wake.drain()
                    continue
                }
                // A handler earlier in this batch may have removed this watch: then it is simply skipped.
                guard let watch = watches.value(for: token.rawValue) else { continue }
                try watch.handler(Readiness(rawValue: events[index].events))
                if stopRequested { break }
            }
        }
    }

    /// Makes `run()` return after the handler that called this finishes.
    public func stop() {
        confinement.preconditionOnLoopThread("stop()")
        stopRequested = true
        wake.signal()
    }

    /// Reads fd 0 line by line without ever blocking the loop: `onLine` gets each line without its "\n", a partial
    /// last line is delivered at end of file, then `onEndOfFile` is called once.
    ///
    /// fd 0 keeps its blocking mode (setting O_NONBLOCK would leak into the shell that shares the terminal): the loop
    /// reads only when epoll reports it readable, and one read per readiness cannot block. A regular file or
    /// /dev/null (which epoll refuses) is read in chunks between other events instead.
    ///
    /// `onBatchEnd` runs after the lines of one read(2) have been delivered: lines a writer sent together (one
    /// frame of a pad) can then be shown to readers together.
    ///
    /// A line longer than `maximumLineBytes` is not kept: its bytes are dropped as they come and `onOverlongLine` is
    /// called once, in its place among the lines, so the buffer never grows without bound.
    public func watchStandardInputLines(
        _ onLine: @escaping (String) -> Void, onBatchEnd: @escaping () -> Void = {},
        onOverlongLine: @escaping () -> Void = {}, onEndOfFile: @escaping () -> Void
    ) throws(DeviceAccessError) {
        confinement.preconditionOnLoopThread("watchStandardInputLines")
        precondition(standardInputReader == nil, "watchStandardInputLines called twice")
        let reader = StandardInputLineReader(
            onLine: onLine, onBatchEnd: onBatchEnd, onOverlongLine: onOverlongLine, onEndOfFile: onEndOfFile)
        standardInputReader = reader
        let input = FileDescriptor.standardInput
        let token = WatchToken(rawValue: watches.reserveToken())
        switch epoll.add(input, events: CPadLinux_EPOLLIN, token: token.rawValue) {
        case .success:
            standardInputWatch = token
            watches.store(
                Watch(descriptor: input) { [unowned self] _ throws(DeviceAccessError) in
                    if reader.readOnce() == .endOfFile { self.stopReadingStandardInput() }
                }, for: token.rawValue)
        case .failure(.notPermitted):
            watches.remove(token.rawValue)
            // Regular files and /dev/null never block: read them a chunk per loop turn.
            func readChunk() {
                if reader.readOnce() == .endOfFile {
                    if standardInputReader === reader { standardInputReader = nil }
                } else {
                    deferWork(readChunk)
                }
            }
            deferWork(readChunk)
        case let .failure(failure):
            watches.remove(token.rawValue)
            throw .controlling("standard input", operation: "epoll_ctl(ADD fd 0)", failure)
        }
    }

    /// The longest line `watchStandardInputLines` delivers (64 KiB; a pad event's line is under 200 bytes).
    public static let maximumLineBytes = 65536

    /// Stops reading fd 0: nothing more is delivered, not even its end (a command that is shutting down must not
    /// act on input that comes after). Safe to call when it is not read.
    public func stopReadingStandardInput() {
        confinement.preconditionOnLoopThread("stopReadingStandardInput()")
        standardInputReader?.stop()
        standardInputReader = nil
        if let standardInputWatch { removeWatch(standardInputWatch) }
        standardInputWatch = nil
    }

    /// Blocks `signals` for the process and delivers them to `handler` on the loop thread through a signalfd.
    ///
    /// The mask is set with `pthread_sigmask` on the calling thread and inherited by threads it starts later, so
    /// call this before any other thread starts (first thing in the CLI); a thread started earlier would still
    /// receive these signals with their default action.
    public func watchSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws(DeviceAccessError) {
        confinement.preconditionOnLoopThread("watchSignals")
        let subscription = SignalSubscription(descriptor: try SignalDescriptor(blocking: signals))
        signalSubscriptions.append(subscription)
        _ = try watch(subscription.descriptorForPolling, path: "signalfd") { _ throws(DeviceAccessError) in
            while let signal = subscription.next() { handler(signal) }
        }
    }

    // MARK: - For the owners of descriptors (devices, sockets) and timers

    /// Registers `descriptor` for `events`; the registration's owner removes it with `removeWatch` before the
    /// descriptor closes. Inside PadLinux only: everyone else gets a `LoopWatch` (`makeWatch`), which removes itself.
    func watch(
        _ descriptor: FileDescriptor, path: String, events: WatchedEvents = .readable, _ handler: @escaping ReadinessHandler
    ) throws(DeviceAccessError) -> WatchToken {
        confinement.preconditionOnLoopThread("watch")
        let token = WatchToken(rawValue: watches.reserveToken())
        if case let .failure(failure) = epoll.add(descriptor, events: events.epollBits, token: token.rawValue) {
            watches.remove(token.rawValue)
            throw .controlling(path, operation: "epoll_ctl(ADD)", failure)
        }
        watches.store(Watch(descriptor: descriptor, handler: handler), for: token.rawValue)
        return token
    }

    /// Calls `handler` on the loop thread whenever `descriptor` is ready for `events` (level-triggered), until the
    /// returned watch is dropped or removed. For the type that owns the descriptor, which keeps the watch and removes
    /// it before it closes the descriptor (see `LoopWatch`).
    public func makeWatch(
        _ descriptor: FileDescriptor, path: String, events: WatchedEvents = .readable,
        _ handler: @escaping ReadinessHandler
    ) throws(DeviceAccessError) -> LoopWatch {
        LoopWatch(loop: self, token: try watch(descriptor, path: path, events: events, handler))
    }

    /// Whether `token`'s watch is registered.
    func isWatching(_ token: WatchToken) -> Bool {
        confinement.preconditionOnLoopThread("isWatching")
        return watches.value(for: token.rawValue) != nil
    }

    /// Changes what a watch waits for (`LoopWatch.update`).
    func updateWatch(_ token: WatchToken, events: WatchedEvents) throws(DeviceAccessError) {
        confinement.preconditionOnLoopThread("updateWatch")
        guard let watch = watches.value(for: token.rawValue) else { return }
        if case let .failure(failure) = epoll.modify(watch.descriptor, events: events.epollBits, token: token.rawValue) {
            throw .controlling("watched descriptor \(watch.descriptor.rawValue)", operation: "epoll_ctl(MOD)", failure)
        }
    }

    /// Stops watching; safe to call with a token already removed (a `LoopWatch` calls it when dropped or cancelled).
    func removeWatch(_ token: WatchToken) {
        confinement.preconditionOnLoopThread("removeWatch")
        guard let watch = watches.remove(token.rawValue) else { return }
        epoll.remove(watch.descriptor)
    }

    /// Runs `work` on the loop thread after the current batch of events (or as soon as `run()` starts).
    public func deferWork(_ work: @escaping () throws(DeviceAccessError) -> Void) {
        confinement.preconditionOnLoopThread("deferWork")
        deferredWork.append(work)
        if deferredWork.count == 1 { wake.signal() }
    }

    /// Calls `handler` once on the loop thread after `milliseconds`, unless the loop stopped first: a bound for
    /// waits on the kernel (a probe that never comes). Returns a handle; dropping it cancels the deadline.
    public func deadline(
        afterMilliseconds milliseconds: UInt64, _ handler: @escaping () -> Void
    ) -> LoopDeadline {
        confinement.preconditionOnLoopThread("deadline")
        let timer = makeTimer { handler() }
        timer.schedule(at: MonotonicInstant.now().adding(milliseconds: milliseconds))
        return LoopDeadline(timer: timer)
    }

    /// Calls `handler` on the loop thread every `milliseconds` until the returned handle is cancelled or dropped.
    /// For output a user asked to see periodically (`monitor --stats`); nothing in padbridge polls on a timer.
    public func repeating(
        everyMilliseconds milliseconds: UInt64, _ handler: @escaping () -> Void
    ) -> LoopDeadline {
        confinement.preconditionOnLoopThread("repeating")
        let timer = makeTimer { handler() }
        timer.scheduleRepeating(everyMilliseconds: milliseconds)
        return LoopDeadline(timer: timer)
    }

    /// A timer whose `handler` runs on the loop thread, armed and re-armed as often as needed, at no system call
    /// (for a deadline that moves with every frame, such as a turbo button's next edge or the link's next wake).
    /// Cannot fail: a timer is a slot in the loop's own table, no descriptor.
    public func makeTimer(_ handler: @escaping () throws(DeviceAccessError) -> Void) -> LoopTimer {
        confinement.preconditionOnLoopThread("makeTimer")
        return LoopTimer(loop: self, handler: handler)
    }

    private var nextTimerDeadlineNanoseconds: UInt64? {
        let next = timerTable.earliestDeadline()
        return next == LoopTimerTable.disarmed ? nil : next
    }

    /// Runs the handler of every timer whose deadline has come, earliest first (one clock read for the batch). A
    /// handler may arm, cancel or close any timer, itself included.
    ///
    /// Allocates nothing (a timer fires with most forwarded frames): the earliest due timer is found by a scan, fired,
    /// and the scan repeated, at most once per timer the loop had when the batch began (a handler that re-arms its
    /// timer at or before `now` is not fired again in the same batch forever).
    private func fireDueTimers() throws(DeviceAccessError) {
        let now = self.now.nanoseconds
        guard timerTable.earliestDeadline() <= now else { return }
        var remaining = timerTable.count
        while remaining > 0 {
            remaining -= 1
            guard let slot = timerTable.earliestSlot(dueBy: now) else { return }
            guard let timer = timerTable.owner(of: slot) else {
                // A timer gone without closing its slot (its deinit closes it, so never): disarmed, not found due again.
                timerTable.deadlines[slot] = LoopTimerTable.disarmed
                continue
            }
            try timer.fire(at: now)
            if stopRequested { return }
        }
    }

    private func runDeferredWork() throws(DeviceAccessError) {
        guard !deferredWork.isEmpty else { return }
        let batch = deferredWork
        deferredWork.removeAll()
        for work in batch { try work() }
    }
}

/// A timer of a `DeviceEventLoop`: one-shot deadlines (effect durations, the link's next wake) or a period
/// (heartbeats); never used for polling. Kept by the loop in user space: scheduling it again costs no system call.
public final class LoopTimer {
    /// The loop's table (held strongly: it holds the timers weakly, and nothing else); nil once closed.
    private var table: LoopTimerTable?
    private let slot: Int
    private let handler: () throws(DeviceAccessError) -> Void
    private var periodNanoseconds: UInt64?

    fileprivate init(loop: DeviceEventLoop, handler: @escaping () throws(DeviceAccessError) -> Void) {
        self.handler = handler
        table = loop.timerTable
        slot = loop.timerTable.takeSlot()
        loop.timerTable.owners[slot].timer = self
    }

    /// When it fires next (CLOCK_MONOTONIC ns); nil while disarmed.
    fileprivate var deadlineNanoseconds: UInt64? {
        guard let deadline = table?.deadlines[slot], deadline != LoopTimerTable.disarmed else { return nil }
        return deadline
    }

    /// Fires once at `deadline` (at the loop's next turn if it has passed), replacing any earlier schedule.
    public func schedule(at deadline: MonotonicInstant) {
        guard let table else { return }
        table.confinement.preconditionOnLoopThread("LoopTimer.schedule(at:)")
        periodNanoseconds = nil
        table.deadlines[slot] = min(deadline.nanoseconds, LoopTimerTable.disarmed - 1)
    }

    /// Fires every `milliseconds`, first after one period, replacing any earlier schedule.
    public func scheduleRepeating(everyMilliseconds milliseconds: UInt64) {
        guard let table else { return }
        table.confinement.preconditionOnLoopThread("LoopTimer.scheduleRepeating")
        let period = max(milliseconds * 1_000_000, 1)
        periodNanoseconds = period
        table.deadlines[slot] = MonotonicInstant.now().nanoseconds + period
    }

    /// Disarms the timer (it stays the loop's and can be scheduled again).
    public func cancel() {
        table?.confinement.preconditionOnLoopThread("LoopTimer.cancel()")
        table?.deadlines[slot] = LoopTimerTable.disarmed
        periodNanoseconds = nil
    }

    /// Disarms it for good and leaves the loop. Idempotent.
    public func close() {
        cancel()
        table?.freeSlot(slot)
        table = nil
    }

    fileprivate func fire(at now: UInt64) throws(DeviceAccessError) {
        guard let table else { return }
        if let period = periodNanoseconds, let deadline = deadlineNanoseconds {
            // The next period after now (missed ones are not made up for).
            table.deadlines[slot] = deadline + ((now - deadline) / period + 1) * period
        } else {
            table.deadlines[slot] = LoopTimerTable.disarmed
        }
        try handler()
    }

    deinit { close() }
}

/// A loop's timers: each one's deadline in a plain array scanned at every turn of the loop (a few dozen at most),
/// and the timer itself, held weakly (its owner holds it), looked at only when it is due. Scanning weak references
/// instead cost ~2,000 instructions a forwarded frame in weak-reference loads, copies and releases.
///
/// Not Sendable: the loop's thread only, as the loop and its timers.
final class LoopTimerTable {
    static let disarmed = UInt64.max
    let confinement: LoopThreadConfinement
    struct WeakTimer {
        weak var timer: LoopTimer?
    }

    /// By slot: when each timer fires next (CLOCK_MONOTONIC ns), `disarmed` for none (and for a free slot).
    fileprivate var deadlines: [UInt64] = []
    fileprivate var owners: [WeakTimer] = []
    private var freeSlots: [Int] = []

    init(confinement: LoopThreadConfinement) { self.confinement = confinement }

    /// Slots in use or free (an upper bound on the timers).
    var count: Int { deadlines.count }

    fileprivate func takeSlot() -> Int {
        if let slot = freeSlots.popLast() { return slot }
        deadlines.append(Self.disarmed)
        owners.append(WeakTimer())
        return deadlines.count - 1
    }

    fileprivate func freeSlot(_ slot: Int) {
        deadlines[slot] = Self.disarmed
        owners[slot].timer = nil
        freeSlots.append(slot)
    }

    fileprivate func owner(of slot: Int) -> LoopTimer? { owners[slot].timer }

    /// The earliest deadline, `disarmed` when no timer is armed.
    func earliestDeadline() -> UInt64 {
        var earliest = Self.disarmed
        for deadline in deadlines where deadline < earliest { earliest = deadline }
        return earliest
    }

    /// The slot of the earliest deadline at or before `now`, nil when none is due.
    func earliestSlot(dueBy now: UInt64) -> Int? {
        var earliest: Int?
        var earliestDeadline = Self.disarmed
        for (slot, deadline) in deadlines.enumerated() where deadline <= now && deadline < earliestDeadline {
            earliest = slot
            earliestDeadline = deadline
        }
        return earliest
    }
}

/// The time a `DeviceEventLoop` last woke (see `DeviceEventLoop.now`), updated by the loop's thread and read by
/// handlers on it.
///
/// Not Sendable: the loop's thread only.
public final class LoopWakeClock {
    public fileprivate(set) var now: MonotonicInstant = .now()
}

/// One `watchSignals` registration: owns its signalfd for the loop's lifetime.
private final class SignalSubscription {
    private let descriptor: SignalDescriptor

    init(descriptor: consuming SignalDescriptor) { self.descriptor = descriptor }

    var descriptorForPolling: FileDescriptor { descriptor.descriptor }
    func next() -> Int32? { descriptor.next() }
}

/// Splits fd 0 into lines. Does not own fd 0 (never closes it).
private final class StandardInputLineReader {
    enum Outcome { case more, endOfFile }

    private let onLine: (String) -> Void
    private let onBatchEnd: () -> Void
    private let onOverlongLine: () -> Void
    private let onEndOfFile: () -> Void
    private var pending: [UInt8] = []
    /// Inside a line longer than the limit: its bytes are dropped up to its newline.
    private var skipping = false
    private var finished = false

    init(
        onLine: @escaping (String) -> Void, onBatchEnd: @escaping () -> Void, onOverlongLine: @escaping () -> Void,
        onEndOfFile: @escaping () -> Void
    ) {
        self.onLine = onLine
        self.onBatchEnd = onBatchEnd
        self.onOverlongLine = onOverlongLine
        self.onEndOfFile = onEndOfFile
    }

    /// Nothing more is read or delivered.
    func stop() { finished = true }

    /// One read(2); delivers the complete lines it finished.
    func readOnce() -> Outcome {
        guard !finished else { return .endOfFile }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let result = chunk.withUnsafeMutableBytes { FileDescriptor.standardInput.readResult(into: $0) }
        switch result {
        case let .success(count) where count > 0:
            deliverCompleteLines(chunk[0..<count])
            return finished ? .endOfFile : .more
        case .failure(.resourceTemporarilyUnavailable):
            return .more
        case .success, .failure:
            // End of file, or an error that ends input just the same (EIO on a closed terminal).
            finished = true
            if skipping {
                onOverlongLine()
                onBatchEnd()
            } else if !pending.isEmpty {
                onLine(String(decoding: pending, as: UTF8.self))
                onBatchEnd()
            }
            pending.removeAll()
            onEndOfFile()
            return .endOfFile
        }
    }

    private func deliverCompleteLines(_ chunk: ArraySlice<UInt8>) {
        var delivered = false
        var rest = chunk
        while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            if skipping {
                skipping = false
                onOverlongLine()
            } else {
                pending.append(contentsOf: rest[..<newline])
                if pending.count > DeviceEventLoop.maximumLineBytes {
                    onOverlongLine()
                } else {
                    onLine(String(decoding: pending, as: UTF8.self))
                }
                pending.removeAll(keepingCapacity: true)
            }
            delivered = true
            rest = rest[(newline + 1)...]
            if finished { return }  // a line's handler stopped reading
        }
        if !skipping {
            pending.append(contentsOf: rest)
            if pending.count > DeviceEventLoop.maximumLineBytes {
                skipping = true
                pending = []
            }
        }
        if delivered { onBatchEnd() }
    }
}

/// A pending `DeviceEventLoop.deadline` or `repeating` timer; cancelled when dropped.
public final class LoopDeadline {
    private let timer: LoopTimer
    fileprivate init(timer: LoopTimer) { self.timer = timer }
    public func cancel() { timer.close() }
    deinit { timer.close() }
}
