internal import CPadLinux
internal import Glibc
internal import SystemPackage

/// The running system, as `padbridge doctor` asks about it.
public struct LiveSystemFacts: SystemFacts {
    public init() {}

    public func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
    public func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }
    public func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }
    public func entries(of directory: String) -> [String] { SysfsInputDevices.directoryEntries(directory) }

    public func contents(of file: String) -> String? {
        (try? TextFile.bytes(atPath: file)).map { String(decoding: $0, as: UTF8.self) }
    }

    public var kernelRelease: String {
        var names = utsname()
        uname(&names)
        return withUnsafeBytes(of: names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    public var isRoot: Bool { geteuid() == 0 }

    /// Tries EVIOCGRAB and releases it at once: EBUSY means another program holds the pad. The programs that have
    /// the node open are named from /proc when this process may read their file descriptors (root), else blank.
    public func grabHolder(of node: String) -> String? {
        guard let descriptor = try? FileDescriptor.open(node, .readOnly, options: [.nonBlocking, .closeOnExec])
        else { return nil }
        defer { try? descriptor.close() }
        switch descriptor.control(.evdevGrab, value: 1) {
        case .success:
            _ = descriptor.control(.evdevGrab, value: 0)
            return nil
        case .failure(.resourceBusy):
            return processes(holding: node).joined(separator: ", ")
        case .failure:
            return nil
        }
    }

    /// "name (pid N)" of each process with `node` open, as far as /proc lets this process see.
    func processes(holding node: String) -> [String] {
        let own = String(getpid())
        return SysfsInputDevices.directoryEntries("/proc").filter { $0.allSatisfy(\.isNumber) && $0 != own }.compactMap {
            pid in
            let holds = SysfsInputDevices.directoryEntries("/proc/\(pid)/fd").contains { fd in
                SysfsInputDevices.resolvedPath("/proc/\(pid)/fd/\(fd)") == node
            }
            guard holds else { return nil }
            let name = SysfsInputDevices.readAttribute("/proc/\(pid)/comm") ?? "?"
            return "\(name) (pid \(pid))"
        }
    }
}
