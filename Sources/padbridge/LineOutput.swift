import Glibc

/// Writes whole lines to a standard stream, unbuffered, so a reader on the other end of a pipe sees
/// each line as soon as it is printed.
///
/// SIGPIPE is ignored by the commands (a reader that goes away must not kill a command before it released its
/// pads), so a write to a pipe nobody reads any more fails with EPIPE instead: `write` says so, and a command whose
/// output is its purpose (`monitor`, `record`, `list --watch`) ends then, releasing what it holds.
struct LineOutput: Sendable {
    static let standardOutput = LineOutput(descriptor: STDOUT_FILENO)
    static let standardError = LineOutput(descriptor: STDERR_FILENO)

    let descriptor: Int32

    /// Returns false when the text could not be written: the reader went away (EPIPE) or the descriptor failed.
    @discardableResult
    func write(_ line: String) -> Bool {
        writeRaw(line + "\n")
    }

    /// Writes text as it is (it carries its own newlines), in as few write(2)s as the descriptor takes. Returns false
    /// when it could not (see `write`).
    @discardableResult
    func writeRaw(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            bytes = bytes.dropFirst(written)
        }
        return true
    }

    /// What a command says when its standard output is gone.
    static func readerWentAway(_ consequence: String) -> StatusEvent {
        StatusEvent(.outputClosed, "standard output was closed (its reader went away): \(consequence)")
    }
}
