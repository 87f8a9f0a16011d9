/// What udev knows of one device node (an input event node or a hidraw node) and of the devices above it:
/// the raw material for grouping and fingerprinting. Plain strings, so tests replay property sets recorded on
/// real machines (`padbridge list --udev-records`) without a kernel.
public struct UdevDeviceRecord: Sendable, Hashable, Codable {
    /// "input" or "hidraw".
    public var subsystem: String
    /// "event3", "hidraw0".
    public var sysname: String
    public var syspath: String
    /// "/dev/input/event3"; nil for devices without a node.
    public var devnode: String?
    /// The node's own udev properties (uevent variables plus, where udevd runs, its database: ID_INPUT_JOYSTICK, ...).
    public var properties: [String: String]
    /// The devices above this node, nearest first (for an event node: its inputN device, then the HID device,
    /// then the USB interface or Bluetooth connection, ...), up to the root.
    public var ancestors: [UdevAncestorRecord]

    public init(
        subsystem: String, sysname: String, syspath: String, devnode: String?,
        properties: [String: String], ancestors: [UdevAncestorRecord]
    ) {
        self.subsystem = subsystem
        self.sysname = sysname
        self.syspath = syspath
        self.devnode = devnode
        self.properties = properties
        self.ancestors = ancestors
    }
}

/// One device above a node, as udev sees it.
public struct UdevAncestorRecord: Sendable, Hashable, Codable {
    /// "input", "hid", "usb", "bluetooth", "misc", ...; nil where sysfs has none.
    public var subsystem: String?
    /// "usb_interface", "usb_device", ...
    public var devtype: String?
    public var sysname: String
    public var syspath: String
    /// The bound driver ("playstation", "xpad", "usbhid", ...).
    public var driver: String?
    public var properties: [String: String]
    /// Selected sysfs attributes that uevent does not carry: of an input device "uniq", "phys", "name",
    /// "id/bustype", "id/vendor", "id/product", "id/version"; of a USB device "serial", "idVendor", "idProduct",
    /// "devpath".
    public var attributes: [String: String]

    public init(
        subsystem: String?, devtype: String?, sysname: String, syspath: String, driver: String?,
        properties: [String: String], attributes: [String: String]
    ) {
        self.subsystem = subsystem
        self.devtype = devtype
        self.sysname = sysname
        self.syspath = syspath
        self.driver = driver
        self.properties = properties
        self.attributes = attributes
    }
}
