internal import CAvahiLoader
import Glibc
import Logging
internal import PadLinux
import SystemPackage

/// Avahi's poll API (`AvahiPoll`) on padbridge's event loop: Avahi's client library asks it to watch its D-Bus
/// connection's descriptor and to call it back at times, and the loop does so on its one thread, between the other
/// descriptors it watches. So Avahi needs no thread of its own and its callbacks never race padbridge's state.
///
/// libdbus watches one socket twice (a watch for reading, another for writing), and epoll takes a descriptor once:
/// the watches of one descriptor share one registration waiting for the union of what they want; a descriptor no
/// watch wants anything of is taken out of epoll (a hung-up socket would otherwise wake the loop for ever).
///
/// Avahi's timeouts are absolute `gettimeofday` times; each becomes a loop timer at the same distance on the
/// monotonic clock. Loop-confined; the `AvahiPoll` it hands out lives as long as this object.
final class AvahiLoopPoll {
    private let loop: DeviceEventLoop
    private let logger: Logger
    let api: UnsafeMutablePointer<AvahiPoll>
    private var descriptors: [Int32: WatchedDescriptor] = [:]

    final class Watch {
        let descriptor: Int32
        var events: UInt32
        let callback: AvahiWatchCallback
        let userdata: UnsafeMutableRawPointer?
        var freed = false
        /// Avahi frees its watches before the client, and the client goes before this object; weak all the same.
        weak var poll: AvahiLoopPoll?
        init(descriptor: Int32, events: UInt32, callback: AvahiWatchCallback, userdata: UnsafeMutableRawPointer?) {
            self.descriptor = descriptor
            self.events = events
            self.callback = callback
            self.userdata = userdata
        }
    }

    final class Timeout {
        var timer: LoopTimer?
        let callback: AvahiTimeoutCallback
        let userdata: UnsafeMutableRawPointer?
        init(callback: AvahiTimeoutCallback, userdata: UnsafeMutableRawPointer?) {
            self.callback = callback
            self.userdata = userdata
        }
    }

    private final class WatchedDescriptor {
        var watch: LoopWatch?
        var registered: DeviceEventLoop.WatchedEvents = []
        var watches: [Watch] = []
    }

    static let readBit = AVAHI_WATCH_IN.rawValue
    static let writeBit = AVAHI_WATCH_OUT.rawValue
    static let errorBit = AVAHI_WATCH_ERR.rawValue
    static let hangUpBit = AVAHI_WATCH_HUP.rawValue

    init(loop: DeviceEventLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
        api = .allocate(capacity: 1)
        api.initialize(to: AvahiPoll())
        api.pointee.userdata = Unmanaged.passUnretained(self).toOpaque()
        api.pointee.watch_new = { api, descriptor, event, callback, userdata in
            guard let api, let callback else { return nil }
            return AvahiLoopPoll.from(api).newWatch(descriptor, events: event.rawValue, callback, userdata)
        }
        api.pointee.watch_update = { watch, event in
            guard let watch else { return }
            let object = AvahiLoopPoll.watch(watch)
            object.events = event.rawValue
            object.poll?.refresh(object.descriptor)
        }
        api.pointee.watch_get_events = { _ in
            // Asked only from inside a watch's callback, which is handed the same events already.
            AvahiWatchEvent(rawValue: 0)
        }
        api.pointee.watch_free = { watch in
            guard let watch else { return }
            let object = AvahiLoopPoll.watch(watch)
            object.freed = true
            object.poll?.refresh(object.descriptor)
            Unmanaged<Watch>.fromOpaque(UnsafeRawPointer(watch)).release()
        }
        api.pointee.timeout_new = { api, time, callback, userdata in
            guard let api, let callback else { return nil }
            return AvahiLoopPoll.from(api).newTimeout(time, callback, userdata)
        }
        api.pointee.timeout_update = { timeout, time in
            guard let timeout else { return }
            AvahiLoopPoll.schedule(AvahiLoopPoll.timeout(timeout), at: time)
        }
        api.pointee.timeout_free = { timeout in
            guard let timeout else { return }
            AvahiLoopPoll.timeout(timeout).timer?.close()
            Unmanaged<Timeout>.fromOpaque(UnsafeRawPointer(timeout)).release()
        }
    }

    deinit {
        for (_, entry) in descriptors { entry.watch?.cancel() }
        api.deinitialize(count: 1)
        api.deallocate()
    }

    // MARK: - Watches

    private static func from(_ api: UnsafePointer<AvahiPoll>) -> AvahiLoopPoll {
        Unmanaged<AvahiLoopPoll>.fromOpaque(api.pointee.userdata).takeUnretainedValue()
    }

    private static func watch(_ pointer: OpaquePointer) -> Watch {
        Unmanaged<Watch>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
    }

    private static func timeout(_ pointer: OpaquePointer) -> Timeout {
        Unmanaged<Timeout>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
    }

    private func newWatch(
        _ descriptor: Int32, events: UInt32, _ callback: AvahiWatchCallback, _ userdata: UnsafeMutableRawPointer?
    ) -> OpaquePointer? {
        let watch = Watch(descriptor: descriptor, events: events, callback: callback, userdata: userdata)
        watch.poll = self
        let entry = descriptors[descriptor] ?? WatchedDescriptor()
        descriptors[descriptor] = entry
        entry.watches.append(watch)
        guard refresh(descriptor) else {
            entry.watches.removeAll { $0 === watch }
            return nil
        }
        return OpaquePointer(Unmanaged.passRetained(watch).toOpaque())
    }

    /// Registers `descriptor` with the loop for what its live watches want (or takes it out); drops freed watches.
    @discardableResult
    private func refresh(_ descriptor: Int32) -> Bool {
        guard let entry = descriptors[descriptor] else { return true }
        entry.watches.removeAll { $0.freed }
        var wanted: DeviceEventLoop.WatchedEvents = []
        for watch in entry.watches {
            if watch.events & Self.readBit != 0 { wanted.insert(.readable) }
            if watch.events & Self.writeBit != 0 { wanted.insert(.writable) }
        }
        if wanted.isEmpty {
            entry.watch?.cancel()
            entry.watch = nil
            entry.registered = []
            if entry.watches.isEmpty { descriptors[descriptor] = nil }
            return true
        }
        do {
            if let watch = entry.watch {
                if wanted != entry.registered { try watch.update(events: wanted) }
            } else {
                entry.watch = try loop.makeWatch(
                    FileDescriptor(rawValue: descriptor), path: "Avahi's D-Bus connection (fd \(descriptor))",
                    events: wanted
                ) { [weak self] readiness throws(DeviceAccessError) in
                    self?.dispatch(descriptor, readiness)
                }
            }
            entry.registered = wanted
            return true
        } catch {
            logger.warning("cannot watch Avahi's D-Bus connection: \(error)")
            return false
        }
    }

    private func dispatch(_ descriptor: Int32, _ readiness: DeviceEventLoop.Readiness) {
        guard let entry = descriptors[descriptor] else { return }
        var happened: UInt32 = 0
        if readiness.isReadable { happened |= Self.readBit }
        if readiness.isWritable { happened |= Self.writeBit }
        if readiness.isError { happened |= Self.errorBit }
        if readiness.isPeerHangUp { happened |= Self.hangUpBit }
        for watch in entry.watches where !watch.freed && watch.events != 0 {
            let mine = happened & (watch.events | Self.errorBit | Self.hangUpBit)
            guard mine != 0 else { continue }
            // Held for the call: the callback may free this watch (the release then waits for this reference).
            withExtendedLifetime(watch) {
                watch.callback(
                    OpaquePointer(Unmanaged.passUnretained(watch).toOpaque()), descriptor, AvahiWatchEvent(rawValue: mine),
                    watch.userdata)
            }
        }
    }

    // MARK: - Timeouts

    private func newTimeout(
        _ time: UnsafePointer<timeval>?, _ callback: AvahiTimeoutCallback, _ userdata: UnsafeMutableRawPointer?
    ) -> OpaquePointer? {
        let timeout = Timeout(callback: callback, userdata: userdata)
        timeout.timer = loop.makeTimer { [weak timeout] in
            guard let timeout else { return }
            withExtendedLifetime(timeout) {
                timeout.callback(OpaquePointer(Unmanaged.passUnretained(timeout).toOpaque()), timeout.userdata)
            }
        }
        Self.schedule(timeout, at: time)
        return OpaquePointer(Unmanaged.passRetained(timeout).toOpaque())
    }

    /// Arms `timeout` for the absolute wall-clock `time` (nil: disarmed), as the same distance from now on the
    /// monotonic clock.
    private static func schedule(_ timeout: Timeout, at time: UnsafePointer<timeval>?) {
        guard let time else {
            timeout.timer?.cancel()
            return
        }
        var now = timeval()
        gettimeofday(&now, nil)
        let microseconds = (Int64(time.pointee.tv_sec) - Int64(now.tv_sec)) * 1_000_000
            + (Int64(time.pointee.tv_usec) - Int64(now.tv_usec))
        let deadline = MonotonicInstant(
            nanoseconds: MonotonicInstant.now().nanoseconds + UInt64(max(0, microseconds)) * 1000)
        timeout.timer?.schedule(at: deadline)
    }
}
