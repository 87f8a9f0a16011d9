/// A Nintendo Switch Pro Controller on Bluetooth (057e:2009) as the kernel's hid-nintendo probes it and SDL's Switch
/// HIDAPI driver (and Steam) talk to its hidraw node. Bluetooth, not USB: SDL's HID layer passes over some uhid pads
/// on the USB bus. hid-nintendo first tries the USB handshake (output 0x80) and waits 2 × 1 s for a reply that a
/// Bluetooth pad never sends, as with a real one; SDL's USB status request waits 5 × 100 ms the same way.
///
/// - Subcommands (output 0x01: packet number, 8 rumble bytes, subcommand, data) are answered at once with input
///   report 0x21: the pad's state as in 0x30, the ACK byte, the subcommand, its data
///   (`SwitchProInputReport.reply`).
///   Device info (0x02: firmware 3.72, type 3 = Pro Controller, the MAC derived from the seed as a virtual
///   DualSense's, `DualSenseIdentity`), SPI flash reads (0x10: `SwitchProFlash`), input mode (0x03: the pad
///   streams 0x30 from then on, whatever mode was asked: SDL asks 0x3F only when it finds no stream and reads 0x30
///   as well), player lights (0x30: `.playerLeds`), the home light (0x38: acknowledged, not shown: the model has no
///   such light), IMU and vibration enable (0x40, 0x48): acknowledged; any other is acknowledged without data.
///   The IMU stays on and the stream stays 0x30 whatever a reader asks later: the pad is shared, and SDL switches
///   the IMU off and asks for mode 0x3F when a game stops reading sensors or closes the pad, which on a real pad
///   silences hid-nintendo's IMU node for every other reader.
/// - Rumble: the 8 bytes in every 0x01 and 0x10 report, decoded by `SwitchProRumble`; a change is a `.rumble`.
/// - Input report 0x30 (`SwitchProInputReport`): buttons by position, 12-bit sticks, digital ZL/ZR, three IMU
///   samples. All input reports are 64 bytes, as the report descriptor declares them.
/// - `uniq` is the MAC as hid-nintendo prints it for its input devices ("%02X:...", upper case): the driver names
///   its nodes' `uniq` from the device info reply, and the pad is found by it.
public struct EmulatedSwitchPro: EmulatedHIDPad {
    public static let defaultName = "Nintendo Switch Pro Controller"
    public static let vendorID: UInt32 = 0x057E
    public static let productID: UInt32 = 0x2009
    public static let version: UInt32 = 0x0001
    /// The names hid-nintendo gives its two input devices for a Pro Controller, whatever the HID device is called.
    public static let gamepadNodeName = "Nintendo Switch Pro Controller"
    public static let motionNodeName = "Nintendo Switch Pro Controller IMU"

    public var kind: VirtualPadKind { .switchPro }
    /// 15 ms, a Pro Controller's pace in mode 0x30: hid-nintendo on Bluetooth sends a subcommand only after three
    /// reports 8-17 ms apart, and its rumble resend rides on the reports.
    public var heartbeatMilliseconds: UInt64 { 15 }
    /// Only at that pace: reports sent between (a remapped DualSense's 250 Hz motion) would keep hid-nintendo from
    /// seeing three steady steps, and each of its rumble and light commands would wait for them up to 500 reports.
    public var sendsChangesAtOnce: Bool { false }
    /// hid-nintendo and SDL stamp its IMU samples by the reports' pace: a report missed (a late loop) is turn lost,
    /// so a late heartbeat sends the reports it owes (`ReportPace`).
    public var reportsAreItsClock: Bool { true }
    public let identity: DualSenseIdentity
    public let description: HIDDeviceDescription
    public private(set) var isStreaming = false
    /// What the last rumble bytes meant; a change becomes feedback.
    private var rumble = Rumble.off
    private var timer: UInt8 = 0

    /// `physicalPath` defaults to "padbridge/MAC".
    public init(name: String? = nil, seed: String, physicalPath: String? = nil) {
        identity = DualSenseIdentity(seed: seed)
        let uniq = Self.uniq(identity)
        description = HIDDeviceDescription(
            name: name ?? Self.defaultName, physicalPath: physicalPath ?? "padbridge/\(uniq)", uniq: uniq,
            transport: .bluetooth, vendorID: Self.vendorID, productID: Self.productID, version: Self.version,
            reportDescriptor: Self.reportDescriptor)
    }

    /// The MAC as hid-nintendo prints it: upper case, the device info's order.
    public static func uniq(_ identity: DualSenseIdentity) -> String {
        identity.octets.map { HexBytes.encode([$0]).uppercased() }.joined(separator: ":")
    }

    public var inputReportCapacity: Int { SwitchProInputReport.size }

    public func inputDeviceNames(forPadNamed name: String) -> [String] { [Self.gamepadNodeName, Self.motionNodeName] }

    public mutating func encodeInput(_ snapshot: PadSnapshot, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        timer &+= 1
        return SwitchProInputReport.encode(
            snapshot, reportID: SwitchProInputReport.fullReportID, timer: timer, into: buffer)
    }

    /// Bluetooth pads have no feature reports that either reader asks for.
    public mutating func featureReply(to reportID: UInt8) -> [UInt8]? { nil }

    public mutating func receiveOutput(_ report: [UInt8], showing snapshot: PadSnapshot) -> EmulatedPadResponse {
        guard let first = report.first, first == Self.rumbleAndSubcommandID || first == Self.rumbleOnlyID,
            report.count >= 10
        else { return .nothing }  // USB commands (0x80) get no answer on Bluetooth; nothing else is the pad's
        var response = EmulatedPadResponse()
        let decoded = SwitchProRumble.decode(Array(report[2..<10]))
        if decoded != rumble {
            rumble = decoded
            response.feedback.append(.rumble(decoded))
        }
        guard first == Self.rumbleAndSubcommandID, report.count >= 11 else { return response }
        let subcommand = report[10]
        let data = Array(report[11...])
        switch subcommand {
        case Self.setInputMode:
            isStreaming = true
        case Self.setPlayerLights:
            if let lights = data.first {
                response.feedback.append(.playerLeds(mask: Self.playerLeds(lightsByte: lights)))
            }
        default:
            break
        }
        timer &+= 1
        response.inputReports.append(
            SwitchProInputReport.reply(to: subcommand, data: data, identity: identity, showing: snapshot, timer: timer))
        return response
    }

    public static let rumbleAndSubcommandID: UInt8 = 0x01
    public static let rumbleOnlyID: UInt8 = 0x10
    public static let setInputMode: UInt8 = 0x03
    public static let setPlayerLights: UInt8 = 0x30

    /// The model's player LEDs for subcommand 0x30's byte (low nibble: lights on, first light bit 0; high nibble:
    /// flashing, which is not shown): the first N lit are player N (the Switch's and hid-nintendo's pattern, as
    /// `NintendoPlayerLights` reads a physical pad); one light alone is the player it stands for (SDL lights light
    /// N alone for player N); any other pattern is the player of as many lights; none lit is none.
    public static func playerLeds(lightsByte: UInt8) -> UInt8 {
        let lights = (0..<NintendoPlayerLights.count).map { lightsByte & (1 << $0) != 0 }
        if let prefix = NintendoPlayerLights.playerLeds(lights: lights) { return prefix }
        let lit = lights.indices.filter { lights[$0] }
        let player = lit.count == 1 ? lit[0] + 1 : lit.count
        return PlayerLedPatterns.player[player - 1]
    }

    /// A vendor-defined descriptor that declares the report IDs the pad uses, 63 bytes each after the ID: inputs
    /// 0x21 (subcommand reply), 0x30 (full state), 0x31 (with NFC/IR data), 0x3F (simple state); outputs 0x01
    /// (rumble and subcommand), 0x10 (rumble), 0x11 (NFC/IR request), 0x80 (USB command). hid-nintendo binds with
    /// hidraw only and reads none of its fields; the kernel needs the IDs to pass the reports on.
    public static let reportDescriptor: [UInt8] = {
        var bytes: [UInt8] = [0x06, 0x01, 0xFF, 0x09, 0x01, 0xA1, 0x01]  // usage page 0xFF01, usage 1, application
        for (usage, id) in [UInt8(0x21), 0x30, 0x31, 0x3F].enumerated() {
            // report ID, usage, logical 0...255, 8 bits × 63, Input (data, variable, absolute)
            bytes += [0x85, id, 0x09, UInt8(0x20 + usage), 0x15, 0x00, 0x26, 0xFF, 0x00, 0x75, 0x08, 0x95, 0x3F,
                      0x81, 0x02]
        }
        for (usage, id) in [UInt8(0x01), 0x10, 0x11, 0x80].enumerated() {
            // report ID, usage, 8 bits × 63, Output (data, variable, absolute)
            bytes += [0x85, id, 0x09, UInt8(0x40 + usage), 0x75, 0x08, 0x95, 0x3F, 0x91, 0x02]
        }
        return bytes + [0xC0]
    }()
}

/// What a Pro Controller's input reports hold (64 bytes each):
///
/// | byte | field |
/// |---|---|
/// | 0 | report ID: 0x30 full state, 0x21 subcommand reply |
/// | 1 | timer, +1 a report |
/// | 2 | battery (bits 5-7: 0 empty ... 4 full) and charging (bit 4); bit 0 would be "powered by the host" (USB) |
/// | 3-5 | buttons, 24 bits little endian (below) |
/// | 6-8, 9-11 | left and right stick: x and y, 12 bits each (x in the low 12 bits), y up positive |
/// | 12 | vibrator report: non-zero, as a real pad's (hid-nintendo resends rumble only then) |
/// | 13-48 | 0x30: three IMU samples, each accel x y z then gyro x y z, s16 |
/// | 13, 14, 15- | 0x21: ACK (0x80, with the reply's type in the low bits), the subcommand, its reply data |
///
/// Buttons by position (hid-nintendo's and padbridge's reading: Nintendo's B, the bottom button, is `a`): bit 0 Y
/// (`x`), 1 X (`y`), 2 B (`a`), 3 A (`b`), 6 R, 7 ZR, 8 minus (`back`), 9 plus (`start`), 10 right stick, 11 left
/// stick, 12 home (`guide`), 13 capture (`misc1`), 16 down, 17 up, 18 right, 19 left, 22 L, 23 ZL. ZL and ZR are
/// digital: pressed when the trigger is past half (`triggerPressedAbove`).
///
/// Sticks (`SwitchProFlash`'s calibration: centre 2048, 2047 either way): raw = 2048 ± round(value · 2047 / 32767),
/// so ±32767 is the calibrated range's end, which hid-nintendo maps to ±32767. SDL maps the first 70 % of the
/// calibrated range onto its full range until a stick goes further, then the range it has seen (as for a real
/// pad): full deflection reads ±32767 in both.
///
/// Motion: Nintendo's axes are x toward the triggers, y to the left, z up out of the face; the model's x is −y,
/// its y is z, its z is −x (`EvdevMotionAxes.nintendo`), so raw x = −model z, y = −model x, z = model y. With the
/// flash's IMU calibration (offsets 0, accel scale 16384, gyro scale 13371): accel raw = g · 4096, which both
/// hid-nintendo (4096 per g) and SDL (4 / 16384 g per unit) read exactly; gyro raw = °/s · 14.247, hid-nintendo's
/// resolution (14 247 per °/s after its ×1000), which padbridge's own reader of a physical pad divides by. SDL reads
/// 936 / 13371 °/s per unit (14.285 units per °/s): 0.27 % low, 89.76 °/s for 90.
public enum SwitchProInputReport {
    public static let size = 64
    public static let fullReportID: UInt8 = 0x30
    public static let subcommandReplyID: UInt8 = 0x21
    /// A trigger counts as ZL/ZR pressed above this (half of 0...32767).
    public static let triggerPressedAbove: Int16 = 16383
    public static let stickCenter = 2048
    public static let stickRange = 2047
    public static let accelUnitsPerG = 4096.0
    public static let gyroUnitsPerDegreePerSecond = 14.247

    static let buttonBits: [(Button, Int)] = [
        (.x, 0), (.y, 1), (.a, 2), (.b, 3), (.rightshoulder, 6), (.back, 8), (.start, 9), (.rightstick, 10),
        (.leftstick, 11), (.guide, 12), (.misc1, 13), (.dpdown, 16), (.dpup, 17), (.dpright, 18), (.dpleft, 19),
        (.leftshoulder, 22),
    ]
    static let zrBit = 7
    static let zlBit = 23

    /// The 24-bit button field for `snapshot`.
    public static func buttons(_ snapshot: PadSnapshot) -> UInt32 {
        var bits: UInt32 = 0
        for (button, bit) in buttonBits where snapshot.buttons.contains(button) { bits |= 1 << bit }
        if snapshot.rightTrigger > triggerPressedAbove { bits |= 1 << zrBit }
        if snapshot.leftTrigger > triggerPressedAbove { bits |= 1 << zlBit }
        return bits
    }

    /// A stick value (−32768...32767) as the pad's 12-bit reading; `inverted` for a y axis (the model's y is down
    /// positive, the pad's up positive).
    public static func stickRaw(_ value: Int16, inverted: Bool = false) -> Int {
        let scaled = Int((Double(value) * Double(stickRange) / 32767).rounded())
        return min(max(stickCenter + (inverted ? -scaled : scaled), 1), 4095)
    }

    /// One IMU sample (accel x y z, gyro x y z) on Nintendo's axes, in its raw units.
    public static func imuSample(_ motion: MotionSample) -> [Int16] {
        let accel = motion.accelMetersPerSecondSquared, gyro = motion.gyroRadiansPerSecond
        let accelScale = accelUnitsPerG / standardGravityMetersPerSecondSquared
        let gyroScale = gyroUnitsPerDegreePerSecond * 180 / Double.pi
        func raw(_ value: Double, _ scale: Double) -> Int16 {
            let scaled = (value * scale).rounded()
            return scaled.isNaN ? 0 : Int16(min(max(scaled, -32768), 32767))
        }
        return [
            raw(-accel.z, accelScale), raw(-accel.x, accelScale), raw(accel.y, accelScale),
            raw(-gyro.z, gyroScale), raw(-gyro.x, gyroScale), raw(gyro.y, gyroScale),
        ]
    }

    /// Byte 2: the battery level (unknown reads as full) and charging.
    static func batteryByte(_ battery: BatteryState) -> UInt8 {
        let level = battery == .unknown ? 4 : min(4, (Int(battery.percent) + 12) / 25)
        return UInt8(level << 5) | (battery.charging ? 0x10 : 0)
    }

    /// Bytes 0-12 (the state every input report starts with) into `out`.
    static func encodeState(
        _ snapshot: PadSnapshot, reportID: UInt8, timer: UInt8, into out: UnsafeMutableRawBufferPointer
    ) {
        out[0] = reportID
        out[1] = timer
        out[2] = batteryByte(snapshot.battery)
        let bits = buttons(snapshot)
        for index in 0..<3 { out[3 + index] = UInt8(truncatingIfNeeded: bits >> (8 * index)) }
        packStick(x: stickRaw(snapshot.leftX), y: stickRaw(snapshot.leftY, inverted: true), into: out, at: 6)
        packStick(x: stickRaw(snapshot.rightX), y: stickRaw(snapshot.rightY, inverted: true), into: out, at: 9)
        out[12] = 0x80
    }

    static func packStick(x: Int, y: Int, into out: UnsafeMutableRawBufferPointer, at offset: Int) {
        for (index, byte) in SwitchProFlash.packedPair(x, y).enumerated() { out[offset + index] = byte }
    }

    /// Writes report `reportID` (0x30: with three copies of the snapshot's IMU sample) for `snapshot` into `buffer`
    /// (precondition: at least `size` bytes); returns `size`.
    public static func encode(
        _ snapshot: PadSnapshot, reportID: UInt8 = fullReportID, timer: UInt8, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let out = ReportBytes.prepare(buffer, count: size, for: "SwitchProInputReport")
        encodeState(snapshot, reportID: reportID, timer: timer, into: out)
        if reportID == fullReportID {
            let sample = imuSample(snapshot.motion)
            for copy in 0..<3 {
                for (index, value) in sample.enumerated() {
                    ReportBytes.storeInt16(value, into: out, at: 13 + 12 * copy + 2 * index)
                }
            }
        }
        return size
    }

    public static func encoded(_ snapshot: PadSnapshot, timer: UInt8 = 0) -> [UInt8] {
        ReportBytes.array(count: size) { encode(snapshot, timer: timer, into: $0) }
    }

    /// The 0x21 report answering `subcommand` with `data` (its bytes after the subcommand ID).
    public static func reply(
        to subcommand: UInt8, data: [UInt8], identity: DualSenseIdentity, showing snapshot: PadSnapshot, timer: UInt8
    ) -> [UInt8] {
        let (ack, payload) = replyPayload(to: subcommand, data: data, identity: identity)
        return ReportBytes.array(count: size) { out in
            encodeState(snapshot, reportID: subcommandReplyID, timer: timer, into: out)
            out[13] = ack
            out[14] = subcommand
            for (index, byte) in payload.prefix(size - 15).enumerated() { out[15 + index] = byte }
            return size
        }
    }

    /// The ACK byte and reply data for `subcommand`.
    static func replyPayload(to subcommand: UInt8, data: [UInt8], identity: DualSenseIdentity) -> (UInt8, [UInt8]) {
        switch subcommand {
        case 0x02:
            // Firmware 3.72, type 3 (Pro Controller), 0x02, the MAC as printed, 0x01, 0x01 (colours in the flash).
            return (0x82, [0x03, 0x48, 0x03, 0x02] + identity.octets + [0x01, 0x01])
        case 0x10 where data.count >= 5:
            let address = UInt32(data[0]) | UInt32(data[1]) << 8 | UInt32(data[2]) << 16 | UInt32(data[3]) << 24
            let length = min(Int(data[4]), SwitchProFlash.largestRead)
            return (0x90, Array(data[0..<4]) + [UInt8(length)] + SwitchProFlash.read(address: address, count: length))
        default:
            return (0x80, [])
        }
    }
}

/// The pad's SPI flash, as far as hid-nintendo and SDL read it; everything else reads as erased (0xFF), so no user
/// calibration (the magic bytes 0xB2 0xA1 at 0x8010, 0x801B, 0x8026 are absent) and both readers take the factory
/// values:
///
/// | address | bytes | what |
/// |---|---|---|
/// | 0x6020 | 24 | IMU (s16 LE): accel offsets 0, 0, 0; accel scales 16384 ×3; gyro offsets 0, 0, 0; scales 13371 ×3 |
/// | 0x603D | 9 | left stick: x, y above centre (2047, 2047); centre (2048, 2048); below centre (2047, 2047) |
/// | 0x6046 | 9 | right stick: centre; below; above (the right stick's order) |
/// | 0x6050 | 12 | colours: body 0x323232, buttons 0xFFFFFF, grips 0x323232 ×2 |
///
/// Why these: offsets 0 make hid-nintendo's gyro 1000 × raw (its resolution 14 247 per °/s) and SDL's accel
/// 4 / (16384 − 0) g per unit; a stick range of 2047 puts the calibrated ends at the 12-bit field's ends (1 and 4095),
/// the finest steps the report allows. See `SwitchProInputReport` for how the model's units follow.
public enum SwitchProFlash {
    /// The most bytes one read returns (what fits in a 64-byte 0x21 report after its echo of address and length).
    public static let largestRead = 64 - 15 - 5

    static let contents: [(UInt32, [UInt8])] = {
        let center = SwitchProInputReport.stickCenter, range = SwitchProInputReport.stickRange
        let centerPair = packedPair(center, center), rangePair = packedPair(range, range)
        var imu: [UInt8] = []
        for value in [0, 0, 0, 16384, 16384, 16384, 0, 0, 0, 13371, 13371, 13371] as [Int16] {
            imu += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        let colours: [UInt8] = [0x32, 0x32, 0x32, 0xFF, 0xFF, 0xFF, 0x32, 0x32, 0x32, 0x32, 0x32, 0x32]
        return [
            (0x6020, imu), (0x603D, rangePair + centerPair + rangePair), (0x6046, centerPair + rangePair + rangePair),
            (0x6050, colours),
        ]
    }()

    /// `count` bytes from `address`.
    public static func read(address: UInt32, count: Int) -> [UInt8] {
        (0..<count).map { offset in
            let at = address &+ UInt32(offset)
            for (start, bytes) in contents where at >= start && at < start + UInt32(bytes.count) {
                return bytes[Int(at - start)]
            }
            return 0xFF
        }
    }

    /// Two 12-bit values in three bytes, the first in the low 12 bits.
    static func packedPair(_ first: Int, _ second: Int) -> [UInt8] {
        [UInt8(first & 0xFF), UInt8((first >> 8) & 0x0F | (second & 0x0F) << 4), UInt8((second >> 4) & 0xFF)]
    }
}

/// A Switch pad's HD rumble bytes: two blocks of four, the left actuator then the right, each a high band
/// (bytes 0-1: frequency, and amplitude code in byte 1's bits 1-7) and a low band (bytes 2-3: frequency in byte
/// 2's bits 0-6, amplitude code (byte 3 − 0x40) · 2 + byte 2's bit 7). A code (0...100) is an amplitude of the
/// published table (dekuNukem's rumble_data_table.md, as hid-nintendo and SDL encode it), 0...1003 thousandths.
///
/// Onto the model's two motors: `strong` is the left block's low band, `weak` the right block's high band, each
/// amplitude / 1003. That reads both writers right: hid-nintendo puts FF_RUMBLE's strong magnitude in both bands of
/// the left block and the weak one in both of the right; SDL puts the low-frequency (strong) motor in the low band
/// and the high-frequency (weak) one in the high band of both blocks.
public enum SwitchProRumble {
    public static let amplitudes: [Int] = [
        0, 10, 12, 14, 17, 20, 24, 28, 33, 40, 47, 56, 67, 80, 95, 112, 117, 123, 128, 134, 140, 146, 152, 159, 166,
        173, 181, 189, 198, 206, 215, 225, 230, 235, 240, 245, 251, 256, 262, 268, 273, 279, 286, 292, 298, 305, 311,
        318, 325, 332, 340, 347, 355, 362, 370, 378, 387, 395, 404, 413, 422, 431, 440, 450, 460, 470, 480, 491, 501,
        512, 524, 535, 547, 559, 571, 584, 596, 609, 623, 636, 650, 665, 679, 694, 709, 725, 741, 757, 773, 790, 808,
        825, 843, 862, 881, 900, 920, 940, 960, 981, 1003,
    ]
    public static let fullAmplitude = 1003.0

    /// The high band's amplitude code of a block (`bytes[offset...offset+3]`), 0...100.
    static func highCode(_ bytes: [UInt8], _ offset: Int) -> Int { min(Int(bytes[offset + 1] >> 1), 100) }

    /// The low band's amplitude code of a block, 0...100 (codes below the table's start read as 0).
    static func lowCode(_ bytes: [UInt8], _ offset: Int) -> Int {
        let code = 2 * (Int(bytes[offset + 3]) - 0x40) + Int(bytes[offset + 2] >> 7)
        return min(max(code, 0), 100)
    }

    /// The two motors for 8 rumble bytes (precondition: `bytes.count >= 8`).
    public static func decode(_ bytes: [UInt8]) -> Rumble {
        Rumble(
            strong: Double(amplitudes[lowCode(bytes, 0)]) / fullAmplitude,
            weak: Double(amplitudes[highCode(bytes, 4)]) / fullAmplitude)
    }
}
