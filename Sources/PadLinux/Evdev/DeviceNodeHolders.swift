import Glibc

/// Which other processes have a device node open, read from /proc (what `fuser` does): the candidates for "who
/// holds this grab". Only processes this user may inspect are seen.
enum DeviceNodeHolders {
    struct Holder: Hashable, Sendable {
        var pid: Int32
        /// The process's command name (/proc/PID/comm).
        var command: String
    }

    /// Other processes (not this one) with `path` open, by pid.
    static func processes(holding path: String, procRoot: String = "/proc") -> [Holder] {
        let target = SysfsInputDevices.resolvedPath(path) ?? path
        let ownPID = getpid()
        var holders: [Holder] = []
        for entry in SysfsInputDevices.directoryEntries(procRoot) {
            guard let pid = Int32(entry), pid != ownPID else { continue }
            let descriptors = "\(procRoot)/\(entry)/fd"
            let holds = SysfsInputDevices.directoryEntries(descriptors).contains { link in
                symbolicLinkTarget("\(descriptors)/\(link)") == target
            }
            if holds {
                holders.append(Holder(
                    pid: pid, command: SysfsInputDevices.readAttribute("\(procRoot)/\(entry)/comm") ?? "?"))
            }
        }
        return holders.sorted { $0.pid < $1.pid }
    }

    /// "evtest (pid 812)", "one of evtest (pid 812), steam (pid 977)", or nil when no other process is seen.
    static func describe(_ holders: [Holder]) -> String? {
        let named = holders.map { "\($0.command) (pid \($0.pid))" }
        switch named.count {
        case 0: return nil
        case 1: return named[0]
        default: return "one of " + named.joined(separator: ", ")
        }
    }

    static func symbolicLinkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
