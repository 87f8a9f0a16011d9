/// evemu's text format (file format 1.3, as `evemu-describe` and `evemu-record` write it and `evemu-device` and
/// `evemu-play` read it), for one evdev node of a recording: its description, then its events.
///
///     # EVEMU 1.3
///     N: Microsoft X-Box 360 pad                   name
///     I: 0003 045e 028e 0114                       bus vendor product version (hex)
///     P: 00 00 00 00 00 00 00 00                   INPUT_PROP_* bits, 8 bytes a line
///     B: 01 00 00 00 00 00 00 00 00                type, then 8 bytes of its code bits a line (EV_KEY: 12 lines)
///     A: 00 -32768 32767 16 128 0                  code min max fuzz flat resolution (decimal)
///     E: 0.000123 0001 0130 0001	# comment        seconds.microseconds type code (hex) value (decimal)
///
/// The bit lines follow evemu's writer exactly: EV_SYN as one fixed line (SYN_REPORT, SYN_CONFIG, SYN_MT_REPORT),
/// then every type libevdev knows a maximum code for, each as many lines as its maximum needs, set or not. evemu has
/// one device per file, so a pad with several event nodes (a DualSense's pad, motion and touchpad) is several
/// files. Only evdev parts carry over: hidraw reports and feedback have no place in evemu's format.
public enum EvemuFormat {
    public static let fileFormatVersion = "1.3"

    /// Event types and their highest code (`linux/input-event-codes.h`: KEY_MAX, REL_MAX, ...), in evemu's order.
    static let typeMaximumCodes: [(type: UInt16, maximumCode: Int)] = [
        (0x01, 0x2FF), (0x02, 0x0F), (0x03, 0x3F), (0x04, 0x07), (0x05, 0x10), (0x11, 0x0F), (0x12, 0x07),
        (0x14, 0x01), (0x15, 0x7F),
    ]
    /// INPUT_PROP_CNT.
    static let propertyCount = 0x20

    /// The node's description: a version line and comments, then N, I, P, B and A lines.
    public static func description(of node: RecordedEvdevNode, padID: String) -> String {
        var lines = [
            "# EVEMU \(fileFormatVersion)",
            "# Input device name: \"\(node.name.onOneLine)\"",
            "# Recorded by padbridge: \(node.path.onOneLine), role \(node.role.onOneLine) of pad \(padID.onOneLine)",
            "N: \(node.name.onOneLine)",
            "I: " + [node.bus, node.vendor, node.product, node.version].map(NumberText.hex4).joined(separator: " "),
        ]
        lines += bitLines(prefix: "P: ", set: Set(node.properties.map(Int.init)), byteCount: (propertyCount + 7) / 8)
        lines.append("B: 00 0b 00 00 00 00 00 00 00")
        for (type, maximumCode) in typeMaximumCodes {
            let codes = Set((node.codes[type] ?? []).map(Int.init).filter { $0 <= maximumCode })
            lines += bitLines(prefix: "B: \(NumberText.hex2(UInt8(type))) ", set: codes, byteCount: (maximumCode + 1 + 7) / 8)
        }
        for code in (node.codes[0x03] ?? []).sorted() {
            let info = node.absoluteInfo[code] ?? EvdevAbsoluteInfo(minimum: 0, maximum: 0)
            lines.append("A: \(NumberText.hex2(UInt8(truncatingIfNeeded: code))) \(info.minimum) \(info.maximum) \(info.fuzz) \(info.flat) \(info.resolution)")
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// One event's line: `E: SECONDS.MICROSECONDS TYPE CODE VALUE`, then `comment` after a tab when given (evemu
    /// writes the type and code names there).
    public static func eventLine(microseconds: Int64, type: UInt16, code: UInt16, value: Int32, comment: String? = nil) -> String {
        let time = max(0, microseconds)
        let fraction = String(time % 1_000_000)
        var line = "E: \(time / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count) + fraction) "
            + "\(NumberText.hex4(type)) \(NumberText.hex4(code)) \(paddedDecimal(value))"
        if let comment { line += "\t# " + comment.onOneLine }
        return line + "\n"
    }

    /// The whole file for evdev node `node` of `recording`: its description and every event recorded on it.
    public static func text(of recording: PadRecording, node: Int) -> String? {
        guard let described = recording.evdevNodes.first(where: { $0.index == node }) else { return nil }
        var text = description(of: described, padID: recording.identity.id)
        for case let .evdev(microseconds, entryNode, type, code, value) in recording.entries where entryNode == node {
            text += eventLine(microseconds: microseconds, type: type, code: code, value: value)
        }
        return text
    }

    /// File names for a pad's nodes, one per node: the first (the pad node) gets `base`, each other one its role
    /// before the extension (`ds.evemu`: `ds.motion.evemu`, `ds.touchpad.evemu`), numbered if a role repeats.
    public static func fileNames(base: String, roles: [String]) -> [String] {
        let slash = base.lastIndex(of: "/")
        let dot = base.lastIndex(of: ".").flatMap { dot in
            // A dot in a directory name, or one that starts the file's name (".hidden"), is no extension.
            let nameStart = slash.map { base.index(after: $0) } ?? base.startIndex
            return dot > nameStart ? dot : nil
        }
        let stem = dot.map { String(base[..<$0]) } ?? base
        let suffix = dot.map { String(base[$0...]) } ?? ""
        var used: Set<String> = [base]
        return roles.enumerated().map { position, role in
            guard position > 0 else { return base }
            let safeRole = String(role.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
            var name = "\(stem).\(safeRole.isEmpty ? "node" : safeRole)\(suffix)"
            var number = 2
            while used.contains(name) {
                name = "\(stem).\(safeRole.isEmpty ? "node" : safeRole)\(number)\(suffix)"
                number += 1
            }
            used.insert(name)
            return name
        }
    }

    /// `byteCount` bytes of bits (bit n of byte n/8), eight bytes a line, zero-filled to a whole line.
    private static func bitLines(prefix: String, set: Set<Int>, byteCount: Int) -> [String] {
        var lines: [String] = []
        for lineStart in stride(from: 0, to: byteCount, by: 8) {
            let bytes = (lineStart..<lineStart + 8).map { byte in
                (0..<8).reduce(UInt8(0)) { bits, bit in set.contains(byte * 8 + bit) ? bits | (1 << bit) : bits }
            }
            lines.append(prefix + bytes.map(NumberText.hex2).joined(separator: " "))
        }
        return lines
    }

    /// printf's `%04d`: at least four characters, zeros after the sign.
    static func paddedDecimal(_ value: Int32) -> String {
        let digits = String(value.magnitude)
        let width = value < 0 ? 3 : 4
        return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
