import CLibEvdev
import PadCore

/// The kernel's key names, as profiles write them (`key:space` for `KEY_SPACE`), from libevdev's tables: the names
/// the kernel headers give, never a list of our own.
public enum KeyboardKeyNames {
    /// The code of `name` (lower case, without `KEY_`), nil when the kernel has no such keyboard key.
    public static func code(forName name: String) -> UInt16? {
        guard !name.isEmpty, name == name.lowercased(), !name.hasPrefix("key_") else { return nil }
        let code = libevdev_event_code_from_name(UInt32(EV_KEY), "KEY_" + name.uppercased())
        guard code >= 0, code <= Int32(UInt16.max), KeyboardKey.isKeyboardCode(UInt16(code)) else { return nil }
        return UInt16(code)
    }

    /// The profile's name of a keyboard key's code (`57` -> `space`), nil for a code libevdev does not name.
    public static func name(forCode code: UInt16) -> String? {
        guard let name = libevdev_event_code_get_name(UInt32(EV_KEY), UInt32(code)) else { return nil }
        let text = String(cString: name)
        guard text.hasPrefix("KEY_") else { return nil }
        return text.dropFirst(4).lowercased()
    }

    /// What error messages say is allowed.
    public static let hint =
        "write key:NAME with the kernel's name of the key without KEY_, in lower case (key:space, key:leftctrl, "
        + "key:f5, key:a; the names are in /usr/include/linux/input-event-codes.h), mouse:left|right|middle|side|extra, "
        + "or scroll:up|down|left|right"
}
