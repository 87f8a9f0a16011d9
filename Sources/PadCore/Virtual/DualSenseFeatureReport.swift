/// The feature reports a virtual DualSense answers when `hid-playstation` probes it (and SDL or Steam re-read them
/// through hidraw): pairing info 0x09, firmware info 0x20 and calibration 0x05.
///
/// The kernel accepts a reply only if it has exactly the requested size and starts with the report ID; on the
/// Bluetooth bus the last four bytes must also be the CRC-32 seeded with 0xA3 (`PlayStationCRC32.featureSeed`).
/// On USB the trailing four bytes are left zero, as a real pad's are not checked there.
public enum DualSenseFeatureReport {
    public static let calibrationID: UInt8 = 0x05
    public static let pairingInfoID: UInt8 = 0x09
    public static let firmwareInfoID: UInt8 = 0x20

    public static let calibrationSize = 41
    public static let pairingInfoSize = 20
    public static let firmwareInfoSize = 64

    /// The `update_version` announced in the firmware report. Both the kernel (>= 0x0221) and SDL (>= 0x0224) then
    /// use the "improved" rumble path: valid_flag2 bit 2 with full 8-bit magnitudes.
    public static let updateVersion: UInt16 = 0x0224

    /// The reply to a GET_REPORT for feature `reportID`, or nil for a report a virtual pad does not serve
    /// (answer those with an error at once).
    public static func reply(to reportID: UInt8, identity: DualSenseIdentity, transport: HIDTransport) -> [UInt8]? {
        switch reportID {
        case pairingInfoID: pairingInfo(identity, transport: transport)
        case firmwareInfoID: firmwareInfo(transport: transport)
        case calibrationID: calibration(transport: transport)
        default: nil
        }
    }

    /// Feature 0x09 (20 bytes): the MAC at bytes 1-6, least-significant byte first. Bytes 7-15 are unknown on real
    /// pads (possibly the paired host's address) and stay zero.
    public static func pairingInfo(_ identity: DualSenseIdentity, transport: HIDTransport) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: pairingInfoSize)
        report[0] = pairingInfoID
        for (index, octet) in identity.pairingReportOrder.enumerated() { report[1 + index] = octet }
        return sealed(report, transport: transport)
    }

    /// Feature 0x20 (64 bytes): build date and time, hardware and firmware versions (informational: the kernel
    /// shows them in sysfs) and `updateVersion` at bytes 44-45, the one field drivers act on.
    public static func firmwareInfo(transport: HIDTransport) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: firmwareInfoSize)
        report[0] = firmwareInfoID
        report.replaceSubrange(1..<12, with: Array("Jun 19 2023".utf8))
        report.replaceSubrange(12..<20, with: Array("12:00:00".utf8))
        put(UInt16(0x0003), at: 20, in: &report)  // fw_type
        put(UInt16(0x0001), at: 22, in: &report)  // sw_series
        put(hardwareVersion, at: 24, in: &report)
        put(firmwareVersion, at: 28, in: &report)
        put(updateVersion, at: 44, in: &report)
        return sealed(report, transport: transport)
    }

    /// What sysfs `hardware_version` shows for a virtual pad.
    public static let hardwareVersion: UInt32 = 0x0000_0617
    /// What sysfs `firmware_version` shows for a virtual pad.
    public static let firmwareVersion: UInt32 = 0x0110_0224

    /// Feature 0x05 (41 bytes): the "identity" calibration. Gyro bias 0, gyro plus/minus ±8640 with speed 540/540
    /// and accelerometer plus/minus ±8192. With it the kernel scales gyro by exactly 64 (raw LSB = 1/16 °/s becomes
    /// 1024 per °/s) and accelerometer by exactly 1 (8192 per g), and SDL's sanity checks pass with sensitivity 64
    /// and 1 — so raw values in input reports mean the same to every reader.
    public static func calibration(transport: HIDTransport) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: calibrationSize)
        report[0] = calibrationID
        // 1-6: gyro pitch/yaw/roll bias = 0.
        let gyroRange: Int16 = 8640
        for axis in 0..<3 {  // 7-18: pitch+, pitch-, yaw+, yaw-, roll+, roll-
            put(gyroRange, at: 7 + 4 * axis, in: &report)
            put(-gyroRange, at: 9 + 4 * axis, in: &report)
        }
        put(Int16(540), at: 19, in: &report)  // gyro speed plus
        put(Int16(540), at: 21, in: &report)  // gyro speed minus
        let accelRange: Int16 = 8192
        for axis in 0..<3 {  // 23-34: X+, X-, Y+, Y-, Z+, Z-
            put(accelRange, at: 23 + 4 * axis, in: &report)
            put(-accelRange, at: 25 + 4 * axis, in: &report)
        }
        report[35] = 0x0B  // unknown; what real pads and inputtino send
        return sealed(report, transport: transport)
    }

    static func put<Value: FixedWidthInteger>(_ value: Value, at offset: Int, in report: inout [UInt8]) {
        for index in 0..<(Value.bitWidth / 8) {
            report[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
        }
    }

    static func sealed(_ report: [UInt8], transport: HIDTransport) -> [UInt8] {
        guard transport == .bluetooth else { return report }
        var copy = report
        copy.withUnsafeMutableBytes { PlayStationCRC32.seal($0, seed: PlayStationCRC32.featureSeed) }
        return copy
    }
}
