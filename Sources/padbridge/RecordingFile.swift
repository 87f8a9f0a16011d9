import Glibc
import PadLinux

/// Where a recording goes: standard output, or a file that is written under a temporary name beside it and renamed
/// onto its name once recording has begun (`commit()`), so a command that fails before that (a pad that cannot be
/// opened, a grab refused) leaves an earlier file of that name as it was. Loop-confined.
final class RecordingFile {
    /// For messages: the path, or "standard output".
    let name: String
    /// The file's final name; nil for standard output.
    private let path: String?
    /// Where it is written until `commit()`.
    private var temporaryPath: String?
    private var descriptor: Int32
    private var writeFailure: Int32?
    /// Called once when a write fails (the reader of standard output went away, a full disk).
    var onWriteFailed: ((_ said: StatusEvent) -> Void)?

    static func standardOutput() -> RecordingFile { RecordingFile(standardOutput: ()) }

    private init(standardOutput: Void) {
        name = "standard output"
        path = nil
        descriptor = STDOUT_FILENO
    }

    /// Creates the temporary file beside `path` (mode 0644), or says why it cannot.
    init(path: String) throws {
        name = path
        self.path = path
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array("\(directory).\(base).padbridge-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard made >= 0 else { throw CommandFailure("\(FileError(.write, path: path, errno: errno))") }
        descriptor = made
        temporaryPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard fcntl(made, F_SETFD, FD_CLOEXEC) == 0, fchmod(made, 0o644) == 0 else {
            let failure = FileError(.write, path: path, errno: errno)
            close()
            throw CommandFailure("\(failure)")
        }
    }

    /// Appends `text`; after a failed write nothing more is written.
    func write(_ text: String) {
        guard writeFailure == nil, descriptor >= 0 else { return }
        guard !LineOutput(descriptor: descriptor).writeRaw(text) else { return }
        writeFailure = errno
        let said =
            path == nil && errno == EPIPE
            ? LineOutput.readerWentAway("the recording ends")
            : StatusEvent(.recordingEnded, "\(FileError(.write, path: name, errno: errno)); the recording ends")
        onWriteFailed?(said)
    }

    /// Gives the file its name (replacing a file there); once. Standard output: nothing to do.
    func commit() throws {
        guard let path, let temporaryPath else { return }
        guard rename(temporaryPath, path) == 0 else {
            throw CommandFailure("\(FileError(.write, path: path, errno: errno))")
        }
        self.temporaryPath = nil
    }

    /// Closes the file; one never committed is removed (an earlier file of its name stays as it was). Idempotent.
    func close() {
        if path != nil, descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
        if let temporaryPath { unlink(temporaryPath) }
        temporaryPath = nil
    }

    deinit { close() }
}
