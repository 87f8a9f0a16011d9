/// An Xbox Series pad on Bluetooth (045e:0b13, model 1914) as hid-microsoft binds it and SDL's HIDAPI Xbox driver
/// and Steam read its hidraw node.
///
/// - Identity: the MAC derived from the seed (`DualSenseIdentity`'s derivation) as `uniq`; the firmware version
///   0x0511, the one SDL's controller database has a mapping for. No feature reports: hid-microsoft asks none.
/// - Input report 0x01 (17 bytes):
///
///   | byte | field | snapshot |
///   |---|---|---|
///   | 1-8 | LX, LY, RX, RY u16, centre 0x8000, y down positive | stick + 32768 |
///   | 9-12 | left and right trigger u16, 10 bits (0...1023) | trigger · 1023 / 32767, rounded |
///   | 13 | hat: 1 up, clockwise to 8 up-left, 0 released | d-pad |
///   | 14 | 0x01 A, 0x02 B, 0x08 X, 0x10 Y, 0x40 LB, 0x80 RB | |
///   | 15 | 0x04 View (`back`), 0x08 Menu (`start`), 0x10 Xbox (`guide`), 0x20 LS, 0x40 RS | |
///   | 16 | 0x01 Share (`misc1`) | |
///
/// - Output report 0x03 (9 bytes; hid-microsoft's force feedback, and what SDL writes through hidraw): enable bits,
///   magnitudes 0...100 of the left trigger, right trigger, strong (left) and weak (right) motors, duration and
///   start delay in 10 ms, loop count. All four motors become rumble (`applyRumbleReport`).
public struct EmulatedXboxOneBluetooth: EmulatedHIDPad {
    public static let defaultName = "Xbox Wireless Controller"
    public static let vendorID: UInt32 = 0x045E
    public static let productID: UInt32 = 0x0B13
    public static let version: UInt32 = 0x0511
    public static let inputReportID: UInt8 = 0x01
    public static let inputReportSize = 17
    public static let rumbleReportID: UInt8 = 0x03
    public static let rumbleReportSize = 9

    public var kind: VirtualPadKind { .xboxOne }
    /// A real pad sends a report only when something changes; SDL does not need a stream from it. The heartbeat
    /// still re-sends the state now and then, which costs readers nothing (hid-core drops unchanged values).
    public var heartbeatMilliseconds: UInt64 { 100 }
    public let identity: DualSenseIdentity
    public let description: HIDDeviceDescription
    /// The four motors as the last rumble reports left them.
    private var motors = Rumble.off

    public init(name: String? = nil, seed: String, physicalPath: String? = nil) {
        identity = DualSenseIdentity(seed: seed)
        description = HIDDeviceDescription(
            name: name ?? Self.defaultName, physicalPath: physicalPath ?? "padbridge/\(identity.uniq)",
            uniq: identity.uniq, transport: .bluetooth, vendorID: Self.vendorID, productID: Self.productID,
            version: Self.version, reportDescriptor: Self.reportDescriptor)
    }

    public var inputReportCapacity: Int { Self.inputReportSize }

    /// hid-microsoft makes one input device, named after the pad.
    public func inputDeviceNames(forPadNamed name: String) -> [String] { [name] }

    public mutating func encodeInput(_ snapshot: PadSnapshot, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        Self.encode(snapshot, into: buffer)
    }

    public mutating func featureReply(to reportID: UInt8) -> [UInt8]? { nil }

    public mutating func receiveOutput(_ report: [UInt8], showing snapshot: PadSnapshot) -> EmulatedPadResponse {
        guard let rumble = Self.applyRumbleReport(report, to: motors) else { return .nothing }
        motors = rumble
        return EmulatedPadResponse(feedback: [.rumble(rumble)])
    }

    /// Writes input report 0x01 (precondition: `buffer.count >= inputReportSize`); returns its size.
    public static func encode(_ snapshot: PadSnapshot, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let out = ReportBytes.prepare(buffer, count: inputReportSize, for: "EmulatedXboxOneBluetooth")
        out[0] = inputReportID
        for (index, value) in [snapshot.leftX, snapshot.leftY, snapshot.rightX, snapshot.rightY].enumerated() {
            ReportBytes.storeUInt16(UInt16(Int32(value) + 32768), into: out, at: 1 + 2 * index)
        }
        ReportBytes.storeUInt16(triggerValue(snapshot.leftTrigger), into: out, at: 9)
        ReportBytes.storeUInt16(triggerValue(snapshot.rightTrigger), into: out, at: 11)
        let buttons = snapshot.buttons
        out[13] = hat(buttons)
        var low: UInt8 = 0, high: UInt8 = 0
        if buttons.contains(.a) { low |= 0x01 }
        if buttons.contains(.b) { low |= 0x02 }
        if buttons.contains(.x) { low |= 0x08 }
        if buttons.contains(.y) { low |= 0x10 }
        if buttons.contains(.leftshoulder) { low |= 0x40 }
        if buttons.contains(.rightshoulder) { low |= 0x80 }
        if buttons.contains(.back) { high |= 0x04 }
        if buttons.contains(.start) { high |= 0x08 }
        if buttons.contains(.guide) { high |= 0x10 }
        if buttons.contains(.leftstick) { high |= 0x20 }
        if buttons.contains(.rightstick) { high |= 0x40 }
        out[14] = low
        out[15] = high
        out[16] = buttons.contains(.misc1) ? 0x01 : 0x00
        return inputReportSize
    }

    /// 0...32767 to the pad's 10 bits, rounded to nearest.
    static func triggerValue(_ value: Int16) -> UInt16 {
        UInt16((Int32(max(value, 0)) * 1023 + 16383) / 32767)
    }

    /// The hat: 1 up, 2 up-right, ... 8 up-left, 0 released; opposite directions cancel.
    static func hat(_ buttons: ButtonSet) -> UInt8 {
        let vertical = (buttons.contains(.dpdown) ? 1 : 0) - (buttons.contains(.dpup) ? 1 : 0)
        let horizontal = (buttons.contains(.dpright) ? 1 : 0) - (buttons.contains(.dpleft) ? 1 : 0)
        switch (vertical, horizontal) {
        case (-1, 0): return 1
        case (-1, 1): return 2
        case (0, 1): return 3
        case (1, 1): return 4
        case (1, 0): return 5
        case (1, -1): return 6
        case (0, -1): return 7
        case (-1, -1): return 8
        default: return 0
        }
    }

    /// The motors after rumble report 0x03 (nil for any other report): each motor whose enable bit is set (0x01 weak,
    /// 0x02 strong, 0x04 right trigger, 0x08 left trigger) takes its magnitude / 100; the others keep their value from
    /// `current` (senders such as xpadneo clear the bit of a motor whose magnitude did not change). Duration, delay
    /// and loop count are not modelled: the magnitudes hold until the next report, as a game's SDL and
    /// hid-microsoft's force feedback use them (the longest duration, then another report).
    public static func applyRumbleReport(_ report: [UInt8], to current: Rumble) -> Rumble? {
        guard report.count >= rumbleReportSize, report[0] == rumbleReportID else { return nil }
        let enable = report[1]
        func magnitude(_ byte: UInt8) -> Double { Double(min(byte, 100)) / 100 }
        return Rumble(
            strong: enable & 0x02 != 0 ? magnitude(report[4]) : current.strong,
            weak: enable & 0x01 != 0 ? magnitude(report[5]) : current.weak,
            leftTrigger: enable & 0x08 != 0 ? magnitude(report[2]) : current.leftTrigger,
            rightTrigger: enable & 0x04 != 0 ? magnitude(report[3]) : current.rightTrigger)
    }

    /// The pad's HID report descriptor over Bluetooth, 283 bytes (a real pad's, as published in xpadneo's
    /// docs/descriptors/xbxs.md): input 0x01 as above, output 0x03 (rumble).
    public static let reportDescriptor: [UInt8] = [
        0x05, 0x01, 0x09, 0x05, 0xA1, 0x01, 0x85, 0x01, 0x09, 0x01, 0xA1, 0x00, 0x09, 0x30, 0x09, 0x31,
        0x15, 0x00, 0x27, 0xFF, 0xFF, 0x00, 0x00, 0x95, 0x02, 0x75, 0x10, 0x81, 0x02, 0xC0, 0x09, 0x01,
        0xA1, 0x00, 0x09, 0x32, 0x09, 0x35, 0x15, 0x00, 0x27, 0xFF, 0xFF, 0x00, 0x00, 0x95, 0x02, 0x75,
        0x10, 0x81, 0x02, 0xC0, 0x05, 0x02, 0x09, 0xC5, 0x15, 0x00, 0x26, 0xFF, 0x03, 0x95, 0x01, 0x75,
        0x0A, 0x81, 0x02, 0x15, 0x00, 0x25, 0x00, 0x75, 0x06, 0x95, 0x01, 0x81, 0x03, 0x05, 0x02, 0x09,
        0xC4, 0x15, 0x00, 0x26, 0xFF, 0x03, 0x95, 0x01, 0x75, 0x0A, 0x81, 0x02, 0x15, 0x00, 0x25, 0x00,
        0x75, 0x06, 0x95, 0x01, 0x81, 0x03, 0x05, 0x01, 0x09, 0x39, 0x15, 0x01, 0x25, 0x08, 0x35, 0x00,
        0x46, 0x3B, 0x01, 0x66, 0x14, 0x00, 0x75, 0x04, 0x95, 0x01, 0x81, 0x42, 0x75, 0x04, 0x95, 0x01,
        0x15, 0x00, 0x25, 0x00, 0x35, 0x00, 0x45, 0x00, 0x65, 0x00, 0x81, 0x03, 0x05, 0x09, 0x19, 0x01,
        0x29, 0x0F, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x0F, 0x81, 0x02, 0x15, 0x00, 0x25, 0x00,
        0x75, 0x01, 0x95, 0x01, 0x81, 0x03, 0x05, 0x0C, 0x0A, 0xB2, 0x00, 0x15, 0x00, 0x25, 0x01, 0x95,
        0x01, 0x75, 0x01, 0x81, 0x02, 0x15, 0x00, 0x25, 0x00, 0x75, 0x07, 0x95, 0x01, 0x81, 0x03, 0x05,
        0x0F, 0x09, 0x21, 0x85, 0x03, 0xA1, 0x02, 0x09, 0x97, 0x15, 0x00, 0x25, 0x01, 0x75, 0x04, 0x95,
        0x01, 0x91, 0x02, 0x15, 0x00, 0x25, 0x00, 0x75, 0x04, 0x95, 0x01, 0x91, 0x03, 0x09, 0x70, 0x15,
        0x00, 0x25, 0x64, 0x75, 0x08, 0x95, 0x04, 0x91, 0x02, 0x09, 0x50, 0x66, 0x01, 0x10, 0x55, 0x0E,
        0x15, 0x00, 0x26, 0xFF, 0x00, 0x75, 0x08, 0x95, 0x01, 0x91, 0x02, 0x09, 0xA7, 0x15, 0x00, 0x26,
        0xFF, 0x00, 0x75, 0x08, 0x95, 0x01, 0x91, 0x02, 0x65, 0x00, 0x55, 0x00, 0x09, 0x7C, 0x15, 0x00,
        0x26, 0xFF, 0x00, 0x75, 0x08, 0x95, 0x01, 0x91, 0x02, 0xC0, 0xC0,
    ]
}
