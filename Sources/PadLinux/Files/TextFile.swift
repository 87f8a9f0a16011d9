import Glibc
public import SystemPackage

/// A whole UTF-8 text file read into a string (profiles), or written: one owner of the descriptor, closed before
/// returning.
public enum TextFile {
    /// Why a text file could not be read; the description names the file and the cause.
    public enum ReadError: Error, CustomStringConvertible, Equatable {
        case unreadable(path: String, cause: Errno)
        case notUTF8(path: String)

        public var description: String {
            switch self {
            case let .unreadable(path, cause):
                let remedy = cause == .permissionDenied ? " (check the file's permissions)" : ""
                return "cannot read \(path): \(cause)\(remedy)"
            case let .notUTF8(path):
                return "\(path) is not UTF-8 text"
            }
        }
    }

    /// The file's contents. Reads until end of file; fails on anything that is not valid UTF-8.
    public static func contents(atPath path: String) throws(ReadError) -> String {
        let bytes = try self.bytes(atPath: path)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8(path: path) }
        return text
    }

    /// The file's bytes, read until end of file.
    static func bytes(atPath path: String) throws(ReadError) -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            let descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
            try descriptor.closeAfter {
                var chunk = [UInt8](repeating: 0, count: 16 * 1024)
                while true {
                    let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                    if count == 0 { break }
                    bytes += chunk[..<count]
                }
            }
        } catch {
            throw .unreadable(path: path, cause: error as? Errno ?? .ioError)
        }
        return bytes
    }

    /// Writes `text` to `path` (created 0644 or emptied) in one write(2): sysfs attributes, the hiding service's
    /// small files. Returns false (errno set) when it could not.
    static func write(_ text: String, to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
    }
}
