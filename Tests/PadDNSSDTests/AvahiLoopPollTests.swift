import CAvahiLoader
import Glibc
import Logging
import PadLinux
import PadLinuxTestSupport
import Testing

@testable import PadDNSSD

/// Avahi's poll API on the event loop, driven as Avahi's client library drives it (watches on a descriptor,
/// timeouts at absolute wall-clock times), over a pipe: no Avahi needed.
@Suite struct AvahiLoopPollTests {
    /// What the C callbacks saw, reached through their userdata.
    final class Calls {
        var watchEvents: [UInt32] = []
        var timeouts = 0
        var onWatch: ((OpaquePointer?, UInt32) -> Void)?
        var onTimeout: (() -> Void)?
    }

    static let watchCallback: AvahiWatchCallback = { watch, _, event, userdata in
        let calls = Unmanaged<Calls>.fromOpaque(userdata!).takeUnretainedValue()
        calls.watchEvents.append(event.rawValue)
        calls.onWatch?(watch, event.rawValue)
    }

    static let timeoutCallback: AvahiTimeoutCallback = { _, userdata in
        let calls = Unmanaged<Calls>.fromOpaque(userdata!).takeUnretainedValue()
        calls.timeouts += 1
        calls.onTimeout?()
    }

    static func pipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        precondition(Glibc.pipe(&ends) == 0)  // blocking: each test reads only what it wrote
        return (ends[0], ends[1])
    }

    @Test func aReadableDescriptorCallsItsWatchAndTwoWatchesShareOneDescriptor() throws {
        let loop = try DeviceEventLoop()
        let poll = AvahiLoopPoll(loop: loop, logger: Logger(label: "test"))
        let watchdog = try LoopWatchdog(loop)
        let calls = Calls()
        let userdata = Unmanaged.passUnretained(calls).toOpaque()
        let (readEnd, writeEnd) = Self.pipe()
        defer { close(readEnd); close(writeEnd) }
        let api = poll.api
        // libdbus's way: one watch to read, one to write, on the same socket (here: a pipe's two ends would be two
        // descriptors; the write watch is disabled, as libdbus keeps it until it has something to send).
        let reading = api.pointee.watch_new(api, readEnd, AVAHI_WATCH_IN, Self.watchCallback, userdata)
        let writing = api.pointee.watch_new(api, readEnd, AvahiWatchEvent(rawValue: 0), Self.watchCallback, userdata)
        #expect(reading != nil && writing != nil)
        calls.onWatch = { watch, _ in
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            // Freed from inside its own callback, as Avahi may.
            api.pointee.watch_free(watch)
            loop.stop()
        }
        var byte: UInt8 = 7
        _ = write(writeEnd, &byte, 1)
        try loop.run()
        #expect(!watchdog.fired)
        #expect(calls.watchEvents == [AVAHI_WATCH_IN.rawValue])
        api.pointee.watch_free(writing)
    }

    @Test func aWatchUpdatedToWriteIsCalledWhenTheDescriptorTakesData() throws {
        let loop = try DeviceEventLoop()
        let poll = AvahiLoopPoll(loop: loop, logger: Logger(label: "test"))
        let watchdog = try LoopWatchdog(loop)
        let calls = Calls()
        let (readEnd, writeEnd) = Self.pipe()
        defer { close(readEnd); close(writeEnd) }
        let api = poll.api
        let watch = api.pointee.watch_new(
            api, writeEnd, AvahiWatchEvent(rawValue: 0), Self.watchCallback, Unmanaged.passUnretained(calls).toOpaque())
        // Disabled: nothing happens (a deadline ends the loop).
        let quiet = loop.deadline(afterMilliseconds: 50) { loop.stop() }
        try loop.run()
        quiet.cancel()
        #expect(calls.watchEvents.isEmpty)
        api.pointee.watch_update(watch, AVAHI_WATCH_OUT)
        calls.onWatch = { watch, _ in
            api.pointee.watch_update(watch, AvahiWatchEvent(rawValue: 0))
            loop.stop()
        }
        try loop.run()
        #expect(!watchdog.fired)
        #expect(calls.watchEvents == [AVAHI_WATCH_OUT.rawValue])
        api.pointee.watch_free(watch)
    }

    @Test func aTimeoutFiresAtItsWallClockTimeAndCanBeMovedAndDisarmed() throws {
        let loop = try DeviceEventLoop()
        let poll = AvahiLoopPoll(loop: loop, logger: Logger(label: "test"))
        let watchdog = try LoopWatchdog(loop)
        let calls = Calls()
        let api = poll.api
        func inMilliseconds(_ milliseconds: Int) -> timeval {
            var now = timeval()
            gettimeofday(&now, nil)
            let total = Int(now.tv_usec) + milliseconds * 1000
            return timeval(tv_sec: now.tv_sec + total / 1_000_000, tv_usec: total % 1_000_000)
        }
        var never = inMilliseconds(10)
        let disarmed = api.pointee.timeout_new(api, &never, Self.timeoutCallback, Unmanaged.passUnretained(calls).toOpaque())
        api.pointee.timeout_update(disarmed, nil)
        var soon = inMilliseconds(1_000)
        let start = MonotonicInstant.now()
        let timeout = api.pointee.timeout_new(api, &soon, Self.timeoutCallback, Unmanaged.passUnretained(calls).toOpaque())
        var sooner = inMilliseconds(30)
        api.pointee.timeout_update(timeout, &sooner)
        calls.onTimeout = { loop.stop() }
        try loop.run()
        let elapsedMilliseconds = (MonotonicInstant.now().nanoseconds - start.nanoseconds) / 1_000_000
        #expect(!watchdog.fired)
        #expect(calls.timeouts == 1)
        #expect(elapsedMilliseconds >= 25 && elapsedMilliseconds < 900, "fired after \(elapsedMilliseconds) ms")
        api.pointee.timeout_free(timeout)
        api.pointee.timeout_free(disarmed)
    }
}
