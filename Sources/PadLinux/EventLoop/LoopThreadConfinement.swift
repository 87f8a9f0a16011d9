import Glibc

/// Which thread a `DeviceEventLoop` (and its timers) belongs to, checked in debug builds: until `run()` is first
/// called, the thread that made the loop; from then on, the thread that last called `run()`.
///
/// The loop's safety rests on this rule (its handlers capture `unowned(unsafe)`, its tables have no lock), so every
/// loop API asserts it, as NIO's `preconditionInEventLoop` does. The check is an `assert`: release builds neither
/// evaluate nor pay for it (one store per `run()`).
///
/// Not Sendable: written by the owning thread only (at `run()`), read there by the checks.
final class LoopThreadConfinement {
    private var owner = pthread_self()

    /// The calling thread runs the loop from now on.
    func takeOwnership() {
        owner = pthread_self()
    }

    /// Traps in debug builds when called off the loop's thread; `api` names the call that was made there.
    @inline(__always)
    func preconditionOnLoopThread(_ api: StaticString, file: StaticString = #fileID, line: UInt = #line) {
        assert(
            pthread_equal(owner, pthread_self()) != 0,
            "DeviceEventLoop.\(api) called off the loop's thread: a loop is used only on the thread that made it "
                + "(before run()) or runs it; post to it from other threads with LoopMailbox",
            file: file, line: line)
    }
}
