/// What a HID report descriptor declares about feature reports: their IDs and lengths, from its short items
/// (HID 1.11 §6.2.2). Enough to read every feature report a device has without guessing IDs; not a full parser.
/// Total: any bytes give a summary (a truncated item ends the walk).
public struct HIDReportDescriptorSummary: Sendable, Hashable {
    /// Feature report ID → its length in bytes plus one for the ID byte, as HIDIOCGFEATURE wants the buffer
    /// (ID 0: a device that uses no report IDs).
    public var featureReportLengths: [UInt8: Int]

    public init(_ descriptor: [UInt8]) {
        var lengths: [UInt8: Int] = [:]
        var bits: [UInt8: Int] = [:]
        struct Globals { var reportSize = 0, reportCount = 0, reportID: UInt8 = 0 }
        var globals = Globals()
        var stack: [Globals] = []
        var index = 0
        while index < descriptor.count {
            let prefix = descriptor[index]
            if prefix == 0xFE {  // a long item: 0xFE, size, tag, data
                guard index + 1 < descriptor.count else { break }
                index += 3 + Int(descriptor[index + 1])
                continue
            }
            let size = [0, 1, 2, 4][Int(prefix & 0x03)]
            guard index + size < descriptor.count else { break }
            var value = 0
            for offset in 0..<size { value |= Int(descriptor[index + 1 + offset]) << (8 * offset) }
            switch prefix & 0xFC {
            case 0x74: globals.reportSize = value  // Report Size
            case 0x94: globals.reportCount = value  // Report Count
            case 0x84: globals.reportID = UInt8(truncatingIfNeeded: value)  // Report ID
            case 0xA4: stack.append(globals)  // Push
            case 0xB4: if let top = stack.popLast() { globals = top }  // Pop
            case 0xB0:  // Feature
                bits[globals.reportID, default: 0] += min(globals.reportSize * globals.reportCount, 1 << 20)
            default: break
            }
            index += 1 + size
        }
        for (id, count) in bits { lengths[id] = (count + 7) / 8 + 1 }
        featureReportLengths = lengths
    }
}
