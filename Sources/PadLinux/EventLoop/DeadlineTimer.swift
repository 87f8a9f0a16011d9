import CPadLinux
import Glibc
import SystemPackage

/// Owns a timerfd on CLOCK_MONOTONIC: one-shot absolute deadlines or a fixed period.
struct DeadlineTimer: ~Copyable {
    let descriptor: FileDescriptor

    init() throws(DeviceAccessError) {
        let raw = timerfd_create(CLOCK_MONOTONIC, CPadLinux_TFD_CLOEXEC | CPadLinux_TFD_NONBLOCK)
        guard raw >= 0 else { throw .creating("timerfd_create", Errno(rawValue: errno)) }
        descriptor = FileDescriptor(rawValue: raw)
    }

    /// Fires once at `deadline` (at once if it has passed).
    func arm(at deadline: MonotonicInstant) throws(DeviceAccessError) {
        // An all-zero it_value would disarm: a deadline of 0 ns means "now", so use 1 ns.
        let nanoseconds = max(deadline.nanoseconds, 1)
        var setting = itimerspec(it_interval: Glibc.timespec(), it_value: Self.timespec(nanoseconds))
        try set(&setting, flags: CPadLinux_TFD_TIMER_ABSTIME)
    }

    /// Fires every `periodNanoseconds`, first after one period.
    func arm(everyNanoseconds periodNanoseconds: UInt64) throws(DeviceAccessError) {
        let period = Self.timespec(max(periodNanoseconds, 1))
        var setting = itimerspec(it_interval: period, it_value: period)
        try set(&setting, flags: 0)
    }

    func disarm() throws(DeviceAccessError) {
        var setting = itimerspec()
        try set(&setting, flags: 0)
    }

    /// Reads the expiration count so the timerfd stops being readable. Zero if it had not expired.
    func acknowledge() -> UInt64 {
        var expirations: UInt64 = 0
        let count = withUnsafeMutableBytes(of: &expirations) { try? descriptor.read(into: $0, retryOnInterrupt: true) }
        return count == 8 ? expirations : 0
    }

    /// Closes the descriptor now rather than at the end of the owner's lifetime.
    consuming func close() {
        let descriptor = self.descriptor
        discard self
        try? descriptor.close()
    }

    deinit { try? descriptor.close() }

    private func set(_ setting: inout itimerspec, flags: CInt) throws(DeviceAccessError) {
        guard timerfd_settime(descriptor.rawValue, flags, &setting, nil) == 0 else {
            throw .controlling("timerfd", operation: "timerfd_settime", Errno(rawValue: errno))
        }
    }

    private static func timespec(_ nanoseconds: UInt64) -> Glibc.timespec {
        Glibc.timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}
