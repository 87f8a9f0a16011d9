import CLibUdev
import Glibc
public import PadCore
import SystemPackage

/// Owns one libudev context (`struct udev *`): the one place it is created and unreferenced. Reads what udev knows
/// of pads' nodes and the devices above them, and makes hotplug monitors.
///
/// Works with and without udevd. Without it (containers, the test VM) libudev reads sysfs directly: properties are
/// then only the kernel's uevent variables (DEVNAME, MAJOR, HID_ID, ...), never udevd's (ID_INPUT_JOYSTICK, ...).
///
/// Not `Sendable`: libudev objects are not thread-safe (one context and everything made from it must stay on one
/// thread at a time). Use it from the thread that made it, like the `DeviceEventLoop`.
public final class UdevContext {
    let handle: OpaquePointer

    public init() throws(DeviceAccessError) {
        guard let handle = udev_new() else {
            throw .creating("udev_new", Errno(rawValue: errno == 0 ? ENOMEM : errno))
        }
        self.handle = handle
    }

    deinit { udev_unref(handle) }

    /// How long `padNodeRecords()` waits, at most, for udevd to finish with nodes the kernel has only just made.
    public static let udevdProcessingGraceMilliseconds: UInt64 = 10_000

    /// Every input event node (`/dev/input/eventN`), hidraw node and LED class device with the devices above it:
    /// event nodes first, then hidraw nodes, then LEDs, each in natural order of their sysnames (event2 before
    /// event10).
    ///
    /// Where udevd runs, a node the kernel has made but udevd has not yet processed is waited for (udevd's
    /// announcement that it has, up to `grace`): until then the node lacks udevd's properties, `ID_PATH` among them,
    /// and a pad without a serial would get a fingerprint other than the one it keeps once udevd is done (and its
    /// permissions are not yet set either). A node still unprocessed after the grace is listed as it is.
    /// `onWaiting` is told the device nodes waited for, before the wait.
    public func padNodeRecords(
        udevdGraceMilliseconds grace: UInt64 = udevdProcessingGraceMilliseconds,
        onWaiting: (_ devnodes: [String]) -> Void = { _ in }
    ) throws(DeviceAccessError) -> [UdevDeviceRecord] {
        let listing = try readPadNodeRecords()
        let unprocessed = listing.records.filter { listing.unprocessedByUdevd.contains($0.syspath) }
        guard !unprocessed.isEmpty, UdevMonitor.Source.automatic() == .udev else { return listing.records }
        onWaiting(unprocessed.compactMap(\.devnode))
        waitForUdevd(toProcess: unprocessed.map(\.syspath), within: grace)
        return try readPadNodeRecords().records
    }

    /// `padNodeRecords()` as sysfs and udevd's database have it now, with the syspaths of the event and hidraw
    /// nodes udevd has not processed (all of them without udevd).
    private func readPadNodeRecords() throws(DeviceAccessError)
        -> (records: [UdevDeviceRecord], unprocessedByUdevd: Set<String>)
    {
        // Only event and hidraw nodes can be pad nodes. Matched by name, the others (inputN, jsN, mouseN) are
        // skipped before libudev resolves their paths and reads their uevent files. (Several subsystem matches are
        // alternatives, and so are several sysname matches; so LEDs, whose names are the drivers', take a second
        // enumeration.)
        let syspaths = try syspaths(subsystems: ["input", "hidraw"], sysnames: ["event*", "hidraw*"])
            + syspaths(subsystems: ["leds"], sysnames: [])
        // The ancestors the nodes share (a DualSense's four nodes hang off one HID device) are read once.
        var ancestors: [String: [UdevAncestorRecord]] = [:]
        var unprocessed = Set<String>()
        let records = syspaths.compactMap { syspath -> UdevDeviceRecord? in
            guard let (record, processed) = record(syspath: syspath, sharing: &ancestors), Self.isPadNode(record) else {
                return nil
            }
            // LED class devices have no device number, so udevd keeps no database entry for them and libudev never
            // calls them processed; nothing of theirs goes into a fingerprint.
            if !processed && record.devnode != nil { unprocessed.insert(record.syspath) }
            return record
        }
        let order = ["input": 0, "hidraw": 1, "leds": 2]
        let sorted = records.sorted { lhs, rhs in
            lhs.subsystem != rhs.subsystem
                ? order[lhs.subsystem, default: 3] < order[rhs.subsystem, default: 3]
                : SysfsInputDevices.naturalOrder(lhs.sysname, rhs.sysname)
        }
        return (sorted, unprocessed)
    }

    /// Returns once udevd has processed every device of `syspaths` still there, or `grace` has passed. Wakes on
    /// udevd's announcements (its monitor, made before the first check, so none is missed), never on a timer.
    /// Best effort: without a monitor, or once it fails, the nodes are listed as they are.
    private func waitForUdevd(toProcess syspaths: [String], within graceMilliseconds: UInt64) {
        guard let monitor = try? UdevMonitor(context: self, source: .udev) else { return }
        let deadline = MonotonicInstant.now().adding(milliseconds: graceMilliseconds)
        var waiting = syspaths
        while true {
            waiting = waiting.filter { isUnprocessedByUdevd(syspath: $0) }
            let now = MonotonicInstant.now()
            guard !waiting.isEmpty, now < deadline else { return }
            var poller = pollfd(fd: monitor.descriptorForPolling.rawValue, events: Int16(POLLIN), revents: 0)
            let left = Int32(min((deadline.nanoseconds - now.nanoseconds) / 1_000_000 + 1, UInt64(Int32.max)))
            let ready = poll(&poller, 1, left)
            if ready < 0 && errno != EINTR { return }
            if ready > 0 && poller.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return }
            _ = monitor.pendingChanges()
        }
    }

    /// Whether the device is there and udevd has not processed it yet.
    private func isUnprocessedByUdevd(syspath: String) -> Bool {
        guard let device = udev_device_new_from_syspath(handle, syspath) else { return false }
        defer { udev_device_unref(device) }
        return udev_device_get_is_initialized(device) == 0
    }

    /// The syspaths of the devices of any of `subsystems` named as any of `sysnames` (globs; none: any name).
    private func syspaths(subsystems: [String], sysnames: [String]) throws(DeviceAccessError) -> [String] {
        guard let enumeration = udev_enumerate_new(handle) else {
            throw .creating("udev_enumerate_new", Errno(rawValue: errno == 0 ? ENOMEM : errno))
        }
        defer { udev_enumerate_unref(enumeration) }
        // No `add_match_is_initialized`: without udevd no device is.
        for subsystem in subsystems { udev_enumerate_add_match_subsystem(enumeration, subsystem) }
        for sysname in sysnames { udev_enumerate_add_match_sysname(enumeration, sysname) }
        let status = udev_enumerate_scan_devices(enumeration)
        guard status >= 0 else {
            throw .controlling("/sys", operation: "udev_enumerate_scan_devices", Errno(rawValue: -status))
        }
        var syspaths: [String] = []
        var entry = udev_enumerate_get_list_entry(enumeration)
        while let current = entry {
            if let name = udev_list_entry_get_name(current) { syspaths.append(String(cString: name)) }
            entry = udev_list_entry_get_next(current)
        }
        return syspaths
    }

    /// The record of one device by its sysfs path, with every ancestor; nil when the device is gone (or was never
    /// there). Meant for nodes (`.../input/input12/event5`, `.../hidraw/hidraw0`), works for any device.
    public func record(syspath: String) -> UdevDeviceRecord? {
        var known: [String: [UdevAncestorRecord]] = [:]
        return record(syspath: syspath, sharing: &known)?.record
    }

    /// `record(syspath:)`, taking what it already knows from `known`: for an ancestor's syspath, that ancestor's
    /// record followed by all of its own ancestors'. Adds what it reads. `processedByUdevd`: udevd has a database
    /// entry for the device (never without udevd).
    func record(
        syspath: String, sharing known: inout [String: [UdevAncestorRecord]]
    ) -> (record: UdevDeviceRecord, processedByUdevd: Bool)? {
        guard let device = udev_device_new_from_syspath(handle, syspath) else { return nil }
        defer { udev_device_unref(device) }
        var ancestors: [UdevAncestorRecord] = []
        var readPaths: [String] = []
        // A parent belongs to its child (no unref); `get_parent` skips sysfs directories that are not devices.
        var parent = udev_device_get_parent(device)
        while let current = parent {
            let ancestorPath = Self.string(udev_device_get_syspath(current)) ?? ""
            if let rest = known[ancestorPath] {
                ancestors += rest
                break
            }
            ancestors.append(Self.ancestorRecord(current))
            readPaths.append(ancestorPath)
            parent = udev_device_get_parent(current)
        }
        for (index, path) in readPaths.enumerated() { known[path] = Array(ancestors[index...]) }
        let record = UdevDeviceRecord(
            subsystem: Self.string(udev_device_get_subsystem(device)) ?? "",
            sysname: Self.string(udev_device_get_sysname(device)) ?? "",
            syspath: Self.string(udev_device_get_syspath(device)) ?? syspath,
            devnode: Self.string(udev_device_get_devnode(device)),
            properties: Self.properties(device),
            ancestors: ancestors)
        return (record, udev_device_get_is_initialized(device) != 0)
    }

    /// The sysfs attributes an ancestor record keeps where they exist (see `UdevAncestorRecord.attributes`): an
    /// input device's identity, a USB device's. Other ancestors have none of them, and each attempt to read one
    /// is system calls.
    static func recordedAttributes(subsystem: String?, devtype: String?) -> [String] {
        switch subsystem {
        case "input": ["uniq", "phys", "name", "id/bustype", "id/vendor", "id/product", "id/version"]
        case "usb" where devtype == "usb_device": ["serial", "idVendor", "idProduct", "devpath"]
        default: []
        }
    }

    /// A record discovery groups: an event or hidraw node the kernel made a device node for, or a LED class device.
    static func isPadNode(_ record: UdevDeviceRecord) -> Bool {
        switch record.subsystem {
        case "input": record.sysname.hasPrefix("event") && record.devnode != nil
        case "hidraw": record.devnode != nil
        case "leds": true
        default: false
        }
    }

    static func ancestorRecord(_ device: OpaquePointer) -> UdevAncestorRecord {
        let subsystem = string(udev_device_get_subsystem(device)), devtype = string(udev_device_get_devtype(device))
        var attributes: [String: String] = [:]
        for name in recordedAttributes(subsystem: subsystem, devtype: devtype) {
            if let value = string(udev_device_get_sysattr_value(device, name)) { attributes[name] = value }
        }
        return UdevAncestorRecord(
            subsystem: subsystem,
            devtype: devtype,
            sysname: string(udev_device_get_sysname(device)) ?? "",
            syspath: string(udev_device_get_syspath(device)) ?? "",
            driver: string(udev_device_get_driver(device)),
            properties: properties(device),
            attributes: attributes)
    }

    static func properties(_ device: OpaquePointer) -> [String: String] {
        var properties: [String: String] = [:]
        var entry = udev_device_get_properties_list_entry(device)
        while let current = entry {
            if let name = udev_list_entry_get_name(current) {
                properties[String(cString: name)] = string(udev_list_entry_get_value(current)) ?? ""
            }
            entry = udev_list_entry_get_next(current)
        }
        return properties
    }

    static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
