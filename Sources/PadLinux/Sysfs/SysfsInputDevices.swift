import Glibc
import SystemPackage

/// Reads the little of sysfs padbridge needs to find the nodes the kernel made for a virtual pad.
enum SysfsInputDevices {
    static let classRoot = "/sys/class/input"

    /// An input device under /sys/class/input.
    struct InputDevice: Hashable, Sendable {
        /// The resolved device directory, e.g. /sys/devices/virtual/misc/uhid/0005:054C:0CE6.0003/input/input12.
        var sysfsPath: String
        var name: String
        var uniq: String
        /// "/dev/input/eventN" (first evdev node; nil if evdev is not loaded).
        var eventNode: String?
    }

    /// Every input device (inputN, not its eventN/jsN children) whose `uniq` is `uniq`.
    static func inputDevices(withUniq uniq: String, root: String = classRoot) -> [InputDevice] {
        directoryEntries(root).filter { $0.hasPrefix("input") }.sorted(by: naturalOrder).compactMap { entry in
            let link = "\(root)/\(entry)"
            guard readAttribute("\(link)/uniq") == uniq else { return nil }
            let path = resolvedPath(link) ?? link
            return InputDevice(
                sysfsPath: path, name: readAttribute("\(link)/name") ?? "", uniq: uniq,
                eventNode: eventNodes(ofInputDevice: path).first)
        }
    }

    /// "/dev/input/eventN" for each evdev child of an input device directory.
    static func eventNodes(ofInputDevice path: String) -> [String] {
        directoryEntries(path).filter { $0.hasPrefix("event") }.sorted(by: naturalOrder).map { "/dev/input/\($0)" }
    }

    /// "/dev/hidrawN" of a HID device directory, if hidraw bound it.
    static func hidrawNode(ofHIDDevice path: String) -> String? {
        directoryEntries("\(path)/hidraw").filter { $0.hasPrefix("hidraw") }.sorted(by: naturalOrder).first
            .map { "/dev/\($0)" }
    }

    /// The HID device (its resolved sysfs directory) whose uevent says `HID_UNIQ=uniq`: how a pad without input
    /// devices (a Steam Deck's vendor interface under hid-generic) is found.
    static func hidDevice(withUniq uniq: String, root: String = "/sys/bus/hid/devices") -> String? {
        for entry in directoryEntries(root).sorted(by: naturalOrder) {
            let link = "\(root)/\(entry)"
            guard let uevent = readAttribute("\(link)/uevent"),
                uevent.split(separator: "\n").contains(where: { $0 == "HID_UNIQ=\(uniq)" })
            else { continue }
            return resolvedPath(link) ?? link
        }
        return nil
    }

    /// The HID device an input device belongs to: ".../<hid device>/input/inputN" → ".../<hid device>".
    static func hidDevice(ofInputDevice path: String) -> String? {
        var components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard components.count > 2, components[components.count - 2] == "input" else { return nil }
        components.removeLast(2)
        return components.joined(separator: "/")
    }

    /// The attribute's content without the trailing newline; nil if it cannot be read.
    static func readAttribute(_ path: String) -> String? {
        guard let descriptor = try? FileDescriptor.open(path, .readOnly, options: [.closeOnExec]) else { return nil }
        defer { try? descriptor.close() }
        var bytes = [UInt8](repeating: 0, count: 4096)
        guard let count = try? bytes.withUnsafeMutableBytes({ try descriptor.read(into: $0, retryOnInterrupt: true) })
        else { return nil }
        var text = bytes.prefix(count)
        while text.last == UInt8(ascii: "\n") { text.removeLast() }
        return String(decoding: text, as: UTF8.self)
    }

    static func directoryEntries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = DirectoryListing.entryName(entry)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// "event2" before "event10".
    static func naturalOrder(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.drop { !$0.isNumber }, right = rhs.drop { !$0.isNumber }
        let leftPrefix = lhs.prefix { !$0.isNumber }, rightPrefix = rhs.prefix { !$0.isNumber }
        if leftPrefix != rightPrefix { return leftPrefix < rightPrefix }
        if let leftNumber = Int(left), let rightNumber = Int(right) { return leftNumber < rightNumber }
        return lhs < rhs
    }
}
