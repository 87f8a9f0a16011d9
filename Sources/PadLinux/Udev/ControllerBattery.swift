public import PadCore

/// A pad's battery as its kernel driver shows it: a `power_supply` class device below the HID device, e.g.
/// hid-playstation's `.../0005:054C:0CE6.0019/power_supply/ps-controller-battery-<mac>/{capacity,status}`.
public enum ControllerBattery {
    /// The battery of the HID device at `hidDeviceSyspath`, or nil when its driver shows none (or it is gone).
    /// With several supplies (none known), the first in natural order.
    public static func state(ofHIDDevice hidDeviceSyspath: String) -> BatteryState? {
        let directory = "\(hidDeviceSyspath)/power_supply"
        for supply in SysfsInputDevices.directoryEntries(directory).sorted(by: SysfsInputDevices.naturalOrder) {
            let path = "\(directory)/\(supply)"
            if let state = state(
                capacity: SysfsInputDevices.readAttribute("\(path)/capacity"),
                status: SysfsInputDevices.readAttribute("\(path)/status"))
            {
                return state
            }
        }
        return nil
    }

    /// The state from the text of a supply's `capacity` (percent) and `status` ("Charging", "Full", "Discharging",
    /// "Not charging", "Unknown") attributes; nil without a readable capacity. Full counts as charging: the pad is
    /// on its cable.
    public static func state(capacity: String?, status: String?) -> BatteryState? {
        guard let capacity, let percent = Int(capacity.trimmingWhitespace), percent >= 0 else { return nil }
        let status = status?.trimmingWhitespace
        return BatteryState(percent: UInt8(min(percent, 100)), charging: status == "Charging" || status == "Full")
    }
}
