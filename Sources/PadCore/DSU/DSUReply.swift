/// What a DSU server says of one pad it serves: its state, and what the slot's description carries. What a caller
/// (a command reading a pad, a remap bridge, a forwarding host) hands the server for each frame. A value: no heap
/// storage.
public struct DSUPadState: Sendable, Hashable {
    public var snapshot: PadSnapshot
    /// How clients tell the pad again across runs (`DSUMACAddress.none`: they cannot).
    public var mac: DSUMACAddress
    public var connection: DSUConnectionType
    public var motion: DSUMotionModel
    /// nil: the pad says nothing of a battery (a wired pad), or the snapshot's battery is to be taken.
    public var battery: BatteryState?
    /// False while the pad is away (unplugged, its link lost): the slot is kept for it, described as not connected.
    public var connected: Bool

    public init(
        snapshot: PadSnapshot, mac: DSUMACAddress, connection: DSUConnectionType, motion: DSUMotionModel,
        battery: BatteryState? = nil, connected: Bool = true
    ) {
        self.snapshot = snapshot
        self.mac = mac
        self.connection = connection
        self.motion = motion
        self.battery = battery
        self.connected = connected
    }

    /// What a slot says of `controller`, showing nothing yet: its MAC (a Bluetooth pad's serial; else one made up
    /// from its ID, the same every run), how it is connected, whether it has motion sensors, its battery as last
    /// listed.
    public init(describing controller: Controller) {
        let mac =
            controller.serial.flatMap { DSUMACAddress(parsing: $0) }
            ?? DSUMACAddress(locallyAdministeredFrom: controller.fingerprint.rawValue) ?? .none
        let connection: DSUConnectionType =
            switch controller.bus {
            case .usb: .usb
            case .bluetooth: .bluetooth
            case .virtual, .other: .notApplicable
            }
        self.init(
            snapshot: .neutral, mac: mac, connection: connection,
            motion: controller.capabilities.motion ? .fullGyro : .none, battery: controller.battery)
    }
}

/// A pad's motion in DSU's units and axes, as DS4Windows (whose DualShock 4 the protocol was made for) sends it and
/// emulators read it: accelerometer in g, gyroscope in degrees per second, pitch/yaw/roll.
///
/// padbridge's `MotionSample` has SDL's axes (x to the pad's right, y up out of its face, z toward the player;
/// rotation right-handed about them), which are also a DualSense's and DualShock 4's own report axes. DSU's are those
/// of the DualShock 4's report with signs turned: accelerometer x, y and z negated (a pad lying flat reads y = -1 g);
/// pitch as it is (the far end rising is positive), yaw and roll negated (turning the pad to the right, clockwise
/// seen from above, is positive yaw; the right side going down is positive roll). Dolphin names its DSU inputs so:
/// "Gyro Yaw Right" is positive yaw, "Gyro Pitch Up" positive pitch, "Accel Up" negative y.
public struct DSUMotionReading: Sendable, Hashable {
    public var accelXG: Float
    public var accelYG: Float
    public var accelZG: Float
    public var pitchDegreesPerSecond: Float
    public var yawDegreesPerSecond: Float
    public var rollDegreesPerSecond: Float

    public init(_ sample: MotionSample) {
        let perG = 1 / standardGravityMetersPerSecondSquared
        let degreesPerRadian = 180 / Double.pi
        let accel = sample.accelMetersPerSecondSquared, gyro = sample.gyroRadiansPerSecond
        // `0 - v`, not `-v`: a reading of zero stays +0, not -0.
        accelXG = Float((0 - accel.x) * perG)
        accelYG = Float((0 - accel.y) * perG)
        accelZG = Float((0 - accel.z) * perG)
        pitchDegreesPerSecond = Float(gyro.x * degreesPerRadian)
        yawDegreesPerSecond = Float((0 - gyro.y) * degreesPerRadian)
        rollDegreesPerSecond = Float((0 - gyro.z) * degreesPerRadian)
    }
}

/// The datagrams a DSU server sends, written into a caller's buffer (no allocation: the pad-data path runs per frame).
public enum DSUReply {
    public static let versionBytes = 22
    public static let portInfoBytes = 32
    public static let padDataBytes = 100
    /// Where a pad-data datagram holds its packet number (a per-client counter: `restamp` rewrites it).
    public static let packetNumberOffset = 32

    /// The version reply (22 bytes) into `buffer`'s start; returns its length.
    @discardableResult
    public static func encodeVersion(serverID: UInt32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let out = ReportBytes.prepare(buffer, count: versionBytes, for: "a DSU version reply")
        writeHeader(type: .version, serverID: serverID, into: out)
        ReportBytes.storeUInt16(DSUProtocol.version, into: out, at: 20)
        DSUChecksum.seal(out)
        return versionBytes
    }

    /// The port-info reply (32 bytes) for `slot`: the pad there (nil: none, the slot described as not connected).
    @discardableResult
    public static func encodePortInfo(
        slot: UInt8, pad: DSUPadState?, serverID: UInt32, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let out = ReportBytes.prepare(buffer, count: portInfoBytes, for: "a DSU port-info reply")
        writeHeader(type: .portInfo, serverID: serverID, into: out)
        writeSlotDescription(slot: slot, pad: pad, into: out)
        DSUChecksum.seal(out)
        return portInfoBytes
    }

    /// The pad-data reply (100 bytes) for the pad in `slot`, numbered `packetNumber` (each client counts its own),
    /// its motion stamped `motionTimestampMicroseconds` (the pad's sensor clock, made monotonic: `DSUMotionClock`).
    @discardableResult
    public static func encodePadData(
        slot: UInt8, pad: DSUPadState, packetNumber: UInt32, motionTimestampMicroseconds: UInt64, serverID: UInt32,
        into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let out = ReportBytes.prepare(buffer, count: padDataBytes, for: "a DSU pad-data reply")
        writeHeader(type: .padData, serverID: serverID, into: out)
        writeSlotDescription(slot: slot, pad: pad, into: out)
        let snapshot = pad.snapshot
        out[31] = pad.connected ? 1 : 0
        ReportBytes.storeUInt32(packetNumber, into: out, at: packetNumberOffset)
        let buttons = snapshot.buttons
        func bit(_ button: Button, _ value: UInt8) -> UInt8 { buttons.contains(button) ? value : 0 }
        let leftTrigger = triggerByte(snapshot.leftTrigger), rightTrigger = triggerByte(snapshot.rightTrigger)
        // Byte 36, from bit 7 down: d-pad left, down, right, up, options, R3, L3, share.
        out[36] =
            bit(.dpleft, 0x80) | bit(.dpdown, 0x40) | bit(.dpright, 0x20) | bit(.dpup, 0x10) | bit(.start, 0x08)
            | bit(.rightstick, 0x04) | bit(.leftstick, 0x02) | bit(.back, 0x01)
        // Byte 37: Y (top), B (right), A (bottom), X (left), R1, L1, R2, L2: the face buttons by position, as SDL's.
        out[37] =
            bit(.y, 0x80) | bit(.b, 0x40) | bit(.a, 0x20) | bit(.x, 0x10) | bit(.rightshoulder, 0x08)
            | bit(.leftshoulder, 0x04) | (rightTrigger > 0 ? 0x02 : 0) | (leftTrigger > 0 ? 0x01 : 0)
        out[38] = buttons.contains(.guide) ? 1 : 0
        out[39] = buttons.contains(.touchpad) ? 1 : 0
        out[40] = stickByte(snapshot.leftX, upward: false)
        out[41] = stickByte(snapshot.leftY, upward: true)
        out[42] = stickByte(snapshot.rightX, upward: false)
        out[43] = stickByte(snapshot.rightY, upward: true)
        // Analog d-pad left, down, right, up; Y, B, A, X; R1, L1 (digital here: 0 or 255); R2, L2.
        out[44] = bit(.dpleft, 255)
        out[45] = bit(.dpdown, 255)
        out[46] = bit(.dpright, 255)
        out[47] = bit(.dpup, 255)
        out[48] = bit(.y, 255)
        out[49] = bit(.b, 255)
        out[50] = bit(.a, 255)
        out[51] = bit(.x, 255)
        out[52] = bit(.rightshoulder, 255)
        out[53] = bit(.leftshoulder, 255)
        out[54] = rightTrigger
        out[55] = leftTrigger
        let touches = snapshot.touches.onOneTouchpad  // a Steam Deck's trackpads on the touchpad's halves
        writeTouch(touches.first, into: out, at: 56)
        writeTouch(touches.second, into: out, at: 62)
        if pad.motion != .none {
            for index in 0..<8 { out[68 + index] = UInt8(truncatingIfNeeded: motionTimestampMicroseconds >> (8 * index)) }
            let reading = DSUMotionReading(snapshot.motion)
            writeFloat(reading.accelXG, into: out, at: 76)
            writeFloat(reading.accelYG, into: out, at: 80)
            writeFloat(reading.accelZG, into: out, at: 84)
            if pad.motion == .fullGyro {
                writeFloat(reading.pitchDegreesPerSecond, into: out, at: 88)
                writeFloat(reading.yawDegreesPerSecond, into: out, at: 92)
                writeFloat(reading.rollDegreesPerSecond, into: out, at: 96)
            }
        }
        DSUChecksum.seal(out)
        return padDataBytes
    }

    /// Gives an encoded pad-data datagram (`padDataBytes` long) another packet number, and seals it again: one
    /// encoding per frame, one restamp per client it goes to.
    public static func restamp(_ datagram: UnsafeMutableRawBufferPointer, packetNumber: UInt32) {
        precondition(datagram.count >= padDataBytes, "a DSU pad-data datagram is \(padDataBytes) bytes")
        let out = UnsafeMutableRawBufferPointer(rebasing: datagram[0..<padDataBytes])
        ReportBytes.storeUInt32(packetNumber, into: out, at: packetNumberOffset)
        DSUChecksum.seal(out)
    }

    /// DSU's battery byte: 0 not applicable, 1 dying to 5 full, 0xEE charging, 0xEF charged.
    public static func batteryCode(_ battery: BatteryState?) -> UInt8 {
        guard let battery, battery != .unknown else { return 0 }
        if battery.charging { return battery.percent >= 100 ? 0xEF : 0xEE }
        switch battery.percent {
        case 90...: return 5
        case 60..<90: return 4
        case 30..<60: return 3
        case 10..<30: return 2
        default: return 1
        }
    }

    /// A stick axis (-32768...32767, up negative) as DSU's byte: 0...255, 128 at rest, Y plus upward.
    public static func stickByte(_ value: Int16, upward: Bool) -> UInt8 {
        let signed = upward ? min(-Int32(value), 32767) : Int32(value)
        return UInt8((signed + 32768) >> 8)
    }

    /// A trigger (0...32767) as 0...255, rounded.
    public static func triggerByte(_ value: Int16) -> UInt8 {
        UInt8((Int32(max(0, value)) * 255 + 16383) / 32767)
    }

    /// DSU gives touch positions no range; padbridge sends the DualShock 4's (x 0...1919, y 0...941), which clients
    /// such as Dolphin assume.
    public static let touchMaximumX = 1919.0
    public static let touchMaximumY = 941.0

    private static func writeHeader(type: DSUMessageType, serverID: UInt32, into out: UnsafeMutableRawBufferPointer) {
        ReportBytes.storeUInt32(DSUProtocol.serverMagic, into: out, at: 0)
        ReportBytes.storeUInt16(DSUProtocol.version, into: out, at: 4)
        ReportBytes.storeUInt16(UInt16(out.count - DSUProtocol.headerBytes), into: out, at: 6)
        ReportBytes.storeUInt32(serverID, into: out, at: 12)
        ReportBytes.storeUInt32(type.rawValue, into: out, at: 16)
    }

    /// Bytes 20-30: slot, state (2 connected, 0 not), motion model, connection, MAC (most significant byte first),
    /// battery. An empty slot: its number, then zeros.
    private static func writeSlotDescription(slot: UInt8, pad: DSUPadState?, into out: UnsafeMutableRawBufferPointer) {
        out[20] = slot
        guard let pad else { return }
        out[21] = pad.connected ? 2 : 0
        out[22] = pad.motion.rawValue
        out[23] = pad.connection.rawValue
        for index in 0..<6 { out[24 + index] = UInt8(truncatingIfNeeded: pad.mac.rawValue >> (8 * (5 - index))) }
        out[30] = batteryCode(pad.battery ?? pad.snapshot.battery)
    }

    private static func writeTouch(_ touch: TouchContact, into out: UnsafeMutableRawBufferPointer, at offset: Int) {
        guard touch.active else { return }
        out[offset] = 1
        out[offset + 1] = touch.trackingID
        ReportBytes.storeUInt16(coordinate(touch.x, maximum: touchMaximumX), into: out, at: offset + 2)
        ReportBytes.storeUInt16(coordinate(touch.y, maximum: touchMaximumY), into: out, at: offset + 4)
    }

    private static func coordinate(_ value: Double, maximum: Double) -> UInt16 {
        guard value.isFinite else { return 0 }
        return UInt16((min(max(value, 0), 1) * maximum).rounded())
    }

    private static func writeFloat(_ value: Float, into out: UnsafeMutableRawBufferPointer, at offset: Int) {
        ReportBytes.storeUInt32(value.bitPattern, into: out, at: offset)
    }
}
