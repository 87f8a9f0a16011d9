import Glibc
public import SystemPackage

/// Why a file or directory could not be read, written, replaced or made: which step, which path, the `Errno`, and
/// (in `description`) what to do. Built by `TextFile`, the one owner of padbridge's file reading and writing.
public struct FileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The step that failed, as the message says it ("cannot read PATH", "cannot replace PATH", ...).
    public enum Operation: String, Sendable, Hashable {
        case read
        case write
        /// Renaming a new file over the old one, or syncing the directory that holds it.
        case replace
        case makeDirectory = "make"
    }

    public var operation: Operation
    public var path: String
    public var cause: Errno

    public init(_ operation: Operation, path: String, cause: Errno) {
        self.operation = operation
        self.path = path
        self.cause = cause
    }

    /// A C call's failure: `errno` as it set it.
    public init(_ operation: Operation, path: String, errno: Int32) {
        self.init(operation, path: path, cause: Errno(rawValue: errno))
    }

    /// The file is not there (ENOENT): callers that treat a missing file as empty ask this.
    public var isMissingFile: Bool { cause == .noSuchFileOrDirectory }

    public var description: String {
        "cannot \(operation.rawValue) \(path): \(cause)" + (remedy.map { " (\($0))" } ?? "")
    }

    /// What to do, for the causes a user can do something about.
    var remedy: String? {
        switch cause {
        case .permissionDenied, .notPermitted:
            operation == .read ? "check the file's permissions" : "check the permissions of the directory that holds it"
        case .noSpace, .diskQuotaExceeded: "free some disk space"
        case .readOnlyFileSystem: "the file system is mounted read-only"
        case .tooManySymbolicLinkLevels: "it is a symbolic link, which padbridge does not follow here: name the file itself"
        default: nil
        }
    }
}

extension Errno {
    /// The result of a system call that returns -1 and sets errno, with EINTR retried: the one place the file
    /// owner turns a C result into an `Errno` (swift-system has no wrapper for fsync, fchmod, rename or mkdir).
    static func checking(_ call: () -> Int32) -> Result<Void, Errno> {
        while true {
            if call() != -1 { return .success(()) }
            let failure = Errno(rawValue: errno)
            if failure != .interrupted { return .failure(failure) }
        }
    }
}
