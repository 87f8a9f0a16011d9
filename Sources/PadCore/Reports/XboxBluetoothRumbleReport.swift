/// The rumble output report 0x03 of an Xbox One S, Elite 2 or Series pad on Bluetooth (9 bytes), as hid-microsoft's
/// force feedback and SDL's HIDAPI Xbox driver write it, and as padbridge writes it to such a pad's hidraw node so
/// the trigger motors a game sets reach the pad (the kernel's force feedback has only the two grip motors):
///
/// | byte | field |
/// |---|---|
/// | 0 | 0x03 |
/// | 1 | enable bits: 0x01 weak, 0x02 strong, 0x04 right trigger, 0x08 left trigger |
/// | 2-5 | left trigger, right trigger, strong, weak: 0...100 |
/// | 6, 7 | duration and start delay, in 10 ms |
/// | 8 | loop count |
///
/// The magnitudes hold for the longest the report allows (2.55 s, 236 times: about 10 minutes, as SDL sends them),
/// until the next report.
public enum XboxBluetoothRumbleReport {
    public static let reportID: UInt8 = 0x03
    public static let size = 9

    /// The report setting all four motors to `rumble` (each rounded to the nearest of 0...100).
    public static func encoded(_ rumble: Rumble) -> [UInt8] {
        func magnitude(_ value: Double) -> UInt8 { UInt8((value * 100).rounded()) }
        return [
            reportID, 0x0F, magnitude(rumble.leftTrigger), magnitude(rumble.rightTrigger), magnitude(rumble.strong),
            magnitude(rumble.weak), 0xFF, 0x00, 0xEB,
        ]
    }
}
