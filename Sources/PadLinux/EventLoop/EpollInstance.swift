import CPadLinux
import Glibc
import SystemPackage

/// Owns one epoll instance. Interest is registered with a 64-bit token the loop maps to its handler.
struct EpollInstance: ~Copyable {
    private let descriptor: FileDescriptor

    init() throws(DeviceAccessError) {
        let raw = epoll_create1(CPadLinux_EPOLL_CLOEXEC)
        guard raw >= 0 else { throw .creating("epoll_create1", Errno(rawValue: errno)) }
        descriptor = FileDescriptor(rawValue: raw)
    }

    /// Level-triggered interest in `events` (EPOLLIN, ...) on `target`.
    func add(_ target: FileDescriptor, events: UInt32, token: UInt64) -> Result<Void, Errno> {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        return retryingInterrupts { epoll_ctl(descriptor.rawValue, CPadLinux_EPOLL_CTL_ADD, target.rawValue, &event) }
    }

    /// Changes the events `target` is watched for.
    func modify(_ target: FileDescriptor, events: UInt32, token: UInt64) -> Result<Void, Errno> {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        return retryingInterrupts { epoll_ctl(descriptor.rawValue, CPadLinux_EPOLL_CTL_MOD, target.rawValue, &event) }
    }

    /// Removes `target`. Call before the target is closed.
    func remove(_ target: FileDescriptor) {
        var event = epoll_event()
        _ = retryingInterrupts { epoll_ctl(descriptor.rawValue, CPadLinux_EPOLL_CTL_DEL, target.rawValue, &event) }
    }

    /// Waits for readiness, at most `timeoutNanoseconds` (nil: for ever). Returns how many entries of `events` were
    /// filled; EINTR counts as zero so a signal only wakes the loop up.
    func wait(into events: UnsafeMutableBufferPointer<epoll_event>, timeoutNanoseconds: UInt64?)
        throws(DeviceAccessError) -> Int
    {
        let timeout = timeoutNanoseconds.map { CLongLong(min($0, UInt64(Int64.max))) } ?? -1
        let count = CPadLinux_epollWait(descriptor.rawValue, events.baseAddress, CInt(events.count), timeout)
        if count >= 0 { return Int(count) }
        let failure = Errno(rawValue: errno)
        if failure == .interrupted { return 0 }
        throw .controlling("epoll", operation: "epoll_pwait2", failure)
    }

    /// Closes the descriptor now rather than at the end of the owner's lifetime.
    consuming func close() {
        let descriptor = self.descriptor
        discard self
        try? descriptor.close()
    }

    deinit { try? descriptor.close() }

    private func retryingInterrupts(_ call: () -> CInt) -> Result<Void, Errno> {
        while true {
            if call() >= 0 { return .success(()) }
            let failure = Errno(rawValue: errno)
            if failure != .interrupted { return .failure(failure) }
        }
    }
}
