/// A `PadSnapshot` in the link's compact form (little-endian):
///
/// ```
/// u32 buttons (ButtonSet's bits) | i16 leftx lefty rightx righty lefttrigger righttrigger | u8 parts
/// parts bit 0 (touch):   2 x [u8 flags | u8 tracking id | u16 x | u16 y]   x, y as fractions of 65535
///                        flags: bit 0 active, bits 1-2 the surface (0 touchpad, 1 left trackpad, 2 right trackpad)
/// parts bit 1 (motion):  f32 gyro x y z (rad/s) | f32 accel x y z (m/s²) | u64 timestamp (µs)
/// parts bit 2 (battery): u8 percent | u8 charging
/// ```
///
/// A part is left out while it is at rest (no contact, `.still`, battery unknown): an Xbox pad's frame is 17 bytes,
/// a DualSense's with touch and motion 58. Precision: touch positions to 1/65535, motion to Float32; a decoded
/// snapshot encodes to the same bytes again.
public enum LinkSnapshotCodec {
    static let touchPart: UInt8 = 1 << 0
    static let motionPart: UInt8 = 1 << 1
    static let batteryPart: UInt8 = 1 << 2

    public static func encode(_ snapshot: PadSnapshot) -> [UInt8] {
        var writer = LinkByteWriter()
        encode(snapshot, into: &writer)
        return writer.bytes
    }

    /// How many bytes `encode` makes of `snapshot` (17, plus 12 with touch, 32 with motion, 2 with a battery).
    public static func encodedSize(of snapshot: PadSnapshot) -> Int {
        17 + (snapshot.touches != TouchContacts() ? 12 : 0) + (snapshot.motion != .still ? 32 : 0)
            + (snapshot.battery != .unknown ? 2 : 0)
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(LinkDecodingError) -> PadSnapshot {
        var reader = LinkByteReader(Array(bytes))
        let snapshot = try decode(from: &reader)
        guard reader.isAtEnd else { throw .invalid(field: "bytes after the snapshot") }
        return snapshot
    }

    static func encode(_ snapshot: PadSnapshot, into writer: inout LinkByteWriter) {
        let touched = snapshot.touches != TouchContacts()
        let moving = snapshot.motion != .still
        let battery = snapshot.battery != .unknown
        let size = 17 + (touched ? 12 : 0) + (moving ? 32 : 0) + (battery ? 2 : 0)  // as `encodedSize(of:)`
        writer.append(count: size) { cursor in
            cursor.u32(snapshot.buttons.rawValue)
            cursor.i16(snapshot.leftX)
            cursor.i16(snapshot.leftY)
            cursor.i16(snapshot.rightX)
            cursor.i16(snapshot.rightY)
            cursor.i16(snapshot.leftTrigger)
            cursor.i16(snapshot.rightTrigger)
            cursor.u8((touched ? touchPart : 0) | (moving ? motionPart : 0) | (battery ? batteryPart : 0))
            if touched {
                for index in 0..<TouchContacts.count {
                    let contact = snapshot.touches[index]
                    cursor.u8((contact.active ? 1 : 0) | contact.surface.rawValue << 1)
                    cursor.u8(contact.trackingID)
                    cursor.u16(fraction(contact.x))
                    cursor.u16(fraction(contact.y))
                }
            }
            if moving {
                let motion = snapshot.motion
                cursor.f32(motion.gyroRadiansPerSecond.x)
                cursor.f32(motion.gyroRadiansPerSecond.y)
                cursor.f32(motion.gyroRadiansPerSecond.z)
                cursor.f32(motion.accelMetersPerSecondSquared.x)
                cursor.f32(motion.accelMetersPerSecondSquared.y)
                cursor.f32(motion.accelMetersPerSecondSquared.z)
                cursor.u64(motion.timestampMicroseconds)
            }
            if battery {
                cursor.u8(snapshot.battery.percent)
                cursor.u8(snapshot.battery.charging ? 1 : 0)
            }
        }
    }

    /// Steps over a snapshot that was checked already (by a view's `init`): its size from its parts byte, nothing
    /// decoded. Bytes not checked must go through `decode`.
    static func skipChecked<Source>(in reader: inout LinkByteReader<Source>) throws(LinkDecodingError) {
        try reader.skip(16)
        let parts = try reader.u8()
        try reader.skip((parts & touchPart != 0 ? 12 : 0) + (parts & motionPart != 0 ? 32 : 0) + (parts & batteryPart != 0 ? 2 : 0))
    }

    static func decode<Source>(from reader: inout LinkByteReader<Source>) throws(LinkDecodingError) -> PadSnapshot {
        var snapshot = PadSnapshot(buttons: ButtonSet(rawValue: try reader.u32()))
        snapshot.leftX = try reader.i16()
        snapshot.leftY = try reader.i16()
        snapshot.rightX = try reader.i16()
        snapshot.rightY = try reader.i16()
        snapshot.leftTrigger = max(0, try reader.i16())
        snapshot.rightTrigger = max(0, try reader.i16())
        let parts = try reader.u8()
        guard parts & ~(touchPart | motionPart | batteryPart) == 0 else { throw .invalid(field: "snapshot parts") }
        if parts & touchPart != 0 {
            for index in 0..<TouchContacts.count {
                let flags = try reader.u8()
                guard flags & ~0x07 == 0, let surface = TouchSurface(rawValue: flags >> 1) else {
                    throw .invalid(field: "touch flags")
                }
                let trackingID = try reader.u8()
                let x = Double(try reader.u16()) / 65535
                let y = Double(try reader.u16()) / 65535
                snapshot.touches[index] = TouchContact(
                    trackingID: trackingID, active: flags & 1 != 0, surface: surface, x: x, y: y)
            }
        }
        if parts & motionPart != 0 {
            let gyro = Vector3(x: try reader.f32(), y: try reader.f32(), z: try reader.f32())
            let accel = Vector3(x: try reader.f32(), y: try reader.f32(), z: try reader.f32())
            snapshot.motion = MotionSample(
                gyroRadiansPerSecond: gyro, accelMetersPerSecondSquared: accel, timestampMicroseconds: try reader.u64())
        }
        if parts & batteryPart != 0 {
            let percent = try reader.u8()
            snapshot.battery = BatteryState(percent: percent, charging: try reader.u8() != 0)
        }
        return snapshot
    }

    static func fraction(_ value: Double) -> UInt16 {
        guard value.isFinite else { return 0 }
        return UInt16((min(max(value, 0), 1) * 65535).rounded())
    }
}
