import Glibc

/// Writes whole lines to a standard stream, unbuffered, so a reader on the other end of a pipe sees
/// each line as soon as it is printed.
struct LineOutput: Sendable {
    static let standardOutput = LineOutput(descriptor: STDOUT_FILENO)
    static let standardError = LineOutput(descriptor: STDERR_FILENO)

    let descriptor: Int32

    func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return  // The reader went away (EPIPE); nothing useful left to do with this line.
            }
            offset += written
        }
    }
}
