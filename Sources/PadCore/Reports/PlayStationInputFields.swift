/// Field conversions shared by the DualSense and DualShock 4 input reports (doc §1.2-1.4, §8.1).
/// Every conversion from the device's raw units is exactly invertible: `raw(value(raw)) == raw`.
enum PlayStationInputFields {
    // MARK: Sticks

    /// u8 (0 = left/up, 255 = right/down) → Int16 -32768...32767. 0x80 (the device's centre) decodes to +128.
    @inline(__always) static func stick(_ raw: UInt8) -> Int16 {
        Int16(truncatingIfNeeded: Int(raw) * 257 - 32768)
    }

    @inline(__always) static func stickByte(_ value: Int16) -> UInt8 {
        UInt8(truncatingIfNeeded: (Int(value) + 32768) >> 8)
    }

    // MARK: Triggers

    /// u8 0...255 → 0...32767, rounded to nearest.
    @inline(__always) static func trigger(_ raw: UInt8) -> Int16 {
        Int16((Int(raw) * 32767 + 127) / 255)
    }

    /// 0...32767 (negative clamps to 0) → u8, rounded to nearest.
    @inline(__always) static func triggerByte(_ value: Int16) -> UInt8 {
        UInt8((max(0, Int(value)) * 255 + 16383) / 32767)
    }

    // MARK: Buttons

    /// Hat nibble 0...7 = N, NE, E, SE, S, SW, W, NW; 8 and above = released.
    static func insertHat(_ nibble: UInt8, into buttons: inout ButtonSet) {
        switch nibble {
        case 0: buttons.insert(.dpup)
        case 1: buttons.insert(.dpup); buttons.insert(.dpright)
        case 2: buttons.insert(.dpright)
        case 3: buttons.insert(.dpdown); buttons.insert(.dpright)
        case 4: buttons.insert(.dpdown)
        case 5: buttons.insert(.dpdown); buttons.insert(.dpleft)
        case 6: buttons.insert(.dpleft)
        case 7: buttons.insert(.dpup); buttons.insert(.dpleft)
        default: break
        }
    }

    /// The hat nibble for the d-pad buttons. A contradictory pair (up+down, left+right) counts as neither.
    static func hat(from buttons: ButtonSet) -> UInt8 {
        var up = buttons.contains(.dpup), down = buttons.contains(.dpdown)
        var left = buttons.contains(.dpleft), right = buttons.contains(.dpright)
        if up && down { up = false; down = false }
        if left && right { left = false; right = false }
        switch (up, down, left, right) {
        case (true, _, false, true): return 1
        case (true, _, true, _): return 7
        case (true, _, _, _): return 0
        case (_, true, false, true): return 3
        case (_, true, true, _): return 5
        case (_, true, _, _): return 4
        case (_, _, _, true): return 2
        case (_, _, true, _): return 6
        default: return 8
        }
    }

    /// buttons[0]: bits 0-3 hat, 4 Square → x, 5 Cross → a, 6 Circle → b, 7 Triangle → y.
    static func insertButtons0(_ byte: UInt8, into buttons: inout ButtonSet) {
        insertHat(byte & 0x0F, into: &buttons)
        if byte & 0x10 != 0 { buttons.insert(.x) }
        if byte & 0x20 != 0 { buttons.insert(.a) }
        if byte & 0x40 != 0 { buttons.insert(.b) }
        if byte & 0x80 != 0 { buttons.insert(.y) }
    }

    static func buttons0(from buttons: ButtonSet) -> UInt8 {
        var byte = hat(from: buttons)
        if buttons.contains(.x) { byte |= 0x10 }
        if buttons.contains(.a) { byte |= 0x20 }
        if buttons.contains(.b) { byte |= 0x40 }
        if buttons.contains(.y) { byte |= 0x80 }
        return byte
    }

    /// buttons[1]: 0 L1 → leftshoulder, 1 R1 → rightshoulder, 2/3 digital L2/R2 (ignored: the analog value is the
    /// model), 4 Create/Share → back, 5 Options → start, 6 L3 → leftstick, 7 R3 → rightstick.
    static func insertButtons1(_ byte: UInt8, into buttons: inout ButtonSet) {
        if byte & 0x01 != 0 { buttons.insert(.leftshoulder) }
        if byte & 0x02 != 0 { buttons.insert(.rightshoulder) }
        if byte & 0x10 != 0 { buttons.insert(.back) }
        if byte & 0x20 != 0 { buttons.insert(.start) }
        if byte & 0x40 != 0 { buttons.insert(.leftstick) }
        if byte & 0x80 != 0 { buttons.insert(.rightstick) }
    }

    /// Digital L2/R2 bits are set when the analog trigger is above 0.
    static func buttons1(from snapshot: PadSnapshot) -> UInt8 {
        let buttons = snapshot.buttons
        var byte: UInt8 = 0
        if buttons.contains(.leftshoulder) { byte |= 0x01 }
        if buttons.contains(.rightshoulder) { byte |= 0x02 }
        if triggerByte(snapshot.leftTrigger) > 0 { byte |= 0x04 }
        if triggerByte(snapshot.rightTrigger) > 0 { byte |= 0x08 }
        if buttons.contains(.back) { byte |= 0x10 }
        if buttons.contains(.start) { byte |= 0x20 }
        if buttons.contains(.leftstick) { byte |= 0x40 }
        if buttons.contains(.rightstick) { byte |= 0x80 }
        return byte
    }

    // MARK: Touch

    /// One 4-byte touch point: byte 0 bit 7 set = not touching, bits 0-6 tracking id; X 12 bits, Y 12 bits.
    /// Coordinates normalise to 0...1 by `maxX`/`maxY` (the largest valid coordinate); raw values beyond the
    /// pad's surface (the 12-bit fields can hold up to 4095) clamp to 1. Inactive contacts keep their coordinates.
    static func touch(_ bytes: UnsafeRawBufferPointer, at offset: Int, maxX: Int, maxY: Int) -> TouchContact {
        let b0 = bytes[offset], b1 = bytes[offset + 1], b2 = bytes[offset + 2], b3 = bytes[offset + 3]
        let x = Int(b1) | Int(b2 & 0x0F) << 8
        let y = Int(b2 >> 4) | Int(b3) << 4
        return TouchContact(
            trackingID: b0 & 0x7F,
            active: b0 & 0x80 == 0,
            x: Double(min(x, maxX)) / Double(maxX),
            y: Double(min(y, maxY)) / Double(maxY)
        )
    }

    static func storeTouch(
        _ contact: TouchContact, into bytes: UnsafeMutableRawBufferPointer, at offset: Int, maxX: Int, maxY: Int
    ) {
        let x = coordinate(contact.x, max: maxX), y = coordinate(contact.y, max: maxY)
        bytes[offset] = (contact.trackingID & 0x7F) | (contact.active ? 0 : 0x80)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: x)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: x >> 8) & 0x0F | UInt8(truncatingIfNeeded: y << 4)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: y >> 4)
    }

    /// Normalised 0...1 → 0...max, rounded; NaN and out-of-range values clamp.
    static func coordinate(_ value: Double, max limit: Int) -> Int {
        let clamped = value.isNaN ? 0 : min(max(value, 0), 1)
        return Int((clamped * Double(limit)).rounded())
    }

    // MARK: Motion

    /// Gyro: 1 LSB = 1/16 °/s (the "identity" calibration, doc §4.2) → rad/s.
    static let radiansPerSecondPerGyroUnit = Double.pi / 180 / 16
    /// Accel: 8192 LSB per g → m/s².
    static let metersPerSecondSquaredPerAccelUnit = standardGravityMetersPerSecondSquared / 8192

    /// Gyro at `gyroOffset` (pitch, yaw, roll → x, y, z) and accel at `accelOffset` (x, y, z), s16 LE each.
    static func motion(_ bytes: UnsafeRawBufferPointer, gyroAt gyroOffset: Int, accelAt accelOffset: Int)
        -> (gyro: Vector3, accel: Vector3)
    {
        let g = radiansPerSecondPerGyroUnit, a = metersPerSecondSquaredPerAccelUnit
        let gyro = Vector3(
            x: Double(ReportBytes.loadInt16(bytes, at: gyroOffset)) * g,
            y: Double(ReportBytes.loadInt16(bytes, at: gyroOffset + 2)) * g,
            z: Double(ReportBytes.loadInt16(bytes, at: gyroOffset + 4)) * g
        )
        let accel = Vector3(
            x: Double(ReportBytes.loadInt16(bytes, at: accelOffset)) * a,
            y: Double(ReportBytes.loadInt16(bytes, at: accelOffset + 2)) * a,
            z: Double(ReportBytes.loadInt16(bytes, at: accelOffset + 4)) * a
        )
        return (gyro, accel)
    }

    static func storeMotion(
        _ motion: MotionSample, into bytes: UnsafeMutableRawBufferPointer, gyroAt gyroOffset: Int,
        accelAt accelOffset: Int
    ) {
        let g = radiansPerSecondPerGyroUnit, a = metersPerSecondSquaredPerAccelUnit
        let gyro = motion.gyroRadiansPerSecond, accel = motion.accelMetersPerSecondSquared
        ReportBytes.storeInt16(rawInt16(gyro.x / g), into: bytes, at: gyroOffset)
        ReportBytes.storeInt16(rawInt16(gyro.y / g), into: bytes, at: gyroOffset + 2)
        ReportBytes.storeInt16(rawInt16(gyro.z / g), into: bytes, at: gyroOffset + 4)
        ReportBytes.storeInt16(rawInt16(accel.x / a), into: bytes, at: accelOffset)
        ReportBytes.storeInt16(rawInt16(accel.y / a), into: bytes, at: accelOffset + 2)
        ReportBytes.storeInt16(rawInt16(accel.z / a), into: bytes, at: accelOffset + 4)
    }

    /// Rounded to nearest and clamped to Int16; NaN → 0.
    static func rawInt16(_ value: Double) -> Int16 {
        if value.isNaN { return 0 }
        let rounded = value.rounded()
        if rounded >= Double(Int16.max) { return .max }
        if rounded <= Double(Int16.min) { return .min }
        return Int16(rounded)
    }
}
