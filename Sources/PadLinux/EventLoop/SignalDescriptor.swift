import CPadLinux
import Glibc
import SystemPackage

/// Owns a signalfd for a set of signals the process has blocked.
struct SignalDescriptor: ~Copyable {
    let descriptor: FileDescriptor

    init(blocking signals: [Int32]) throws(DeviceAccessError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        let status = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard status == 0 else { throw .controlling("signals", operation: "pthread_sigmask", Errno(rawValue: status)) }
        let raw = signalfd(-1, &set, CPadLinux_SFD_CLOEXEC | CPadLinux_SFD_NONBLOCK)
        guard raw >= 0 else { throw .creating("signalfd", Errno(rawValue: errno)) }
        descriptor = FileDescriptor(rawValue: raw)
    }

    /// The next pending signal's number, or nil when none is pending.
    func next() -> Int32? {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        let count = withUnsafeMutableBytes(of: &info) { try? descriptor.read(into: $0, retryOnInterrupt: true) }
        guard count == size else { return nil }
        return Int32(bitPattern: info.ssi_signo)
    }

    /// Closes the descriptor now rather than at the end of the owner's lifetime.
    consuming func close() {
        let descriptor = self.descriptor
        discard self
        try? descriptor.close()
    }

    deinit { try? descriptor.close() }
}
