import CPadLinux
import CLibUdev
import Glibc
import SystemPackage

/// One device change a `UdevMonitor` reports.
public struct UdevDeviceChange: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case add, remove
        /// A driver bound the device: for `hid`, the driver (hid-playstation, hid-generic, ...) finished probing.
        case bind, unbind
        case change
        /// Any other action (move, online, offline), as the kernel names it.
        case other(String)

        init(_ name: String) {
            switch name {
            case "add": self = .add
            case "remove": self = .remove
            case "bind": self = .bind
            case "unbind": self = .unbind
            case "change": self = .change
            default: self = .other(name)
            }
        }
    }

    public var action: Action
    /// "input" (inputN devices and their eventN, jsN, mouseN nodes), "hidraw" or "hid".
    public var subsystem: String
    public var sysname: String
    public var syspath: String
    /// "/dev/input/event5", "/dev/hidraw0"; nil for devices without a node (inputN, HID devices).
    public var devnode: String?
    /// The bound driver, where the announcement names one (`bind`: "playstation").
    public var driver: String?

    public init(
        action: Action, subsystem: String, sysname: String, syspath: String, devnode: String?, driver: String? = nil
    ) {
        self.action = action
        self.subsystem = subsystem
        self.sysname = sysname
        self.syspath = syspath
        self.devnode = devnode
        self.driver = driver
    }
}

/// Owns one libudev monitor (`struct udev_monitor *`) for the subsystems pads live in: `input`, `hidraw` and `hid`.
///
/// It receives from the moment it is made: make the monitor first, then enumerate (`UdevContext.padNodeRecords`),
/// then watch it on the loop (`DeviceEventLoop.watch(_:onChange:)`), and nothing that happens in between is lost
/// (changes queue in the socket meanwhile; a device can then be both enumerated and announced as added).
///
/// Not `Sendable`, like its `UdevContext`; keeps the context alive.
public final class UdevMonitor {
    /// Where announcements come from.
    public enum Source: String, Sendable, Hashable {
        /// udevd's re-broadcast, after its rules ran (nodes have their permissions and udevd's properties).
        case udev
        /// The kernel's own uevents: the only source without udevd (containers, the test VM).
        case kernel

        /// udevd's control socket: while udevd runs it accepts connections there. The file stays behind when
        /// udevd exits, so its existence alone is not enough.
        public static let udevControlSocket = "/run/udev/control"

        /// `.udev` when udevd runs (it accepts a connection on its control socket), else `.kernel`.
        public static func automatic() -> Source {
            choosing(udevdRunning: CPadLinux_unixSocketIsListening(udevControlSocket) != 0)
        }

        static func choosing(udevdRunning: Bool) -> Source { udevdRunning ? .udev : .kernel }
    }

    /// The subsystems watched.
    public static let subsystems = ["input", "hidraw", "hid"]

    public let source: Source
    private let context: UdevContext
    private let handle: OpaquePointer

    /// Makes the monitor and starts receiving at once. `source` defaults to udevd's when it runs.
    public init(context: UdevContext, source: Source = .automatic()) throws(DeviceAccessError) {
        guard let handle = udev_monitor_new_from_netlink(context.handle, source.rawValue) else {
            throw .creating("udev_monitor_new_from_netlink(\(source.rawValue))", Errno(rawValue: errno == 0 ? EINVAL : errno))
        }
        self.context = context
        self.source = source
        self.handle = handle
        // From here on a throw runs deinit, the one place the monitor is unreferenced.
        for subsystem in Self.subsystems {
            let status = udev_monitor_filter_add_match_subsystem_devtype(handle, subsystem, nil)
            guard status >= 0 else {
                throw .controlling(
                    "udev monitor", operation: "udev_monitor_filter_add_match_subsystem_devtype(\(subsystem))",
                    Errno(rawValue: -status))
            }
        }
        // A burst of hotplug (a hub with several pads) must not overflow the socket; best effort (needs privilege).
        _ = udev_monitor_set_receive_buffer_size(handle, 1 << 20)
        let status = udev_monitor_enable_receiving(handle)
        guard status >= 0 else {
            throw .controlling("udev monitor", operation: "udev_monitor_enable_receiving", Errno(rawValue: -status))
        }
    }

    deinit { udev_monitor_unref(handle) }

    /// For registering with the event loop only (the monitor owns it).
    var descriptorForPolling: FileDescriptor { FileDescriptor(rawValue: udev_monitor_get_fd(handle)) }

    /// Every change queued now (never blocks: the socket is non-blocking).
    func pendingChanges() -> [UdevDeviceChange] {
        var changes: [UdevDeviceChange] = []
        while let device = udev_monitor_receive_device(handle) {
            defer { udev_device_unref(device) }
            guard let action = UdevContext.string(udev_device_get_action(device)),
                let subsystem = UdevContext.string(udev_device_get_subsystem(device)),
                let syspath = UdevContext.string(udev_device_get_syspath(device))
            else { continue }
            changes.append(UdevDeviceChange(
                action: .init(action), subsystem: subsystem,
                sysname: UdevContext.string(udev_device_get_sysname(device)) ?? "", syspath: syspath,
                devnode: UdevContext.string(udev_device_get_devnode(device)),
                driver: UdevContext.string(udev_device_get_driver(device))))
        }
        return changes
    }
}

extension DeviceEventLoop {
    /// Calls `onChange` on the loop thread for each device change `monitor` receives, until the returned watch is
    /// cancelled or dropped.
    public func watch(
        _ monitor: UdevMonitor, onChange: @escaping (UdevDeviceChange) -> Void
    ) throws(DeviceAccessError) -> LoopWatch {
        let token = try watch(monitor.descriptorForPolling, path: "udev monitor (\(monitor.source.rawValue))") {
            [unowned monitor] _ throws(DeviceAccessError) in
            for change in monitor.pendingChanges() { onChange(change) }
        }
        return LoopWatch(loop: self, token: token, watched: monitor)
    }
}
