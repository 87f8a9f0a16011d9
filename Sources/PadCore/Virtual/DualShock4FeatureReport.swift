/// The feature reports a virtual DualShock 4 answers when its driver probes it (hid-sony on Linux 6.1,
/// hid-playstation from 6.2) and SDL or Steam read them through hidraw (doc §8.3):
///
/// | report | size | who asks | content |
/// |---|---|---|---|
/// | 0x81 | 7 | hid-sony, USB | the MAC at bytes 1-6, least-significant byte first |
/// | 0x12 | 16 | hid-playstation and SDL, USB | pairing info: the MAC at bytes 1-6, least-significant byte first |
/// | 0xA3 | 49 | both drivers, SDL | firmware info: build date and time, hw_version u16 @35, fw_version u16 @41 |
/// | 0x02 | 37 | USB | calibration: gyro bias, pitch+, pitch−, yaw+, yaw−, roll+, roll− at 7...18 |
/// | 0x05 | 41 | Bluetooth | calibration: pitch+, yaw+, roll+, pitch−, yaw−, roll− at 7...18; CRC-32 (seed 0xA3) |
///
/// On Bluetooth the pad takes its MAC from `uniq`. The calibration is the "identity" one the virtual DualSense
/// answers (`DualSenseFeatureReport.calibration`): gyro ±8640 at speed 540/540 and accelerometer ±8192, so the
/// drivers scale gyro by exactly 64 and accelerometer by 1, and raw report values mean the same to every reader.
public enum DualShock4FeatureReport {
    public static let usbCalibrationID: UInt8 = 0x02
    public static let bluetoothCalibrationID: UInt8 = 0x05
    public static let macID: UInt8 = 0x81
    public static let pairingInfoID: UInt8 = 0x12
    public static let firmwareInfoID: UInt8 = 0xA3

    public static let usbCalibrationSize = 37
    public static let bluetoothCalibrationSize = 41
    public static let macSize = 7
    public static let pairingInfoSize = 16
    public static let firmwareInfoSize = 49

    /// What sysfs `hardware_version` shows for a virtual pad (hid-playstation).
    public static let hardwareVersion: UInt16 = 0x0100
    /// What sysfs `firmware_version` shows for a virtual pad (hid-playstation).
    public static let firmwareVersion: UInt16 = 0x0001

    /// The calibration report's ID on `transport`.
    public static func calibrationID(for transport: HIDTransport) -> UInt8 {
        transport == .usb ? usbCalibrationID : bluetoothCalibrationID
    }

    /// The reply to a GET_REPORT for feature `reportID`, or nil for a report a virtual pad does not serve (answer
    /// those with an error at once).
    public static func reply(to reportID: UInt8, identity: DualSenseIdentity, transport: HIDTransport) -> [UInt8]? {
        switch (reportID, transport) {
        case (macID, .usb): mac(identity)
        case (pairingInfoID, .usb): pairingInfo(identity)
        case (firmwareInfoID, _): firmwareInfo()
        case (usbCalibrationID, .usb): calibration(transport: .usb)
        case (bluetoothCalibrationID, .bluetooth): calibration(transport: .bluetooth)
        default: nil
        }
    }

    public static func mac(_ identity: DualSenseIdentity) -> [UInt8] {
        [macID] + identity.pairingReportOrder
    }

    public static func pairingInfo(_ identity: DualSenseIdentity) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: pairingInfoSize)
        report[0] = pairingInfoID
        report.replaceSubrange(1...6, with: identity.pairingReportOrder)
        return report
    }

    public static func firmwareInfo() -> [UInt8] {
        var report = [UInt8](repeating: 0, count: firmwareInfoSize)
        report[0] = firmwareInfoID
        report.replaceSubrange(1..<12, with: Array("Sep 21 2018".utf8))
        report.replaceSubrange(17..<25, with: Array("04:50:51".utf8))
        DualSenseFeatureReport.put(hardwareVersion, at: 35, in: &report)
        DualSenseFeatureReport.put(firmwareVersion, at: 41, in: &report)
        return report
    }

    public static func calibration(transport: HIDTransport) -> [UInt8] {
        let gyroRange: Int16 = 8640, accelRange: Int16 = 8192
        var report = [UInt8](repeating: 0, count: transport == .usb ? usbCalibrationSize : bluetoothCalibrationSize)
        report[0] = calibrationID(for: transport)
        // 1-6: gyro pitch/yaw/roll bias = 0.
        for axis in 0..<3 {
            switch transport {
            case .usb:  // pitch+, pitch-, yaw+, yaw-, roll+, roll-
                DualSenseFeatureReport.put(gyroRange, at: 7 + 4 * axis, in: &report)
                DualSenseFeatureReport.put(-gyroRange, at: 9 + 4 * axis, in: &report)
            case .bluetooth:  // pitch+, yaw+, roll+, pitch-, yaw-, roll-
                DualSenseFeatureReport.put(gyroRange, at: 7 + 2 * axis, in: &report)
                DualSenseFeatureReport.put(-gyroRange, at: 13 + 2 * axis, in: &report)
            }
        }
        DualSenseFeatureReport.put(Int16(540), at: 19, in: &report)  // gyro speed plus
        DualSenseFeatureReport.put(Int16(540), at: 21, in: &report)  // gyro speed minus
        for axis in 0..<3 {  // 23-34: X+, X-, Y+, Y-, Z+, Z-
            DualSenseFeatureReport.put(accelRange, at: 23 + 4 * axis, in: &report)
            DualSenseFeatureReport.put(-accelRange, at: 25 + 4 * axis, in: &report)
        }
        return DualSenseFeatureReport.sealed(report, transport: transport)
    }
}
