import CPadLinux
import Glibc
import SystemPackage

/// Owns a netlink socket that receives the kernel's device announcements (uevents): how a pad learns that the
/// kernel has made its nodes without re-reading sysfs on a timer. Works without udevd (the kernel sends these
/// itself; udevd only re-broadcasts them with its own properties).
struct KernelUeventMonitor: ~Copyable {
    let descriptor: FileDescriptor

    init() throws(DeviceAccessError) {
        let raw = CPadLinux_openKernelUeventSocket()
        guard raw >= 0 else { throw .creating("kernel uevent socket", Errno(rawValue: errno)) }
        descriptor = FileDescriptor(rawValue: raw)
    }

    /// Reads every queued announcement; returns how many there were (their content is not needed: the caller
    /// re-checks sysfs, which is the source of truth).
    func drain() -> Int {
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 8192)
        while case let .success(length) = buffer.withUnsafeMutableBytes({ descriptor.readResult(into: $0) }),
            length > 0
        {
            count += 1
        }
        return count
    }

    consuming func close() {
        let descriptor = self.descriptor
        discard self
        try? descriptor.close()
    }

    deinit { try? descriptor.close() }
}
