import Glibc
import PadCore
import PadLinux

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
        var generator = SystemRandomNumberGenerator()
        let token = HexBytes.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        do throws(FileError) {
            try TextFile.makeDirectories(directory, permissions: .ownerReadWriteExecute)
            try TextFile.create(atPath: path, with: token + "\n", permissions: .ownerReadWrite)
            return token
        } catch where error.cause == .fileExists && error.path == path {
            return try read(path)
        } catch {
            throw ConsoleTokenError(description: "\(error)")
        }
    }

    /// The token in `directory`'s file, which must be there already (`padbridge console --print-url`).
    public static func readExisting(inDirectory directory: String) throws(ConsoleTokenError) -> String {
        try read(directory + "/" + fileName)
    }

    static func read(_ path: String) throws(ConsoleTokenError) -> String {
        let contents: TextFile.Contents
        do throws(FileError) {
            contents = try TextFile.read(atPath: path, maximumBytes: 256, followingSymlink: false)
        } catch where error.isMissingFile {
            throw ConsoleTokenError(description: "no console token at \(path): start `padbridge console` (with the same "
                + "--config-dir or --system) first; it makes one")
        } catch {
            throw ConsoleTokenError(description: "\(error)")
        }
        let mode = contents.permissions.rawValue & 0o777
        guard mode & 0o077 == 0 else {
            throw ConsoleTokenError(description: "\(path) may be read by others (mode \(String(mode, radix: 8))): "
                + "chmod 600 \(path), or delete it to make a new token")
        }
        guard contents.ownerID == geteuid() else {
            throw ConsoleTokenError(description: "\(path) belongs to another user (uid \(contents.ownerID)): delete it to make a new token")
        }
        let text = String(decoding: contents.bytes.prefix(256), as: UTF8.self).filter { !$0.isWhitespace }
        guard text.count >= 32, text.allSatisfy(\.isHexDigit) else {
            throw ConsoleTokenError(description: "\(path) does not hold a console token: delete it to make a new one")
        }
        return text
    }
}
