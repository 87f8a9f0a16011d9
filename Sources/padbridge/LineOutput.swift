import Glibc

/// Writes whole lines to a standard stream, unbuffered, so a reader on the other end of a pipe sees
/// each line as soon as it is printed.
struct LineOutput: Sendable {
    static let standardOutput = LineOutput(descriptor: STDOUT_FILENO)
    static let standardError = LineOutput(descriptor: STDERR_FILENO)

    let descriptor: Int32

    func write(_ line: String) {
        writeRaw(line + "\n")
    }

    /// Writes text as it is (it carries its own newlines), in as few write(2)s as the descriptor takes.
    func writeRaw(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return  // The reader went away (EPIPE); nothing useful left to do with this text.
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
