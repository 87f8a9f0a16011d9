import PadCore
import Testing

/// The virtual Switch Pro Controller's emulation: what it answers hid-nintendo and SDL, the 0x30 report it streams,
/// and what the rumble and light bytes it is sent mean. Expected values come from the kernel's and SDL's own
/// formulas (hid-nintendo.c, SDL_hidapi_switch.c), written out here, not from the emulation.
@Suite struct EmulatedSwitchProTests {
    static let neutralRumble: [UInt8] = [0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40]

    /// Output 0x01 as hid-nintendo and SDL send it: packet number, rumble, subcommand, data, padded to 49 bytes.
    static func subcommand(_ id: UInt8, _ data: [UInt8] = [], rumble: [UInt8] = neutralRumble) -> [UInt8] {
        let report = [0x01, 0x00] + rumble + [id] + data
        return report + [UInt8](repeating: 0, count: max(0, 49 - report.count))
    }

    static func reply(_ pad: inout EmulatedSwitchPro, _ id: UInt8, _ data: [UInt8] = [],
                      showing snapshot: PadSnapshot = .neutral) throws -> [UInt8] {
        let response = pad.receiveOutput(subcommand(id, data), showing: snapshot)
        #expect(response.inputReports.count == 1)
        let reply = try #require(response.inputReports.first)
        #expect(reply.count == 64 && reply[0] == 0x21 && reply[13] & 0x80 != 0 && reply[14] == id)
        return reply
    }

    static func int16(_ bytes: [UInt8], _ offset: Int) -> Int {
        Int(Int16(bitPattern: UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8))
    }

    // MARK: - Identity and subcommand replies

    @Test func deviceInfoSaysProControllerWithTheMACOfUniq() throws {
        var pad = EmulatedSwitchPro(seed: "switch-tests")
        let reply = try Self.reply(&pad, 0x02)
        #expect(reply[13] == 0x82)
        #expect(Array(reply[15...18]) == [0x03, 0x48, 0x03, 0x02])  // firmware 3.72, type 3 = Pro Controller
        let mac = Array(reply[19...24])
        #expect(mac == DualSenseIdentity(seed: "switch-tests").octets)
        // hid-nintendo prints its nodes' uniq as "%02X:..." of these bytes: the pad is found by it.
        let printed = mac.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + digits : digits
        }.joined(separator: ":")
        #expect(pad.description.uniq == printed)
        #expect(pad.description.vendorID == 0x057E && pad.description.productID == 0x2009)
        #expect(pad.description.transport == .bluetooth)
        #expect(pad.inputDeviceNames(forPadNamed: "anything")
            == ["Nintendo Switch Pro Controller", "Nintendo Switch Pro Controller IMU"])
    }

    @Test func aReplyShowsThePadsStateAsTheStreamDoes() throws {
        var pad = EmulatedSwitchPro(seed: "state")
        let snapshot = PadSnapshot(buttons: ButtonSet([.a, .guide]), leftX: 12000)
        let reply = try Self.reply(&pad, 0x48, [0x01], showing: snapshot)
        let stream = SwitchProInputReport.encoded(snapshot)
        #expect(Array(reply[2...12]) == Array(stream[2...12]))
        #expect(reply[13] == 0x80 && reply[15...].allSatisfy { $0 == 0 })
    }

    @Test func theStreamStartsWithTheInputModeSubcommand() throws {
        var pad = EmulatedSwitchPro(seed: "stream")
        #expect(!pad.isStreaming)
        _ = try Self.reply(&pad, 0x02)
        _ = try Self.reply(&pad, 0x10, [0x3D, 0x60, 0x00, 0x00, 0x09])
        #expect(!pad.isStreaming)
        _ = try Self.reply(&pad, 0x03, [0x30])
        #expect(pad.isStreaming)
    }

    /// hid-nintendo's USB commands get no answer on Bluetooth (it then knows it is not on USB), nor do reports
    /// that are not the pad's.
    @Test func usbCommandsAndStrangersGetNoAnswer() {
        var pad = EmulatedSwitchPro(seed: "usb")
        #expect(pad.receiveOutput([0x80, 0x02], showing: .neutral) == .nothing)
        #expect(pad.receiveOutput([0x01, 0x00, 0x00], showing: .neutral) == .nothing)
        #expect(pad.featureReply(to: 0x02) == nil)
    }

    // MARK: - SPI flash

    static func spiRead(_ address: UInt32, _ length: UInt8) throws -> [UInt8] {
        var pad = EmulatedSwitchPro(seed: "spi")
        let addressBytes = (0..<4).map { UInt8(truncatingIfNeeded: address >> (8 * $0)) }
        let reply = try reply(&pad, 0x10, addressBytes + [length])
        #expect(reply[13] == 0x90)
        #expect(Array(reply[15...19]) == addressBytes + [length])  // the request echoed before the data
        return Array(reply[20..<(20 + Int(length))])
    }

    /// hid-nintendo reads 24 bytes at 0x6020 (accel offsets, accel scales, gyro offsets, gyro scales); SDL the
    /// same. Offsets 0 and the default scales.
    @Test func theIMUCalibrationIsTheDriversDefaultsWithOffsetsZero() throws {
        let bytes = try Self.spiRead(0x6020, 24)
        let values = (0..<12).map { Self.int16(bytes, 2 * $0) }
        #expect(values == [0, 0, 0, 16384, 16384, 16384, 0, 0, 0, 13371, 13371, 13371])
    }

    /// SDL reads both sticks' factory calibration at once (18 bytes at 0x603D), hid-nintendo each stick apart;
    /// parsed as SDL parses them: left max, centre, min; right centre, min, max.
    @Test(arguments: [true, false])
    func theStickCalibrationIsCentre2048AndRange2047(readTogether: Bool) throws {
        let both = readTogether
            ? try Self.spiRead(0x603D, 18) : try Self.spiRead(0x603D, 9) + Self.spiRead(0x6046, 9)
        func first(_ bytes: ArraySlice<UInt8>) -> Int { Int(bytes[bytes.startIndex + 1] & 0x0F) << 8 | Int(bytes[bytes.startIndex]) }
        func second(_ bytes: ArraySlice<UInt8>) -> Int { Int(bytes[bytes.startIndex + 2]) << 4 | Int(bytes[bytes.startIndex + 1] >> 4) }
        let left = both[0..<9], right = both[9..<18]
        for pair in [left[0..<3], left[6..<9], right[12..<15], right[15..<18]] {
            #expect(first(pair) == 2047 && second(pair) == 2047)  // span above / below the centre
        }
        for pair in [left[3..<6], right[9..<12]] {
            #expect(first(pair) == 2048 && second(pair) == 2048)  // centre
        }
    }

    /// No user calibration: the magic bytes 0xB2 0xA1 are absent where both readers look.
    @Test(arguments: [(UInt32(0x8010), UInt8(22)), (0x801B, 2), (0x8026, 20)])
    func theUserCalibrationIsErased(address: UInt32, length: UInt8) throws {
        #expect(try Self.spiRead(address, length).allSatisfy { $0 == 0xFF })
    }

    @Test func aReadLongerThanTheReplyHoldsIsCut() throws {
        var pad = EmulatedSwitchPro(seed: "long")
        let reply = try Self.reply(&pad, 0x10, [0x20, 0x60, 0x00, 0x00, 0xFF])
        #expect(reply[19] == UInt8(SwitchProFlash.largestRead) && reply.count == 64)
    }

    // MARK: - Report 0x30

    /// Buttons by position: hid-nintendo's JC_BTN_* bits for what its node calls BTN_SOUTH (B), BTN_EAST (A), ...
    @Test(arguments: [
        (Button.a, 2), (.b, 3), (.x, 0), (.y, 1), (.rightshoulder, 6), (.back, 8), (.start, 9), (.rightstick, 10),
        (.leftstick, 11), (.guide, 12), (.misc1, 13), (.dpdown, 16), (.dpup, 17), (.dpright, 18), (.dpleft, 19),
        (.leftshoulder, 22),
    ])
    func eachButtonHasItsBit(button: Button, bit: Int) {
        let report = SwitchProInputReport.encoded(PadSnapshot(buttons: ButtonSet([button])))
        let bits = UInt32(report[3]) | UInt32(report[4]) << 8 | UInt32(report[5]) << 16
        #expect(bits == 1 << bit)
    }

    @Test(arguments: [(Int16(0), false), (16383, false), (16384, true), (32767, true)])
    func zlAndZRArePressedPastHalf(trigger: Int16, pressed: Bool) {
        let report = SwitchProInputReport.encoded(PadSnapshot(leftTrigger: trigger, rightTrigger: trigger))
        #expect((report[5] & 0x80 != 0) == pressed)  // ZL, bit 23
        #expect((report[3] & 0x80 != 0) == pressed)  // ZR, bit 7
    }

    /// hid-nintendo's joycon_map_stick_val with the flash's calibration (centre 2048, 2047 either way), y negated.
    static func kernelStick(_ raw: Int) -> Int {
        raw > 2048 ? (raw - 2048) * 32767 / 2047 : (2048 - raw) * -32767 / 2047
    }

    @Test(arguments: [Int16(0), 1, -1, 100, -20000, 16000, 32767, -32767, -32768])
    func sticksMapBackThroughTheKernelsCalibration(value: Int16) {
        let snapshot = PadSnapshot(leftX: value, leftY: value, rightX: value, rightY: value)
        let report = SwitchProInputReport.encoded(snapshot)
        func unpack(_ offset: Int) -> (Int, Int) {
            (Int(report[offset]) | Int(report[offset + 1] & 0x0F) << 8, Int(report[offset + 1] >> 4) | Int(report[offset + 2]) << 4)
        }
        for offset in [6, 9] {
            let (x, y) = unpack(offset)
            let step = 32767 / 2047 + 1  // one 12-bit step
            #expect(abs(Self.kernelStick(x) - Int(value)) <= step)
            #expect(abs(-Self.kernelStick(y) - Int(value)) <= step)  // the kernel negates y: down positive
        }
        if value == 32767 || value == -32767 {
            let (x, y) = unpack(6)
            #expect(Self.kernelStick(x) == Int(value) && -Self.kernelStick(y) == Int(value))
        }
    }

    /// Three samples, on Nintendo's axes, in the units both readers take from the flash's calibration.
    @Test func motionIsOnNintendosAxesInTheCalibratedUnits() {
        let yaw90 = 90 * Double.pi / 180
        let motion = MotionSample(
            gyroRadiansPerSecond: Vector3(x: 0.2, y: yaw90, z: -0.4),
            accelMetersPerSecondSquared: Vector3(x: 1, y: 9.80665, z: -2))
        let report = SwitchProInputReport.encoded(PadSnapshot(motion: motion))
        let first = (0..<6).map { Self.int16(report, 13 + 2 * $0) }
        for copy in 1..<3 { #expect((0..<6).map { Self.int16(report, 13 + 12 * copy + 2 * $0) } == first) }
        // accel x y z: −model z, −model x, model y, 4096 a g
        #expect(first[0] == Int((2 / 9.80665 * 4096).rounded()) && first[1] == -Int((1 / 9.80665 * 4096).rounded()))
        #expect(first[2] == 4096)
        // hid-nintendo: 1000 · raw · scale / (scale − offset) at 14 247 a °/s
        func kernelDegreesPerSecond(_ raw: Int) -> Double { Double(1000 * raw) / 14247 }
        #expect(abs(kernelDegreesPerSecond(first[5]) - 90) < 0.05)  // yaw on z
        #expect(abs(kernelDegreesPerSecond(first[3]) - 0.4 * 180 / .pi) < 0.05)  // x = −model z
        #expect(abs(kernelDegreesPerSecond(first[4]) + 0.2 * 180 / .pi) < 0.05)  // y = −model x
        // SDL: 936 / (13371 − offset) °/s a unit, 0.27 % below hid-nintendo
        #expect(abs(Double(first[5]) * 936 / 13371 - 90) < 0.3)
    }

    @Test func aGoldenReport() {
        let snapshot = PadSnapshot(
            buttons: ButtonSet([.a, .dpleft, .misc1]), leftX: 32767, leftY: -32767, rightTrigger: 32767,
            battery: BatteryState(percent: 50, charging: true))
        let report = SwitchProInputReport.encoded(snapshot, timer: 7)
        #expect(Array(report[0...12]) == [
            0x30, 0x07, 0x50, 0x84, 0x20, 0x08,
            0xFF, 0xFF, 0xFF,  // left: x 4095, y 4095 (up)
            0x00, 0x08, 0x80,  // right: centred, 2048 and 2048
            0x80,
        ])
        #expect(report.count == 64 && report[13...].allSatisfy { $0 == 0 })
    }

    // MARK: - Rumble

    /// The low band of a block whose amplitude code is `code` (0...100): byte 3 = 0x40 + code / 2, byte 2's bit 7 =
    /// code's low bit, the frequency 0x40 (160 Hz) in bits 0-6; the high band's amplitude is `high`'s code · 2.
    static func block(lowCode: Int, highCode: Int) -> [UInt8] {
        [0x00, UInt8(highCode * 2) | 0x01, 0x40 | UInt8((lowCode & 1) << 7), UInt8(0x40 + lowCode / 2)]
    }

    @Test func everyAmplitudeCodeDecodesToItsTableValue() {
        #expect(SwitchProRumble.amplitudes.count == 101 && SwitchProRumble.amplitudes.last == 1003)
        for code in 0...100 {
            let rumble = SwitchProRumble.decode(Self.block(lowCode: code, highCode: 0) + Self.block(lowCode: 0, highCode: code))
            let expected = Double(SwitchProRumble.amplitudes[code]) / 1003
            #expect(rumble.strong == expected && rumble.weak == expected, "code \(code)")
        }
    }

    /// What hid-nintendo (FF_RUMBLE strong 0x8000, weak 0x4000: its tables give 501 and 251 thousandths, the left
    /// block both bands strong, the right both weak, 160/320 Hz) and SDL (low 0x8000, high 0x4000: codes 0x0062 and
    /// 0x48 in both blocks, 0x3D/0x74 its frequencies) send, and their silences.
    @Test(arguments: [
        ([UInt8(0x00), 0x89, 0x40, 0x62, 0x00, 0x49, 0x40, 0x52], 501, 251),
        ([0x74, 0x48, 0x3D, 0x62, 0x74, 0x48, 0x3D, 0x62], 501, 251),
        ([0x74, 0x48, 0xBD, 0x61, 0x74, 0x48, 0xBD, 0x61], 491, 251),
        ([0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40], 0, 0),
        ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], 1003, 1003),
        ([0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], 0, 0),
    ])
    func whatTheDriversSendDecodesToTheirMagnitudes(bytes: [UInt8], strong: Int, weak: Int) {
        #expect(SwitchProRumble.decode(bytes) == Rumble(strong: Double(strong) / 1003, weak: Double(weak) / 1003))
    }

    @Test func rumbleIsFeedbackWhenItChangesFromEitherReport() {
        var pad = EmulatedSwitchPro(seed: "rumble")
        let sdlHalf: [UInt8] = [0x74, 0x48, 0x3D, 0x62, 0x74, 0x48, 0x3D, 0x62]
        let half = Rumble(strong: 501.0 / 1003, weak: 251.0 / 1003)
        #expect(pad.receiveOutput(Self.subcommand(0x48, [0x01]), showing: .neutral).feedback.isEmpty)
        let rumbleOnly = [0x10, 0x01] + sdlHalf + [UInt8](repeating: 0, count: 39)
        let first = pad.receiveOutput(rumbleOnly, showing: .neutral)
        #expect(first.feedback == [.rumble(half)] && first.inputReports.isEmpty)
        #expect(pad.receiveOutput(rumbleOnly, showing: .neutral).feedback.isEmpty)  // resent: no change
        // A subcommand carries the rumble too: the same rumble is no news, silence is.
        #expect(pad.receiveOutput(Self.subcommand(0x40, [0x01], rumble: sdlHalf), showing: .neutral).feedback.isEmpty)
        #expect(pad.receiveOutput(Self.subcommand(0x40, [0x01]), showing: .neutral).feedback == [.rumble(.off)])
    }

    // MARK: - Lights

    @Test(arguments: [
        (UInt8(0x01), UInt8(0x04)), (0x03, 0x0A), (0x07, 0x15), (0x0F, 0x1B),  // hid-nintendo: the first N
        (0x02, 0x0A), (0x04, 0x15), (0x08, 0x1B),  // SDL: light N alone
        (0x05, 0x0A), (0x0E, 0x15),  // others: as many lights
        (0x00, 0x00), (0xF0, 0x00), (0x31, 0x04),  // flashing is not shown
    ])
    func playerLightsBecomeTheModelsPlayerPattern(lights: UInt8, mask: UInt8) {
        var pad = EmulatedSwitchPro(seed: "lights")
        let response = pad.receiveOutput(Self.subcommand(0x30, [lights]), showing: .neutral)
        #expect(response.feedback == [.playerLeds(mask: mask)])
        #expect(response.inputReports.count == 1)
    }

    @Test func theHomeLightIsAcknowledgedAndNotShown() {
        var pad = EmulatedSwitchPro(seed: "home")
        let response = pad.receiveOutput(Self.subcommand(0x38, [0x01, 0xF0, 0xF0, 0x00]), showing: .neutral)
        #expect(response.feedback.isEmpty && response.inputReports.count == 1)
    }

    // MARK: - Robustness and kind

    @Test func randomOutputReportsNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        var pad = EmulatedSwitchPro(seed: "random")
        for _ in 0..<2000 {
            let count = Int.random(in: 0...70, using: &generator)
            var report = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if count > 0 && Bool.random(using: &generator) { report[0] = [0x01, 0x10, 0x80].randomElement()! }
            let response = pad.receiveOutput(report, showing: .neutral)
            #expect(response.inputReports.allSatisfy { $0.count == 64 })
        }
    }

    @Test func theKindIsASwitchPro() {
        let kind = VirtualPadKind.switchPro
        #expect(kind.rawValue == "switch-pro" && kind.linkCode == 6 && VirtualPadKind(linkCode: 6) == kind)
        #expect(kind.bindingDrivers == ["hid-nintendo"] && kind.isHIDDevice && !kind.choosesItsBus)
        #expect(kind.capabilities.motion && !kind.capabilities.touchpad && kind.capabilities.buttons.contains(.misc1))
        #expect(!kind.capabilities.buttons.contains(.paddle1) && !kind.capabilities.buttons.contains(.touchpad))
        #expect(EmulatedSwitchPro(seed: "x").kind == kind && EmulatedSwitchPro(seed: "x").heartbeatMilliseconds == 15)
        #expect(!EmulatedSwitchPro(seed: "x").sendsChangesAtOnce && EmulatedDualShock4(seed: "x", transport: .usb).sendsChangesAtOnce)
    }
}
