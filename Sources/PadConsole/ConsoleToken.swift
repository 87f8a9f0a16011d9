import Glibc

/// Why the console's token could not be read or made, with what to do.
public struct ConsoleTokenError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// The console's access token: 32 random bytes as 64 hex digits in `console-token` in the config directory, made on
/// first use with mode 0600 and treated like an ssh key (a file others may read is refused, naming the `chmod`).
/// Deleting the file makes a new token next time, so old addresses stop working.
public enum ConsoleToken {
    public static let fileName = "console-token"

    /// The token in `directory`'s file, made (with the directory, 0700) when there is none.
    public static func loadOrCreate(inDirectory directory: String) throws(ConsoleTokenError) -> String {
        let path = directory + "/" + fileName
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw ConsoleTokenError(description: "cannot make \(directory): \(String(cString: strerror(errno)))")
        }
        let made = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if made >= 0 {
            defer { close(made) }
            var generator = SystemRandomNumberGenerator()
            let token = (0..<32).map { _ -> String in
                let byte = UInt8.random(in: 0...255, using: &generator)
                return byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
            }.joined()
            let line = Array((token + "\n").utf8)
            guard write(made, line, line.count) == line.count else {
                unlink(path)
                throw ConsoleTokenError(description: "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            return token
        }
        guard errno == EEXIST else {
            throw ConsoleTokenError(description: "cannot make \(path): \(String(cString: strerror(errno)))")
        }
        return try read(path)
    }

    /// The token in `directory`'s file, which must be there already (`padbridge console --print-url`).
    public static func readExisting(inDirectory directory: String) throws(ConsoleTokenError) -> String {
        let path = directory + "/" + fileName
        if access(path, F_OK) != 0 && errno == ENOENT {
            throw ConsoleTokenError(description: "no console token at \(path): start `padbridge console` (with the same "
                + "--config-dir or --system) first; it makes one")
        }
        return try read(path)
    }

    static func read(_ path: String) throws(ConsoleTokenError) -> String {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ConsoleTokenError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw ConsoleTokenError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw ConsoleTokenError(description: "\(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))): "
                + "chmod 600 \(path), or delete it to make a new token")
        }
        guard info.st_uid == geteuid() else {
            throw ConsoleTokenError(description: "\(path) belongs to another user (uid \(info.st_uid)): delete it to make a new token")
        }
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = Glibc.read(descriptor, &bytes, bytes.count)
        let text = String(decoding: bytes.prefix(max(0, count)), as: UTF8.self).filter { !$0.isWhitespace }
        guard text.count >= 32, text.allSatisfy(\.isHexDigit) else {
            throw ConsoleTokenError(description: "\(path) does not hold a console token: delete it to make a new one")
        }
        return text
    }
}
