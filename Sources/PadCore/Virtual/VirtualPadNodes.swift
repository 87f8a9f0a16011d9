/// Where readers find a virtual pad once the kernel made it.
public struct VirtualPadNodes: Sendable, Hashable {
    /// "/dev/input/eventN" paths. DualSense: gamepad, motion sensors, touchpad (then any other node the driver adds).
    public var eventNodes: [String]
    /// "/dev/hidrawN" for a uhid pad; nil for uinput pads.
    public var hidrawNode: String?
    /// The device's sysfs directory: the input device for uinput, the HID device for uhid.
    public var sysfsPath: String

    public init(eventNodes: [String], hidrawNode: String?, sysfsPath: String) {
        self.eventNodes = eventNodes
        self.hidrawNode = hidrawNode
        self.sysfsPath = sysfsPath
    }
}
