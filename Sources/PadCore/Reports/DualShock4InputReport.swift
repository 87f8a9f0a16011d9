/// The DualShock 4 input report (doc §8.1): USB 0x01 (64 bytes, common block at 1), Bluetooth 0x11 (78 bytes, common
/// block at 3, CRC-32 seed 0xA1 in 74...77) and the Bluetooth "short" 0x01 report (10 bytes: sticks, buttons and
/// triggers only) that the pad sends before the host reads its calibration.
///
/// Conversions are those of `DualSenseInputReport` (sticks, triggers, hat and face buttons, touch point format,
/// gyro/accel units: raw s16 with the same assumed scale, 1/16 °/s and 8192 per g), with these differences:
///
/// | c+ | raw | snapshot |
/// |---|---|---|
/// | 0...3 | LX, LY, RX, RY | as DualSense |
/// | 4 | hat + face | as DualSense |
/// | 5 | L1, R1, L2, R2 (digital), Share, Options, L3, R3 | as DualSense (Share → `back`) |
/// | 6 | bit 0 PS, bit 1 pad click, bits 2-7 frame counter | `guide`, `touchpad`; encode writes `sequence` (low 6 bits) into the counter |
/// | 7, 8 | L2, R2 analog | as DualSense |
/// | 9...10 | timestamp u16, 16/3 µs | µs = raw · 16 / 3 (wraps with the device's 16-bit counter); encode raw = ⌈µs · 3 / 16⌉ mod 2¹⁶, which reproduces every raw value exactly |
/// | 12...17, 18...23 | gyro, accel s16 | as DualSense |
/// | 29 | bits 0-3 level 0...10 (11 = full on cable), bit 4 cable | percent = min(level · 10, 100); charging = cable && level < 11. Encode: level = min(percent / 10, 10), cable = charging |
/// | 32 | number of touch reports | ignored on decode (the first report is always read); encode writes 1 |
/// | 33... | touch reports, 9 bytes: timestamp, point 0, point 1 | first report only; X 0...1919 → x = X / 1919, Y 0...941 → y = Y / 941 |
///
/// The short report decodes with motion `.still`, no touches and battery `.unknown`. A 0x01 report of 10...63 bytes
/// is taken as the short report (there is no way to tell a truncated USB report from it). Bluetooth byte 1 is written as
/// `bluetoothHeader`; byte 2 and unmodelled fields as 0. Decoding never allocates; trailing bytes are ignored.
public enum DualShock4InputReport {
    public static let usbReportID: UInt8 = 0x01, bluetoothReportID: UInt8 = 0x11
    public static let usbSize = 64, bluetoothSize = 78, bluetoothShortSize = 10
    /// Bluetooth byte 1 as a pad sends it: 0x80 "HID data present" (SDL reads a 0x11 report only with it) | 0x40 CRC.
    public static let bluetoothHeader: UInt8 = 0xC0
    static let touchMaxX = 1919, touchMaxY = 941

    public static func size(for transport: HIDTransport) -> Int {
        switch transport {
        case .usb: usbSize
        case .bluetooth: bluetoothSize
        }
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(ReportDecodingError) -> PadSnapshot {
        guard let id = bytes.first else { throw .empty }
        switch id {
        case usbReportID:
            if bytes.count >= usbSize { return decodeCommon(bytes, at: 1) }
            guard bytes.count >= bluetoothShortSize else {
                throw .truncated(expected: bluetoothShortSize, actual: bytes.count)
            }
            return decodeShort(bytes)
        case bluetoothReportID:
            guard bytes.count >= bluetoothSize else {
                throw .truncated(expected: bluetoothSize, actual: bytes.count)
            }
            try PlayStationCRC32.verify(bytes, length: bluetoothSize, seed: PlayStationCRC32.inputSeed)
            return decodeCommon(bytes, at: 3)
        default:
            throw .unknownReportID(id)
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(ReportDecodingError) -> PadSnapshot {
        try ReportBytes.decode(bytes, decode)
    }

    /// Encodes a full USB 0x01 or Bluetooth 0x11 report (precondition: `buffer.count >= size(for: transport)`);
    /// returns the bytes written. `sequence` goes to the frame counter (c+6 bits 2-7). Bluetooth: CRC sealed.
    public static func encode(
        _ snapshot: PadSnapshot, transport: HIDTransport, sequence: UInt8,
        into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let size = size(for: transport)
        let out = ReportBytes.prepare(buffer, count: size, for: "DualShock4InputReport")
        switch transport {
        case .usb:
            out[0] = usbReportID
            encodeCommon(snapshot, sequence: sequence, into: out, at: 1)
        case .bluetooth:
            out[0] = bluetoothReportID
            out[1] = bluetoothHeader
            encodeCommon(snapshot, sequence: sequence, into: out, at: 3)
            PlayStationCRC32.seal(out, seed: PlayStationCRC32.inputSeed)
        }
        return size
    }

    public static func encoded(_ snapshot: PadSnapshot, transport: HIDTransport, sequence: UInt8 = 0) -> [UInt8] {
        ReportBytes.array(count: size(for: transport)) {
            encode(snapshot, transport: transport, sequence: sequence, into: $0)
        }
    }

    // MARK: Layout

    /// Sticks, buttons and triggers: c+0...8, shared by the full reports and the short one (whose c+0 is byte 1).
    static func decodeControls(_ bytes: UnsafeRawBufferPointer, at c: Int) -> PadSnapshot {
        typealias F = PlayStationInputFields
        var buttons = ButtonSet()
        F.insertButtons0(bytes[c + 4], into: &buttons)
        F.insertButtons1(bytes[c + 5], into: &buttons)
        if bytes[c + 6] & 0x01 != 0 { buttons.insert(.guide) }
        if bytes[c + 6] & 0x02 != 0 { buttons.insert(.touchpad) }
        return PadSnapshot(
            buttons: buttons,
            leftX: F.stick(bytes[c]), leftY: F.stick(bytes[c + 1]),
            rightX: F.stick(bytes[c + 2]), rightY: F.stick(bytes[c + 3]),
            leftTrigger: F.trigger(bytes[c + 7]), rightTrigger: F.trigger(bytes[c + 8])
        )
    }

    static func decodeShort(_ bytes: UnsafeRawBufferPointer) -> PadSnapshot {
        decodeControls(bytes, at: 1)
    }

    static func decodeCommon(_ bytes: UnsafeRawBufferPointer, at c: Int) -> PadSnapshot {
        typealias F = PlayStationInputFields
        var snapshot = decodeControls(bytes, at: c)
        let (gyro, accel) = F.motion(bytes, gyroAt: c + 12, accelAt: c + 18)
        let timestamp = UInt64(ReportBytes.loadUInt16(bytes, at: c + 9)) * 16 / 3
        snapshot.motion = MotionSample(
            gyroRadiansPerSecond: gyro, accelMetersPerSecondSquared: accel, timestampMicroseconds: timestamp)
        snapshot.battery = battery(bytes[c + 29])
        let touch = c + 33 + 1  // first touch report: 1 timestamp byte, then two points
        snapshot.touches = TouchContacts(
            first: F.touch(bytes, at: touch, maxX: touchMaxX, maxY: touchMaxY),
            second: F.touch(bytes, at: touch + 4, maxX: touchMaxX, maxY: touchMaxY)
        )
        return snapshot
    }

    static func encodeCommon(
        _ snapshot: PadSnapshot, sequence: UInt8, into out: UnsafeMutableRawBufferPointer, at c: Int
    ) {
        typealias F = PlayStationInputFields
        out[c] = F.stickByte(snapshot.leftX)
        out[c + 1] = F.stickByte(snapshot.leftY)
        out[c + 2] = F.stickByte(snapshot.rightX)
        out[c + 3] = F.stickByte(snapshot.rightY)
        out[c + 4] = F.buttons0(from: snapshot.buttons)
        out[c + 5] = F.buttons1(from: snapshot)
        var b2 = sequence << 2
        if snapshot.buttons.contains(.guide) { b2 |= 0x01 }
        if snapshot.buttons.contains(.touchpad) { b2 |= 0x02 }
        out[c + 6] = b2
        out[c + 7] = F.triggerByte(snapshot.leftTrigger)
        out[c + 8] = F.triggerByte(snapshot.rightTrigger)
        let ticks = (snapshot.motion.timestampMicroseconds &* 3 &+ 15) / 16
        ReportBytes.storeUInt16(UInt16(truncatingIfNeeded: ticks), into: out, at: c + 9)
        F.storeMotion(snapshot.motion, into: out, gyroAt: c + 12, accelAt: c + 18)
        out[c + 29] = batteryByte(snapshot.battery)
        out[c + 32] = 1
        let touch = c + 33 + 1
        let touches = snapshot.touches.onOneTouchpad  // a Steam Deck's trackpads on the touchpad's halves
        F.storeTouch(touches.first, into: out, at: touch, maxX: touchMaxX, maxY: touchMaxY)
        F.storeTouch(touches.second, into: out, at: touch + 4, maxX: touchMaxX, maxY: touchMaxY)
    }

    static func battery(_ byte: UInt8) -> BatteryState {
        let level = Int(byte & 0x0F), cable = byte & 0x10 != 0
        return BatteryState(percent: UInt8(min(level * 10, 100)), charging: cable && level < 11)
    }

    static func batteryByte(_ battery: BatteryState) -> UInt8 {
        min(battery.percent / 10, 10) | (battery.charging ? 0x10 : 0)
    }
}
