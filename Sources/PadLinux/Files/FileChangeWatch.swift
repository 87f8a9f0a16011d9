internal import Glibc
internal import SystemPackage

/// Calls a handler on the loop thread when a file is written or replaced (inotify on its directory, since editors
/// often save by writing a new file and renaming it over the old one). For reloading a profile when it changes.
/// Owns its inotify descriptor; `cancel()` (or dropping it) stops watching and closes it. Loop-confined.
public final class FileChangeWatch {
    private let loop: DeviceEventLoop
    private var descriptor: FileDescriptor?
    private var watch: LoopWatch?

    /// Watches `path` (its directory must exist). `onChange` runs once per batch of changes the kernel reports.
    public convenience init(path: String, loop: DeviceEventLoop, onChange: @escaping () -> Void) throws(DeviceAccessError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        try self.init(
            directory: directory, loop: loop, alsoRemovals: false, names: { $0 == name }, onChange: onChange,
            label: path)
    }

    /// Watches the files of `directory` whose names satisfy `names`: written, created, moved in, and (for a profiles
    /// directory, where a removed file changes what applies) removed or moved away. `onChange` runs once per batch.
    public convenience init(
        directory: String, loop: DeviceEventLoop, names: @escaping (String) -> Bool, onChange: @escaping () -> Void
    ) throws(DeviceAccessError) {
        try self.init(
            directory: directory, loop: loop, alsoRemovals: true, names: names, onChange: onChange, label: directory)
    }

    private init(
        directory: String, loop: DeviceEventLoop, alsoRemovals: Bool, names: @escaping (String) -> Bool,
        onChange: @escaping () -> Void, label: String
    ) throws(DeviceAccessError) {
        self.loop = loop
        let raw = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard raw >= 0 else { throw .creating("inotify_init1", Errno(rawValue: errno)) }
        let descriptor = FileDescriptor(rawValue: raw)
        self.descriptor = descriptor
        var mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        if alsoRemovals { mask |= UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM) }
        guard inotify_add_watch(raw, directory, mask) >= 0 else {
            let failure = Errno(rawValue: errno)
            cancel()
            throw .opening(directory, failure)
        }
        watch = try loop.makeWatch(descriptor, path: "inotify (\(label))") { [weak self] _ throws(DeviceAccessError) in
            guard let self, self.drainMentions(names) else { return }
            onChange()
        }
    }

    /// Reads every queued inotify event; whether one of them names a file `names` accepts.
    private func drainMentions(_ names: (String) -> Bool) -> Bool {
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
                if names(String(decoding: nameBytes, as: UTF8.self)) { mentioned = true }
                offset += header + length
            }
        }
    }

    /// Stops watching and closes the inotify descriptor. Idempotent.
    public func cancel() {
        watch?.cancel()
        watch = nil
        try? descriptor?.close()
        descriptor = nil
    }

    deinit { cancel() }
}
