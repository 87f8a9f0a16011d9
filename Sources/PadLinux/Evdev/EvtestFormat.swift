import CLibEvdev
import Glibc
public import PadCore

/// The text `evtest` prints for a device and its events (`padbridge monitor --raw`), so its output can be read and
/// diffed like evtest's. Formats follow evtest 1.35 (`print_device_info`, `print_absdata`, `print_events`).
///
/// Names come from libevdev (`libevdev_event_type_get_name`, `libevdev_event_code_get_name`,
/// `libevdev_property_get_name`); "?" where it has none, as evtest prints. Where one code has two names (0x130 is
/// BTN_A and BTN_SOUTH) both print the newer one: the kernel suite compares these lines with evtest 1.35's own for
/// a virtual Xbox 360 pad and all three DualSense nodes and finds them equal, names included. A code newer than
/// evtest's built-in table would still differ: "?" there, libevdev's name here.
public enum EvtestFormat {
    /// evtest's device header, from "Input driver version is ..." through "Properties:" and its entries.
    public static func headerLines(_ info: EvdevDeviceInfo) -> [String] {
        let version = info.driverVersion
        var lines = [
            "Input driver version is \(version >> 16).\((version >> 8) & 0xff).\(version & 0xff)",
            "Input device ID: bus 0x\(hex(info.bus)) vendor 0x\(hex(info.vendor)) product 0x\(hex(info.product)) "
                + "version 0x\(hex(info.version))",
            "Input device name: \"\(info.name)\"",
            "Supported events:",
        ]
        let stateTypes: Set<UInt16> = [UInt16(EV_LED), UInt16(EV_SND), UInt16(EV_SW)]
        for type in info.eventTypes where type < UInt16(EV_MAX) && type != UInt16(EV_REP) {
            lines.append("  Event type \(type) (\(typeName(type)))")
            if type == UInt16(EV_SYN) { continue }
            for code in info.codes[type] ?? [] where code < UInt16(KEY_MAX) {
                if stateTypes.contains(type) {
                    let state = (info.states[type]?[code] ?? 0) != 0 ? 1 : 0
                    lines.append("    Event code \(code) (\(codeName(type, code))) state \(state)")
                } else {
                    lines.append("    Event code \(code) (\(codeName(type, code)))")
                }
                if type == UInt16(EV_ABS) {
                    lines += absoluteInfoLines(info.absoluteInfo[code] ?? EvdevAbsoluteInfo(minimum: 0, maximum: 0))
                }
            }
        }
        if info.eventTypes.contains(UInt16(EV_REP)) {
            let repeating = info.keyRepeat ?? EvdevDeviceInfo.KeyRepeat(delay: 0, period: 0)
            lines.append("Key repeat handling:")
            lines.append("  Repeat type \(EV_REP) (\(typeName(UInt16(EV_REP))))")
            for (code, value) in [repeating.delay, repeating.period].enumerated() {
                lines.append("    Repeat code \(code) (\(codeName(UInt16(EV_REP), UInt16(code))))")
                lines.append("      Value \(padded(value))")
            }
        }
        lines.append("Properties:")
        for property in info.properties where property < UInt16(INPUT_PROP_MAX) {
            let name = libevdev_property_get_name(UInt32(property)).map { String(cString: $0) } ?? "?"
            lines.append("  Property type \(property) (\(name))")
        }
        return lines
    }

    /// evtest's lines for one axis: value, min and max always; fuzz, flat and resolution when not zero.
    static func absoluteInfoLines(_ info: EvdevAbsoluteInfo) -> [String] {
        let fields: [(String, Int32)] = [
            ("Value", info.value), ("Min  ", info.minimum), ("Max  ", info.maximum), ("Fuzz ", info.fuzz),
            ("Flat ", info.flat), ("Resolution ", info.resolution),
        ]
        return fields.enumerated().compactMap { index, field in
            index < 3 || field.1 != 0 ? "      \(field.0) \(padded(field.1))" : nil
        }
    }

    /// One event as evtest prints it: `Event: time 1700000000.123456, type 1 (EV_KEY), code 304 (BTN_SOUTH),
    /// value 1`, SYN events as separator lines, MSC_SCAN and MSC_RAW values in hex.
    public static func eventLine(_ event: EvdevEvent) -> String {
        let microseconds = String(event.microseconds)
        let time = "Event: time \(event.seconds)."
            + String(repeating: "0", count: max(0, 6 - microseconds.count)) + microseconds + ", "
        if event.type == UInt16(EV_SYN) {
            let name = codeName(event.type, event.code)
            switch Int32(event.code) {
            case SYN_MT_REPORT: return time + "++++++++++++++ \(name) ++++++++++++"
            case SYN_DROPPED: return time + ">>>>>>>>>>>>>> \(name) <<<<<<<<<<<<"
            default: return time + "-------------- \(name) ------------"
            }
        }
        let value =
            if event.type == UInt16(EV_MSC), event.code == UInt16(MSC_RAW) || event.code == UInt16(MSC_SCAN) {
                // printf("%02x") of an int: two digits at least, negative values as their 32-bit pattern.
                String(repeating: "0", count: max(0, 2 - hex(UInt32(bitPattern: event.value)).count))
                    + hex(UInt32(bitPattern: event.value))
            } else {
                String(event.value)
            }
        return time + "type \(event.type) (\(typeName(event.type))), code \(event.code) "
            + "(\(codeName(event.type, event.code))), value \(value)"
    }

    public static func typeName(_ type: UInt16) -> String {
        libevdev_event_type_get_name(UInt32(type)).map { String(cString: $0) } ?? "?"
    }

    public static func codeName(_ type: UInt16, _ code: UInt16) -> String {
        libevdev_event_code_get_name(UInt32(type), UInt32(code)).map { String(cString: $0) } ?? "?"
    }

    static func hex<Number: BinaryInteger>(_ number: Number) -> String { String(number, radix: 16) }

    /// printf("%6d").
    static func padded(_ value: Int32) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, 6 - text.count)) + text
    }
}
