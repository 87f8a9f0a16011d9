internal import Glibc
public import SystemPackage

/// The names in a directory (no `.` and `..`), for the remap profiles directory.
public enum DirectoryListing {
    /// The entries' names, unsorted. Throws the cause when the directory cannot be opened (`.noSuchFileOrDirectory`
    /// when it does not exist).
    public static func names(in path: String) throws(Errno) -> Set<String> {
        guard let directory = opendir(path) else { throw Errno(rawValue: errno) }
        defer { closedir(directory) }
        var names: Set<String> = []
        while let entry = readdir(directory) {
            let name = entryName(entry)
            if name != "." && name != ".." { names.insert(name) }
        }
        return names
    }

    /// The name of a `readdir` entry, read up to its NUL and no further: the kernel's record is only as long as
    /// its name (`d_reclen`), so the last entry of libc's buffer may end before the 256 bytes `d_name` declares.
    /// (Copying `d_name` whole, as `withUnsafeBytes(of:)` does, read past the buffer: AddressSanitizer's
    /// heap-buffer-overflow on /proc/PID/fd.)
    static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        // `pointee` is addressed in place: this is the entry's own name, not a copy.
        withUnsafeMutablePointer(to: &entry.pointee.d_name) { name in
            String(cString: UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self))
        }
    }
}
