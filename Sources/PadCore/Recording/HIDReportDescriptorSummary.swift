/// What a HID report descriptor declares about feature reports (their IDs and lengths) and what its top-level
/// application collections are, from its short items (HID 1.11 §6.2.2). Enough to read every feature report a
/// device has without guessing IDs, and to tell a game controller from a keyboard; not a full parser.
/// Total: any bytes give a summary (a truncated item ends the walk).
public struct HIDReportDescriptorSummary: Sendable, Hashable {
    /// Feature report ID → its length in bytes plus one for the ID byte, as HIDIOCGFEATURE wants the buffer
    /// (ID 0: a device that uses no report IDs).
    public var featureReportLengths: [UInt8: Int]

    /// A usage: its page (Generic Desktop is 0x01) and its ID within the page.
    public struct Usage: Sendable, Hashable {
        public var page: UInt16
        public var id: UInt16
        public init(page: UInt16, id: UInt16) {
            self.page = page
            self.id = id
        }
        public static let joystick = Usage(page: 0x01, id: 0x04)
        public static let gamepad = Usage(page: 0x01, id: 0x05)
        public static let multiAxisController = Usage(page: 0x01, id: 0x08)
        public static let keyboard = Usage(page: 0x01, id: 0x06)
        public static let mouse = Usage(page: 0x01, id: 0x02)
    }

    /// The usages of the application collections at the top level, in order (at most 64 kept).
    public var applicationCollections: [Usage]

    /// Whether a top-level application is a joystick, a gamepad or a multi-axis controller.
    public var declaresGameController: Bool {
        applicationCollections.contains { [.joystick, .gamepad, .multiAxisController].contains($0) }
    }

    public init(_ descriptor: [UInt8]) {
        var lengths: [UInt8: Int] = [:]
        var bits: [UInt8: Int] = [:]
        struct Globals { var reportSize = 0, reportCount = 0, reportID: UInt8 = 0 }
        var globals = Globals()
        var stack: [Globals] = []
        var usagePage: UInt16 = 0
        var pageStack: [UInt16] = []
        var firstUsage: Usage?
        var depth = 0
        var applications: [Usage] = []
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
            case 0x04: usagePage = UInt16(truncatingIfNeeded: value)  // Usage Page
            case 0x08:  // Usage; a 4-byte one carries its own page in its upper half (HID 1.11 §6.2.2.8)
                if firstUsage == nil {
                    firstUsage =
                        size == 4
                        ? Usage(page: UInt16(truncatingIfNeeded: value >> 16), id: UInt16(truncatingIfNeeded: value))
                        : Usage(page: usagePage, id: UInt16(truncatingIfNeeded: value))
                }
            case 0xA4:  // Push
                if stack.count < 64 {
                    stack.append(globals)
                    pageStack.append(usagePage)
                }
            case 0xB4:  // Pop
                if let top = stack.popLast() { globals = top }
                if let top = pageStack.popLast() { usagePage = top }
            case 0xA0:  // Collection
                if depth == 0 && value == 0x01 && applications.count < 64, let usage = firstUsage {
                    applications.append(usage)
                }
                depth += 1
            case 0xC0: depth = max(0, depth - 1)  // End Collection
            case 0xB0:  // Feature
                bits[globals.reportID, default: 0] += min(globals.reportSize * globals.reportCount, 1 << 20)
            default: break
            }
            // Local items (usages) last until the next main item (Input, Output, Feature, Collection, End).
            if [0x80, 0x90, 0xB0, 0xA0, 0xC0].contains(prefix & 0xFC) { firstUsage = nil }
            index += 1 + size
        }
        for (id, count) in bits { lengths[id] = (count + 7) / 8 + 1 }
        featureReportLengths = lengths
        applicationCollections = applications
    }
}
