import CPadLinux
import Glibc
import SystemPackage

/// Owns a netlink socket that receives the kernel's device announcements (uevents): how a pad learns that the
/// kernel has made its nodes without re-reading sysfs on a timer. Works without udevd (the kernel sends these
/// itself; udevd only re-broadcasts them with its own properties).
struct KernelUeventMonitor: ~Copyable {
    /// What one announcement says, from its "ACTION@DEVPATH" header (the variables after it are not needed).
    struct Announcement: Equatable {
        var action: String
        /// The device's sysfs path, "/sys/devices/...".
        var sysfsPath: String

        /// nil for anything that is not a kernel uevent header (udevd's "libudev" messages never reach this
        /// socket's group, but a decoder takes any bytes).
        init?(message: some Collection<UInt8>) {
            let header = message.prefix { $0 != 0 }
            guard let at = header.firstIndex(of: UInt8(ascii: "@")) else { return nil }
            let action = String(decoding: header[header.startIndex..<at], as: UTF8.self)
            let path = String(decoding: header[header.index(after: at)...], as: UTF8.self)
            guard !action.isEmpty, path.hasPrefix("/") else { return nil }
            self.action = action
            sysfsPath = "/sys" + path
        }
    }

    /// What a drain found: the announcements, and whether the kernel dropped some because the socket's buffer was
    /// full (then the caller must not rely on having seen every one).
    struct Drained {
        var announcements: [Announcement] = []
        var overflowed = false
    }

    let descriptor: FileDescriptor

    init() throws(DeviceAccessError) {
        let raw = CPadLinux_openKernelUeventSocket()
        guard raw >= 0 else { throw .creating("kernel uevent socket", Errno(rawValue: errno)) }
        descriptor = FileDescriptor(rawValue: raw)
    }

    /// Reads every queued announcement.
    func drain() -> Drained {
        var drained = Drained()
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            switch buffer.withUnsafeMutableBytes({ descriptor.readResult(into: $0) }) {
            case let .success(length) where length > 0:
                if let announcement = Announcement(message: buffer[0..<length]) {
                    drained.announcements.append(announcement)
                }
            case .failure(.noBufferSpace):
                drained.overflowed = true
            case .failure(.interrupted):
                continue
            default:
                return drained
            }
        }
    }

    consuming func close() {
        let descriptor = self.descriptor
        discard self
        try? descriptor.close()
    }

    deinit { try? descriptor.close() }
}
