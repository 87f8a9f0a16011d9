import CPadLinux
import Glibc
import SystemPackage

/// Owns an eventfd: the loop's wake-up line for `stop()` and deferred work.
struct EventCounter: ~Copyable {
    let descriptor: FileDescriptor

    init() throws(DeviceAccessError) {
        let raw = eventfd(0, CPadLinux_EFD_CLOEXEC | CPadLinux_EFD_NONBLOCK)
        guard raw >= 0 else { throw .creating("eventfd", Errno(rawValue: errno)) }
        descriptor = FileDescriptor(rawValue: raw)
    }

    /// Makes the counter readable (wakes `epoll_wait`).
    func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { try? descriptor.write($0, retryOnInterrupt: true) }
    }

    /// Resets the counter to zero.
    func drain() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { try? descriptor.read(into: $0, retryOnInterrupt: true) }
    }

    /// Closes the descriptor now rather than at the end of the owner's lifetime.
    consuming func close() {
        let descriptor = self.descriptor
        discard self
        try? descriptor.close()
    }

    deinit { try? descriptor.close() }
}
