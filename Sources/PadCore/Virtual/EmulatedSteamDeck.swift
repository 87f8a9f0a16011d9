/// A Steam Deck's controls (28de:1205) as SDL's Steam Deck driver and Steam read them from its hidraw node: Valve's
/// 64-byte reports on a vendor-defined HID interface.
///
/// - Transport: Bluetooth. A real Deck's controls are a USB device; but the hidraw enumeration of SDL 2.26 to 2.32
///   (hidapi's) skips a USB-bus HID device without a USB parent, which a uhid device never has, so a USB-bus virtual
///   Deck would be invisible to every SDL game. On Bluetooth SDL enumerates it and its Steam Deck driver (by vendor
///   and product) reads it. hid-steam binds only USB Decks, so hid-generic binds this one: no kernel evdev gamepad,
///   only the hidraw node, which is what SDL and Steam read.
/// - Input report (no report ID; 64 bytes, little-endian; Valve's `ValveInReport_t` with a `SteamDeckStatePacket_t`):
///
///   | bytes | field | snapshot |
///   |---|---|---|
///   | 0-1, 2, 3 | version 1, type 9 (Deck state), length 64 | |
///   | 4-7 | packet number | counts up per report |
///   | 8-15 | buttons, u64 (bits below) | |
///   | 16-19, 20-23 | left and right trackpad x, y: i16, y up positive | touches on the trackpads (`onTwoTrackpads`) |
///   | 24-29 | accelerometer x, y, z: i16, 16384 per g | `MotionSample` axes (x, -z, y) |
///   | 30-35 | gyro x, y, z: i16, 32768 per 2000 °/s | `MotionSample` axes (x, -z, y) |
///   | 36-43 | orientation quaternion w, x, y, z | identity: padbridge's model carries no orientation |
///   | 44-47 | left, right trigger: u16 0...32767 | triggers |
///   | 48-55 | left stick x, y, right stick x, y: i16, y up positive | sticks (y negated) |
///   | 56-59 | left, right trackpad pressure | 0 |
///
///   Buttons (SDL's and hid-steam's bit numbers): 0 R2 full, 1 L2 full, 2 R1, 3 L1, 4 Y, 5 B, 6 X, 7 A, 8-11 d-pad
///   up, right, left, down, 12 View (`back`), 13 Steam (`guide`), 14 Menu (`start`), 15 L5 (`paddle4`), 16 R5
///   (`paddle3`), 17 left and 18 right trackpad click, 19 left and 20 right trackpad touched, 22 L3, 26 R3; 41 L4
///   (`paddle2`), 42 R4 (`paddle1`), 50 the quick access button (`misc1`).
/// - Feature reports (report 0, 64 bytes: a command byte, a length, its payload): SET_REPORT sends a command, and
///   GET_REPORT reads the answer to the last one: the serial number (0xAE) and the attributes (0x83) are answered;
///   other commands (lizard-mode settings 0x81, 0x85, 0x87, 0x8E) are acknowledged and echoed. Command 0xEB (simple
///   rumble: left and right motor speeds, u16) is the game's rumble; 0x8F (a trackpad haptic pulse) is not rumble.
public struct EmulatedSteamDeck: EmulatedHIDPad {
    public static let defaultName = "Steam Deck"
    public static let vendorID: UInt32 = 0x28DE
    public static let productID: UInt32 = 0x1205
    public static let version: UInt32 = 0x0200
    public static let reportSize = 64

    public static let rumbleCommand: UInt8 = 0xEB
    public static let serialNumberCommand: UInt8 = 0xAE
    public static let attributesCommand: UInt8 = 0x83

    public var kind: VirtualPadKind { .steamDeck }
    /// A Deck streams about every 4 ms (SDL assumes 4 ms per report for its sensor clock, and its driver gives up on
    /// a pad that sends nothing within 16 ms of being opened).
    public var heartbeatMilliseconds: UInt64 { 4 }
    /// A Deck's reports carry no sensor time: SDL and hid-steam stamp each 4 ms after the one before. So changes wait
    /// for the next report of the 4 ms stream (as on a real Deck), and readers integrate motion over the right time.
    public var sendsChangesAtOnce: Bool { false }
    public var reportsAreItsClock: Bool { true }
    public let identity: DualSenseIdentity
    public let description: HIDDeviceDescription
    private var packetNumber: UInt32 = 0
    /// The answer GET_REPORT gives: to the last command SET_REPORT sent.
    private var lastAnswer: [UInt8]
    private var motors = Rumble.off

    public init(name: String? = nil, seed: String, physicalPath: String? = nil) {
        identity = DualSenseIdentity(seed: seed)
        description = HIDDeviceDescription(
            name: name ?? Self.defaultName, physicalPath: physicalPath ?? "padbridge/\(identity.uniq)",
            uniq: identity.uniq, transport: .bluetooth, vendorID: Self.vendorID, productID: Self.productID,
            version: Self.version, reportDescriptor: Self.reportDescriptor)
        lastAnswer = Self.featureReport([0x00, 0x00])
    }

    public var inputReportCapacity: Int { Self.reportSize }

    /// hid-generic makes no input device of a vendor-defined interface: the pad is its hidraw node alone.
    public func inputDeviceNames(forPadNamed name: String) -> [String] { [] }

    public mutating func encodeInput(_ snapshot: PadSnapshot, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        packetNumber &+= 1
        return Self.encode(snapshot, packetNumber: packetNumber, into: buffer)
    }

    public mutating func featureReply(to reportID: UInt8) -> [UInt8]? {
        reportID == 0 ? lastAnswer : nil
    }

    public mutating func receiveFeature(_ reportID: UInt8, data: [UInt8]) -> EmulatedPadResponse? {
        // hidraw's SET_FEATURE carries the report number first: byte 1 on is the command.
        guard reportID == 0, data.count >= 2 else { return nil }
        let command = Array(data.dropFirst())
        lastAnswer = Self.answer(to: command, serial: identity.uniq)
        guard let rumble = Self.rumble(fromCommand: command) else { return .nothing }
        motors = rumble
        return EmulatedPadResponse(feedback: [.rumble(rumble)])
    }

    public mutating func receiveOutput(_ report: [UInt8], showing snapshot: PadSnapshot) -> EmulatedPadResponse {
        .nothing
    }

    /// What a Deck answers to `command` (a command byte, a length, its payload): the serial number for 0xAE (ten
    /// characters from `serial`, its hex digits), the attributes for 0x83 (product id and a firmware build), else
    /// the command itself.
    static func answer(to command: [UInt8], serial: String) -> [UInt8] {
        switch command.first {
        case serialNumberCommand?:
            let digits = Array(serial.utf8.filter { $0 != UInt8(ascii: ":") }.prefix(10))
            return featureReport([serialNumberCommand, 0x15, command.count > 2 ? command[2] : 0x01] + digits)
        case attributesCommand?:
            // Tag 1: the product id; tag 4: the firmware build time. 5 bytes each.
            var answer: [UInt8] = [attributesCommand, 10, 0x01]
            answer += littleEndian(productID)
            answer += [0x04] + littleEndian(0x6400_0000)
            return featureReport(answer)
        default:
            return featureReport(Array(command.prefix(reportSize)))
        }
    }

    /// The motors a simple-rumble command (0xEB) sets: u8 type, u16 intensity, u16 left speed, u16 right speed
    /// (0...65535), i8 left gain, i8 right gain. The left motor is the strong one (a Deck's left grip takes SDL's low
    /// frequency motor); nil for any other command.
    public static func rumble(fromCommand command: [UInt8]) -> Rumble? {
        guard command.count >= 9, command[0] == rumbleCommand else { return nil }
        let left = UInt16(command[5]) | UInt16(command[6]) << 8
        let right = UInt16(command[7]) | UInt16(command[8]) << 8
        return Rumble(strong: Double(left) / 65535, weak: Double(right) / 65535)
    }

    /// Writes the Deck state report (precondition: `buffer.count >= reportSize`); returns its size.
    public static func encode(
        _ snapshot: PadSnapshot, packetNumber: UInt32, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let out = ReportBytes.prepare(buffer, count: reportSize, for: "EmulatedSteamDeck")
        out[0] = 0x01
        out[2] = 0x09
        out[3] = UInt8(reportSize)
        ReportBytes.storeUInt32(packetNumber, into: out, at: 4)
        let trackpads = snapshot.touches.onTwoTrackpads
        let (low, high) = buttonBits(snapshot, leftTouched: trackpads[0].active, rightTouched: trackpads[1].active)
        ReportBytes.storeUInt32(low, into: out, at: 8)
        ReportBytes.storeUInt32(high, into: out, at: 12)
        for (index, contact) in [trackpads[0], trackpads[1]].enumerated() where contact.active {
            ReportBytes.storeInt16(padCoordinate(contact.x), into: out, at: 16 + 4 * index)
            ReportBytes.storeInt16(padCoordinate(1 - contact.y), into: out, at: 18 + 4 * index)
        }
        let motion = snapshot.motion
        let accel = motion.accelMetersPerSecondSquared, gyro = motion.gyroRadiansPerSecond
        let accelPerMS2 = 16384 / standardGravityMetersPerSecondSquared
        let gyroPerRadS = 32768 / (2000 * Double.pi / 180)
        // The model's axes are SDL's (x pitch, y yaw, z roll). SDL reads the Deck's (x, z, -y) as its (x, y, z): the
        // Deck's y is the model's -z, its z the model's y.
        for (offset, values, scale) in [(24, accel, accelPerMS2), (30, gyro, gyroPerRadS)] {
            ReportBytes.storeInt16(scaled(values.x * scale), into: out, at: offset)
            ReportBytes.storeInt16(scaled(-values.z * scale), into: out, at: offset + 2)
            ReportBytes.storeInt16(scaled(values.y * scale), into: out, at: offset + 4)
        }
        ReportBytes.storeInt16(Int16.max, into: out, at: 36)
        ReportBytes.storeUInt16(UInt16(max(snapshot.leftTrigger, 0)), into: out, at: 44)
        ReportBytes.storeUInt16(UInt16(max(snapshot.rightTrigger, 0)), into: out, at: 46)
        ReportBytes.storeInt16(snapshot.leftX, into: out, at: 48)
        ReportBytes.storeInt16(flipped(snapshot.leftY), into: out, at: 50)
        ReportBytes.storeInt16(snapshot.rightX, into: out, at: 52)
        ReportBytes.storeInt16(flipped(snapshot.rightY), into: out, at: 54)
        return reportSize
    }

    static func buttonBits(_ snapshot: PadSnapshot, leftTouched: Bool, rightTouched: Bool) -> (low: UInt32, high: UInt32) {
        let buttons = snapshot.buttons
        var low: UInt32 = 0, high: UInt32 = 0
        let lowBits: [(Button, Int)] = [
            (.rightshoulder, 2), (.leftshoulder, 3), (.y, 4), (.b, 5), (.x, 6), (.a, 7), (.dpup, 8), (.dpright, 9),
            (.dpleft, 10), (.dpdown, 11), (.back, 12), (.guide, 13), (.start, 14), (.paddle4, 15), (.paddle3, 16),
            (.leftstick, 22), (.rightstick, 26),
        ]
        for (button, bit) in lowBits where buttons.contains(button) { low |= 1 << bit }
        if snapshot.rightTrigger >= fullTrigger { low |= 1 << 0 }
        if snapshot.leftTrigger >= fullTrigger { low |= 1 << 1 }
        if buttons.contains(.touchpad) {
            // The click goes to the trackpad being touched; the right one (the Deck's mouse pad) when both or none.
            low |= leftTouched && !rightTouched ? 1 << 17 : 1 << 18
        }
        if leftTouched { low |= 1 << 19 }
        if rightTouched { low |= 1 << 20 }
        if buttons.contains(.paddle2) { high |= 1 << 9 }
        if buttons.contains(.paddle1) { high |= 1 << 10 }
        if buttons.contains(.misc1) { high |= 1 << 18 }
        return (low, high)
    }

    /// Where a Deck says a trigger is fully pressed (its R2/L2 bits): the last 5 % of the travel.
    static let fullTrigger: Int16 = 31_129

    /// 0...1 across a trackpad to -32768...32767.
    static func padCoordinate(_ fraction: Double) -> Int16 {
        scaled(min(max(fraction, 0), 1) * 65535 - 32768)
    }

    static func scaled(_ value: Double) -> Int16 {
        Int16(max(min(value.rounded(), Double(Int16.max)), Double(Int16.min)))
    }

    /// A stick's y, down positive, to the Deck's up positive (-32768 becomes 32767).
    static func flipped(_ value: Int16) -> Int16 { value == .min ? .max : -value }

    static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    /// `bytes` padded with zeros to a 64-byte feature report, after its report number 0.
    static func featureReport(_ bytes: [UInt8]) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: reportSize + 1)
        for (index, byte) in bytes.prefix(reportSize).enumerated() { report[index + 1] = byte }
        return report
    }

    /// The controls interface's report descriptor as a real Deck's (29 bytes): vendor page 0xFFFF, one 64-byte
    /// input, output and feature report, no report IDs.
    public static let reportDescriptor: [UInt8] = [
        0x06, 0xFF, 0xFF,  // usage page: vendor 0xFFFF
        0x09, 0x01,  // usage 1
        0xA1, 0x01,  // collection: application
        0x15, 0x00,  //   logical minimum 0
        0x26, 0xFF, 0x00,  //   logical maximum 255
        0x75, 0x08,  //   report size 8
        0x95, 0x40,  //   report count 64
        0x09, 0x01, 0x81, 0x02,  //   input
        0x09, 0x01, 0x91, 0x02,  //   output
        0x09, 0x01, 0xB1, 0x02,  //   feature
        0xC0,  // end collection
    ]
}
