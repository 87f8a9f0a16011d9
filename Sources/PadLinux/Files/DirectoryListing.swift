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
            let name = withUnsafeBytes(of: entry.pointee.d_name) { buffer in
                String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.insert(name) }
        }
        return names
    }
}
