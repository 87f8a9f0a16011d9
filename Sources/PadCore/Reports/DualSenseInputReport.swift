/// The DualSense input report (doc §1): USB report 0x01 (64 bytes, common block at byte 1) and Bluetooth report 0x31
/// (78 bytes, common block at byte 2, CRC-32 seed 0xA1 in bytes 74...77).
///
/// Mapping between the common block (offsets `c+N`) and `PadSnapshot`:
///
/// | c+ | raw | snapshot |
/// |---|---|---|
/// | 0...3 | LX, LY, RX, RY u8 (0 = left/up) | `Int16(truncatingIfNeeded: v * 257 - 32768)`: 0 → -32768, 255 → 32767, 0x80 → +128. Up is already negative: no inversion. Back: `(x + 32768) >> 8` |
/// | 4, 5 | L2, R2 u8 | `(v * 32767 + 127) / 255` (0...32767, rounded). Back: `(t * 255 + 16383) / 32767` |
/// | 6 | sequence counter | ignored on decode; `sequence` on encode |
/// | 7 | hat + face | hat 0...7 = N...NW, ≥ 8 released → `dpup/dpdown/dpleft/dpright`; Square → `x`, Cross → `a`, Circle → `b`, Triangle → `y`. Encode drops a contradictory pair (up+down, left+right) |
/// | 8 | L1, R1, L2, R2 (digital), Create, Options, L3, R3 | `leftshoulder`, `rightshoulder`, —, —, `back`, `start`, `leftstick`, `rightstick`. The digital L2/R2 bits are not modelled: encode sets them when the analog byte is above 0 |
/// | 9 | PS, touchpad click, Mute, (Edge) left Fn, right Fn, left paddle, right paddle | `guide`, `touchpad`, `misc1`, `paddle4`, `paddle3`, `paddle2`, `paddle1` (SDL 2.32's mapping of the Edge: right paddle = paddle1, left paddle = paddle2, right Fn = paddle3, left Fn = paddle4) |
/// | 15...20 | gyro pitch, yaw, roll s16 | `motion.gyroRadiansPerSecond` x, y, z = raw / 16 · π/180. Assumes the "identity" calibration a virtual pad advertises (doc §4.2): 1 LSB = 1/16 °/s |
/// | 21...26 | accel x, y, z s16 | `motion.accelMetersPerSecondSquared` = raw / 8192 · 9.80665 (8192 LSB per g) |
/// | 27...30 | sensor timestamp u32, 1/3 µs | `timestampMicroseconds = raw / 3`. Encode: `UInt32(truncatingIfNeeded: µs * 3)`: sub-microsecond ticks are lost (decoding is still stable) |
/// | 32...35, 36...39 | touch points 0, 1 | `touches.first/second`: byte 0 bit 7 set = not touching, bits 0-6 tracking id; X 0...1919 → x = X / 1919, Y 0...1079 → y = Y / 1079 (raw beyond the surface clamps to 1); encode rounds and clamps. An inactive contact keeps its id and coordinates; encoded with bit 7 set |
/// | 52 | battery: bits 0-3 level 0...10, bits 4-7 charge state | state 0x0/0x1: percent = min(level · 10 + 5, 100); 0x2 (full): 100; other (errors): 0. `charging` = state 0x1. Encode: level = min(percent / 10, 10), state = charging ? 0x1 : 0x0 |
///
/// Percent round trips are lossy by design (the device has 11 levels). Every other field is stable from raw units
/// (`decode(encode(decode(raw))) == decode(raw)`); the battery is too, except the error states 0xA...0xF: they decode
/// to 0 %, which encodes as "discharging, level 0" and decodes again as 5 %. Bytes the snapshot does not model (reserved fields,
/// trigger status, audio status, the Bluetooth byte 1) are ignored on decode and written as 0 on encode.
/// Decoding never allocates; trailing bytes after the report's size are ignored.
public enum DualSenseInputReport {
    public static let usbReportID: UInt8 = 0x01, bluetoothReportID: UInt8 = 0x31
    public static let usbSize = 64, bluetoothSize = 78
    static let touchMaxX = 1919, touchMaxY = 1079

    public static func size(for transport: HIDTransport) -> Int {
        switch transport {
        case .usb: usbSize
        case .bluetooth: bluetoothSize
        }
    }

    /// Decodes a USB 0x01 (≥ 64 bytes) or Bluetooth 0x31 (≥ 78 bytes, CRC checked) report, chosen by report ID.
    /// The 10-byte Bluetooth "simple" 0x01 report (doc §1.5) is not decoded (it throws `.truncated`).
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(ReportDecodingError) -> PadSnapshot {
        guard let id = bytes.first else { throw .empty }
        switch id {
        case usbReportID:
            guard bytes.count >= usbSize else { throw .truncated(expected: usbSize, actual: bytes.count) }
            return decodeCommon(bytes, at: 1)
        case bluetoothReportID:
            guard bytes.count >= bluetoothSize else {
                throw .truncated(expected: bluetoothSize, actual: bytes.count)
            }
            try PlayStationCRC32.verify(bytes, length: bluetoothSize, seed: PlayStationCRC32.inputSeed)
            return decodeCommon(bytes, at: 2)
        default:
            throw .unknownReportID(id)
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(ReportDecodingError) -> PadSnapshot {
        try ReportBytes.decode(bytes, decode)
    }

    /// Encodes into `buffer` (precondition: `buffer.count >= size(for: transport)`) and returns the bytes written.
    /// `sequence` goes to c+6; Bluetooth byte 1 is 0 (the kernel ignores it) and the CRC is sealed.
    public static func encode(
        _ snapshot: PadSnapshot, transport: HIDTransport, sequence: UInt8,
        into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let size = size(for: transport)
        let out = ReportBytes.prepare(buffer, count: size, for: "DualSenseInputReport")
        switch transport {
        case .usb:
            out[0] = usbReportID
            encodeCommon(snapshot, sequence: sequence, into: out, at: 1)
        case .bluetooth:
            out[0] = bluetoothReportID
            encodeCommon(snapshot, sequence: sequence, into: out, at: 2)
            PlayStationCRC32.seal(out, seed: PlayStationCRC32.inputSeed)
        }
        return size
    }

    public static func encoded(_ snapshot: PadSnapshot, transport: HIDTransport, sequence: UInt8 = 0) -> [UInt8] {
        ReportBytes.array(count: size(for: transport)) {
            encode(snapshot, transport: transport, sequence: sequence, into: $0)
        }
    }

    // MARK: Common block (63 bytes; caller has checked the length)

    static func decodeCommon(_ bytes: UnsafeRawBufferPointer, at c: Int) -> PadSnapshot {
        typealias F = PlayStationInputFields
        var buttons = ButtonSet()
        F.insertButtons0(bytes[c + 7], into: &buttons)
        F.insertButtons1(bytes[c + 8], into: &buttons)
        let b2 = bytes[c + 9]
        if b2 & 0x01 != 0 { buttons.insert(.guide) }
        if b2 & 0x02 != 0 { buttons.insert(.touchpad) }
        if b2 & 0x04 != 0 { buttons.insert(.misc1) }
        if b2 & 0x10 != 0 { buttons.insert(.paddle4) }
        if b2 & 0x20 != 0 { buttons.insert(.paddle3) }
        if b2 & 0x40 != 0 { buttons.insert(.paddle2) }
        if b2 & 0x80 != 0 { buttons.insert(.paddle1) }

        let (gyro, accel) = F.motion(bytes, gyroAt: c + 15, accelAt: c + 21)
        let timestamp = UInt64(ReportBytes.loadUInt32(bytes, at: c + 27)) / 3
        let touches = TouchContacts(
            first: F.touch(bytes, at: c + 32, maxX: touchMaxX, maxY: touchMaxY),
            second: F.touch(bytes, at: c + 36, maxX: touchMaxX, maxY: touchMaxY)
        )
        return PadSnapshot(
            buttons: buttons,
            leftX: F.stick(bytes[c]), leftY: F.stick(bytes[c + 1]),
            rightX: F.stick(bytes[c + 2]), rightY: F.stick(bytes[c + 3]),
            leftTrigger: F.trigger(bytes[c + 4]), rightTrigger: F.trigger(bytes[c + 5]),
            touches: touches,
            motion: MotionSample(gyroRadiansPerSecond: gyro, accelMetersPerSecondSquared: accel,
                                 timestampMicroseconds: timestamp),
            battery: battery(bytes[c + 52])
        )
    }

    /// A DualSense Edge's four back buttons (`paddle1`-`paddle4`), which hid-playstation makes no event for, from
    /// a full input report (USB 0x01 of 64 bytes, or Bluetooth 0x31 of 78 with a good CRC); nil for any other
    /// report (Bluetooth's short 0x01 has no such byte).
    public static func edgeBackButtons(_ bytes: UnsafeRawBufferPointer) -> ButtonSet? {
        let c: Int
        switch bytes.first {
        case usbReportID? where bytes.count >= usbSize: c = 1
        case bluetoothReportID? where bytes.count >= bluetoothSize:
            guard PlayStationCRC32.isValid(UnsafeRawBufferPointer(rebasing: bytes[0..<bluetoothSize]), seed: PlayStationCRC32.inputSeed)
            else { return nil }
            c = 2
        default: return nil
        }
        let b2 = bytes[c + 9]
        var buttons = ButtonSet()
        if b2 & 0x10 != 0 { buttons.insert(.paddle4) }
        if b2 & 0x20 != 0 { buttons.insert(.paddle3) }
        if b2 & 0x40 != 0 { buttons.insert(.paddle2) }
        if b2 & 0x80 != 0 { buttons.insert(.paddle1) }
        return buttons
    }

    /// The Edge's back buttons, as `edgeBackButtons` reads them.
    public static let edgeBackButtonSet = ButtonSet([.paddle1, .paddle2, .paddle3, .paddle4])

    static func encodeCommon(
        _ snapshot: PadSnapshot, sequence: UInt8, into out: UnsafeMutableRawBufferPointer, at c: Int
    ) {
        typealias F = PlayStationInputFields
        out[c] = F.stickByte(snapshot.leftX)
        out[c + 1] = F.stickByte(snapshot.leftY)
        out[c + 2] = F.stickByte(snapshot.rightX)
        out[c + 3] = F.stickByte(snapshot.rightY)
        out[c + 4] = F.triggerByte(snapshot.leftTrigger)
        out[c + 5] = F.triggerByte(snapshot.rightTrigger)
        out[c + 6] = sequence
        out[c + 7] = F.buttons0(from: snapshot.buttons)
        out[c + 8] = F.buttons1(from: snapshot)
        let buttons = snapshot.buttons
        var b2: UInt8 = 0
        if buttons.contains(.guide) { b2 |= 0x01 }
        if buttons.contains(.touchpad) { b2 |= 0x02 }
        if buttons.contains(.misc1) { b2 |= 0x04 }
        if buttons.contains(.paddle4) { b2 |= 0x10 }
        if buttons.contains(.paddle3) { b2 |= 0x20 }
        if buttons.contains(.paddle2) { b2 |= 0x40 }
        if buttons.contains(.paddle1) { b2 |= 0x80 }
        out[c + 9] = b2
        F.storeMotion(snapshot.motion, into: out, gyroAt: c + 15, accelAt: c + 21)
        ReportBytes.storeUInt32(
            UInt32(truncatingIfNeeded: snapshot.motion.timestampMicroseconds &* 3), into: out, at: c + 27)
        let touches = snapshot.touches.onOneTouchpad  // a Steam Deck's trackpads on the touchpad's halves
        F.storeTouch(touches.first, into: out, at: c + 32, maxX: touchMaxX, maxY: touchMaxY)
        F.storeTouch(touches.second, into: out, at: c + 36, maxX: touchMaxX, maxY: touchMaxY)
        out[c + 52] = batteryByte(snapshot.battery)
    }

    static func battery(_ byte: UInt8) -> BatteryState {
        let level = Int(byte & 0x0F), state = byte >> 4
        switch state {
        case 0x0, 0x1: return BatteryState(percent: UInt8(min(level * 10 + 5, 100)), charging: state == 0x1)
        case 0x2: return BatteryState(percent: 100, charging: false)
        default: return BatteryState(percent: 0, charging: false)
        }
    }

    static func batteryByte(_ battery: BatteryState) -> UInt8 {
        let level = min(battery.percent / 10, 10)
        return (battery.charging ? 0x10 : 0x00) | level
    }
}
