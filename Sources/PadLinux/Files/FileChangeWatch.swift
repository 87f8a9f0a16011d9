internal import Glibc
internal import SystemPackage

/// Calls a handler on the loop thread when a file is written or replaced (inotify on its directory, since editors
/// often save by writing a new file and renaming it over the old one). For reloading a profile when it changes.
/// Owns its inotify descriptor; `cancel()` (or dropping it) stops watching and closes it. Loop-confined.
public final class FileChangeWatch {
    private let loop: DeviceEventLoop
    private var descriptor: FileDescriptor?
    private var token: DeviceEventLoop.WatchToken?

    /// Watches `path` (its directory must exist). `onChange` runs once per batch of changes the kernel reports.
    public init(path: String, loop: DeviceEventLoop, onChange: @escaping () -> Void) throws(DeviceAccessError) {
        self.loop = loop
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let raw = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard raw >= 0 else { throw .creating("inotify_init1", Errno(rawValue: errno)) }
        let descriptor = FileDescriptor(rawValue: raw)
        self.descriptor = descriptor
        let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        guard inotify_add_watch(raw, directory, mask) >= 0 else {
            let failure = Errno(rawValue: errno)
            cancel()
            throw .opening(directory, failure)
        }
        token = try loop.watch(descriptor, path: "inotify (\(path))") { [weak self] _ throws(DeviceAccessError) in
            guard let self, self.drainMentions(name) else { return }
            onChange()
        }
    }

    /// Reads every queued inotify event; whether one of them names `name`.
    private func drainMentions(_ name: String) -> Bool {
        guard let descriptor else { return false }
        var mentioned = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count: Int
            switch buffer.withUnsafeMutableBytes({ descriptor.readResult(into: $0) }) {
            case let .success(read) where read > 0: count = read
            default: return mentioned
            }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let length = buffer.withUnsafeBytes {
                    Int($0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self).len)
                }
                let nameBytes = buffer[(offset + header)..<min(count, offset + header + length)].prefix { $0 != 0 }
                if String(decoding: nameBytes, as: UTF8.self) == name { mentioned = true }
                offset += header + length
            }
        }
    }

    /// Stops watching and closes the inotify descriptor. Idempotent.
    public func cancel() {
        if let token { loop.removeWatch(token) }
        token = nil
        try? descriptor?.close()
        descriptor = nil
    }

    deinit { cancel() }
}
