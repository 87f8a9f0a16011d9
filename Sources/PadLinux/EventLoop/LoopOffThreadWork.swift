import Glibc
import NIOConcurrencyHelpers
import SystemPackage

/// Runs one piece of blocking work on a thread of its own and hands its result to the loop thread.
///
/// For work the loop thread must never wait on: listing the pads with libudev reads each device's sysfs `uevent`
/// file, which the kernel serves under the device's lock, and a device being probed holds that lock for the whole
/// probe. When the device is one of this process's own virtual DualSenses, its probe waits for GET_REPORT answers
/// only the loop gives: a loop blocked in that read deadlocks until uhid's 5 s timeout fails the probe
/// (hid-playstation: "Failed to retrieve DualSense pairing info: -5").
///
/// Loop-confined except for the work closure, which runs on the new thread and must touch nothing else.
public final class LoopOffThreadWork {
    private let handoff: Handoff
    private var watch: LoopWatch?
    /// Takes the result if the worker left it: then returns the call of `completion` with it.
    private var takeResult: (() -> (() -> Void)?)?

    /// The eventfd that says the worker's result is there, shared by the worker and the loop. @unchecked Sendable:
    /// the descriptor is only written (by the worker, once) and read (by the loop) through system calls that are
    /// safe from any thread, and it is closed when the last of the two drops its reference, so the worker never
    /// writes to a closed or reused descriptor.
    private final class Handoff: @unchecked Sendable {
        let counter: EventCounter
        init() throws(DeviceAccessError) { counter = try EventCounter() }
    }

    /// Starts `work` on a new thread; `completion` gets its result on the loop thread, unless `cancel()` came first.
    /// Throws only when the thread or its eventfd cannot be made.
    public init<Value: Sendable>(
        on loop: DeviceEventLoop, work: @escaping @Sendable () -> Value,
        completion: @escaping (Value) -> Void
    ) throws(DeviceAccessError) {
        let handoff = try Handoff()
        self.handoff = handoff
        let box = ResultBox<Value>()
        takeResult = {
            guard let value = box.take() else { return nil }
            return { completion(value) }
        }
        watch = try loop.makeWatch(handoff.counter.descriptor, path: "off-thread work") { [weak self] _ in
            self?.finish()
        }
        let body: @Sendable () -> Void = {
            let value = work()
            box.put(value)
            handoff.counter.signal()
        }
        let started = OffThread.start(body)
        guard started == 0 else {
            watch?.cancel()
            watch = nil
            throw .creating("a thread for off-loop work", Errno(rawValue: started))
        }
    }

    /// The result is not wanted any more: `completion` will not be called. The thread still runs to its end.
    public func cancel() {
        watch?.cancel()
        watch = nil
        takeResult = nil
    }

    public var isFinished: Bool { watch == nil }

    private func finish() {
        handoff.counter.drain()
        guard let deliver = takeResult?() else { return }
        watch?.cancel()
        watch = nil
        takeResult = nil
        deliver()
    }

    deinit {
        // Before `handoff` (the eventfd) can go.
        watch?.cancel()
    }

    /// The worker's result, written once by the worker and taken once by the loop.
    private final class ResultBox<Value: Sendable>: Sendable {
        private let slot = NIOLockedValueBox<Value?>(nil)
        func put(_ value: Value) { slot.withLockedValue { $0 = value } }
        func take() -> Value? { slot.withLockedValue { value in defer { value = nil }; return value } }
    }
}

/// A detached POSIX thread running one closure.
public enum OffThread {
    /// Returns 0, or pthread_create's error number.
    public static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
        let context = Unmanaged.passRetained(Context(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
            context.body()
            return nil
        }, context)
        if result != 0 {
            Unmanaged<Context>.fromOpaque(context).release()
            return result
        }
        pthread_detach(thread)
        return 0
    }

    final class Context: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
