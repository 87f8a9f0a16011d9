import Glibc
@testable import PadLinux
import SystemPackage
import Testing

/// `TextFile`, the owner of padbridge's file reading and writing, on real files in a directory of each test's own.
@Suite("TextFile")
struct TextFileTests {
    /// A new directory under /tmp, removed with what is in it when the test ends.
    final class ScratchDirectory {
        let path: String

        init() {
            var template = Array("/tmp/padbridge-textfile-XXXXXX".utf8CString)
            path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        }

        var names: [String] { SysfsInputDevices.directoryEntries(path).sorted() }

        deinit {
            for name in names {
                let entry = "\(path)/\(name)"
                if unlink(entry) != 0 { rmdir(entry) }
            }
            rmdir(path)
        }
    }

    static func permissions(_ path: String) -> mode_t {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : 0o7777
    }

    /// The process's umask, from /proc/self/status (reading it with umask(2) would change it for every thread).
    static func umaskBits() -> mode_t? {
        guard let status = try? TextFile.contents(atPath: "/proc/self/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") })
        else { return nil }
        return mode_t(line.dropFirst("Umask:".count).trimmingPrefix(while: \.isWhitespace), radix: 8)
    }

    @Test func replaceGivesTheNewFileItsModeBeforeTheRenameWhileTheOldFileIsStillThere() throws {
        let directory = ScratchDirectory()
        let path = directory.path + "/paired-clients"
        try TextFile.write("old\n", to: path)
        // 0666 asks for bits the usual umask (022) takes away at open(2): only fchmod gives them.
        let wanted: FilePermissions = [.ownerReadWrite, .groupReadWrite, .otherReadWrite]
        var seenBeforeRename: (path: String, mode: mode_t, old: String)?
        try TextFile.replace(atPath: path, with: "new\n", permissions: wanted) { temporary in
            seenBeforeRename = (temporary, Self.permissions(temporary), (try? TextFile.contents(atPath: path)) ?? "?")
        }
        let seen = try #require(seenBeforeRename)
        #expect(seen.path.hasPrefix(path + ".tmp-"))
        #expect(seen.mode == 0o666, "umask \(String(Self.umaskBits() ?? 0, radix: 8))")
        #expect(seen.old == "old\n")
        #expect(try TextFile.contents(atPath: path) == "new\n")
        #expect(Self.permissions(path) == 0o666)
        #expect(directory.names == ["paired-clients"], "no temporary file left")
    }

    @Test func replacingAFileOfAnotherModeGivesTheModeAskedFor() throws {
        let directory = ScratchDirectory()
        let path = directory.path + "/identity"
        try TextFile.write("secret\n", to: path)
        #expect(chmod(path, 0o644) == 0)
        try TextFile.replace(atPath: path, with: "secret 2\n", permissions: .ownerReadWrite)
        #expect(Self.permissions(path) == 0o600)
        #expect(try TextFile.contents(atPath: path) == "secret 2\n")
    }

    /// The new file cannot be made (its name, the old one's plus `.tmp-` and 12 hex digits, is over NAME_MAX):
    /// the error names it, and the old file is as it was.
    @Test func aReplaceThatCannotWriteLeavesTheOldFileIntact() throws {
        let directory = ScratchDirectory()
        let path = directory.path + "/" + String(repeating: "p", count: 250)
        try TextFile.write("old\n", to: path)
        #expect(chmod(path, 0o640) == 0)
        let error = try #require(throws: FileError.self) {
            try TextFile.replace(atPath: path, with: "new\n", permissions: .ownerReadWrite)
        }
        #expect(error.operation == .write && error.cause == .fileNameTooLong)
        #expect(error.path.hasPrefix(path + ".tmp-") && error.description.contains(error.path), "\(error)")
        #expect(try TextFile.contents(atPath: path) == "old\n")
        #expect(Self.permissions(path) == 0o640)
        #expect(directory.names == [String(repeating: "p", count: 250)])
    }

    /// The rename fails (a directory holds the name): the error names the path, and the new file is removed.
    @Test func aReplaceThatCannotRenameRemovesItsNewFile() throws {
        let directory = ScratchDirectory()
        let path = directory.path + "/taken"
        #expect(mkdir(path, 0o700) == 0)
        let error = try #require(throws: FileError.self) {
            try TextFile.replace(atPath: path, with: "new\n", permissions: .ownerReadWrite)
        }
        #expect(error.operation == .replace && error.path == path && error.cause == .isDirectory)
        #expect(error.description.hasPrefix("cannot replace \(path): "), "\(error)")
        #expect(directory.names == ["taken"], "no temporary file left")
    }

    @Test func aReadErrorNamesThePath() throws {
        let directory = ScratchDirectory()
        let missing = directory.path + "/missing"
        let error = try #require(throws: FileError.self) { try TextFile.read(atPath: missing) }
        #expect(error.isMissingFile && error.operation == .read && error.path == missing)
        #expect(error.description == "cannot read \(missing): \(Errno.noSuchFileOrDirectory)")
        let textError = try #require(throws: TextFile.ReadError.self) { try TextFile.contents(atPath: missing) }
        #expect(textError == .unreadable(path: missing, cause: .noSuchFileOrDirectory))
        let directoryError = try #require(throws: FileError.self) { try TextFile.read(atPath: directory.path) }
        #expect(directoryError.cause == .isDirectory && directoryError.description.contains(directory.path))
    }

    @Test func aSymbolicLinkIsReadOnlyWhenFollowingIsAllowed() throws {
        let directory = ScratchDirectory()
        let target = directory.path + "/target"
        let link = directory.path + "/link"
        try TextFile.write("text\n", to: target)
        #expect(symlink(target, link) == 0)
        #expect(try TextFile.read(atPath: link).text == "text\n")
        let error = try #require(throws: FileError.self) { try TextFile.read(atPath: link, followingSymlink: false) }
        #expect(error.cause == .tooManySymbolicLinkLevels && error.path == link)
        #expect(error.description.contains("symbolic link"), "the remedy: \(error)")
    }

    @Test func aReadGivesTheOwnerAndModeAndStopsPastItsLimit() throws {
        let directory = ScratchDirectory()
        let path = directory.path + "/file"
        try TextFile.write("0123456789", to: path)
        #expect(chmod(path, 0o640) == 0)
        let whole = try TextFile.read(atPath: path, maximumBytes: 10)
        #expect(whole.text == "0123456789" && !whole.isOverLimit)
        #expect(whole.permissions.rawValue & 0o777 == 0o640 && whole.ownerID == geteuid())
        let cut = try TextFile.read(atPath: path, maximumBytes: 4)
        #expect(cut.isOverLimit && cut.text == "01234")
    }

    @Test func createMakesANewFileOnceWithItsModeExactly() throws {
        let directory = ScratchDirectory()
        let path = directory.path + "/console-token"
        try TextFile.create(atPath: path, with: "first\n", permissions: [.ownerReadWrite, .otherReadWrite])
        #expect(Self.permissions(path) == 0o606)
        let error = try #require(throws: FileError.self) {
            try TextFile.create(atPath: path, with: "second\n", permissions: .ownerReadWrite)
        }
        #expect(error.cause == .fileExists && error.path == path)
        #expect(try TextFile.contents(atPath: path) == "first\n")
    }

    @Test func makeDirectoriesMakesEachMissingOneAndReportsOneItCannotMake() throws {
        let directory = ScratchDirectory()
        let nested = directory.path + "/a/b"
        try TextFile.makeDirectories(nested, permissions: .ownerReadWriteExecute)
        try TextFile.makeDirectories(nested, permissions: .ownerReadWriteExecute)  // there already: fine
        #expect(Self.permissions(nested) == 0o700)
        let file = directory.path + "/file"
        try TextFile.write("", to: file)
        let error = try #require(throws: FileError.self) {
            try TextFile.makeDirectories(file + "/c", permissions: .ownerReadWriteExecute)
        }
        #expect(error.operation == .makeDirectory && error.path == file + "/c" && error.cause == .notDirectory)
        #expect(error.description.hasPrefix("cannot make \(file)/c: "), "\(error)")
        rmdir(nested)
        rmdir(directory.path + "/a")
    }

    @Test func removeIsFineWithAMissingFileAndReportsAnyOtherFailure() throws {
        let directory = ScratchDirectory()
        try TextFile.remove(atPath: directory.path + "/never-made")
        let subdirectory = directory.path + "/sub"
        #expect(mkdir(subdirectory, 0o700) == 0)
        let error = try #require(throws: FileError.self) { try TextFile.remove(atPath: subdirectory) }
        #expect(error.path == subdirectory && error.cause == .isDirectory)
    }

    @Test func writeEmptiesTheFileFirst() throws {
        let directory = ScratchDirectory()
        let path = directory.path + "/attribute"
        try TextFile.write("a longer text\n", to: path)
        try TextFile.write("short\n", to: path)
        #expect(try TextFile.contents(atPath: path) == "short\n")
    }
}
