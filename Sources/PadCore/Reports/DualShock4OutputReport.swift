/// The DualShock 4 output report (doc §8.2): USB 0x05 (32 bytes) and Bluetooth 0x11 (78 bytes, CRC-32 seed 0xA2 in
/// bytes 74...77). Models rumble (valid_flag0 bit 0: motor_right = weak, motor_left = strong, byte / 255) and the
/// lightbar (valid_flag0 bit 1: R, G, B). Player LEDs, mic LED and triggers do not exist on a DS4 and are not encoded.
///
/// | field | USB | Bluetooth |
/// |---|---|---|
/// | hw_control | — | 1 (encode: 0xC4 = HID 0x80 \| CRC 0x40 \| 4 ms poll interval, the kernel default) |
/// | valid_flag0 | 1 | 3 |
/// | motor_right (weak), motor_left (strong) | 4, 5 | 6, 7 |
/// | lightbar R, G, B | 6...8 | 8...10 |
///
/// Encoding sets only the flags of the fields present (the kernel always sends both; a sender that wants that
/// behaviour sets both fields). Decoding returns only flagged fields; an all-zero flag byte decodes as an empty
/// `Feedback` (unlike the DualSense there is no audio-haptics fallback to restore).
public enum DualShock4OutputReport {
    public static let usbReportID: UInt8 = 0x05, bluetoothReportID: UInt8 = 0x11
    public static let usbSize = 32, bluetoothSize = 78
    /// Bluetooth byte 1: 0x80 HID | 0x40 CRC | poll interval 4 ms.
    public static let bluetoothHardwareControl: UInt8 = 0xC4

    public static func size(for transport: HIDTransport) -> Int {
        switch transport {
        case .usb: usbSize
        case .bluetooth: bluetoothSize
        }
    }

    /// USB 0x05 (≥ 32 bytes) or Bluetooth 0x11 (≥ 78 bytes, CRC checked), chosen by report ID.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(ReportDecodingError) -> Feedback {
        guard let id = bytes.first else { throw .empty }
        switch id {
        case usbReportID:
            guard bytes.count >= usbSize else { throw .truncated(expected: usbSize, actual: bytes.count) }
            return decodeFields(bytes, flagsAt: 1)
        case bluetoothReportID:
            guard bytes.count >= bluetoothSize else {
                throw .truncated(expected: bluetoothSize, actual: bytes.count)
            }
            try PlayStationCRC32.verify(bytes, length: bluetoothSize, seed: PlayStationCRC32.outputSeed)
            return decodeFields(bytes, flagsAt: 3)
        default:
            throw .unknownReportID(id)
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(ReportDecodingError) -> Feedback {
        try ReportBytes.decode(bytes, decode)
    }

    /// Encodes into `buffer` (precondition: `buffer.count >= size(for: transport)`); returns the bytes written.
    public static func encode(
        _ feedback: Feedback, transport: HIDTransport, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let size = size(for: transport)
        let out = ReportBytes.prepare(buffer, count: size, for: "DualShock4OutputReport")
        switch transport {
        case .usb:
            out[0] = usbReportID
            encodeFields(feedback, into: out, flagsAt: 1)
        case .bluetooth:
            out[0] = bluetoothReportID
            out[1] = bluetoothHardwareControl
            encodeFields(feedback, into: out, flagsAt: 3)
            PlayStationCRC32.seal(out, seed: PlayStationCRC32.outputSeed)
        }
        return size
    }

    public static func encoded(_ feedback: Feedback, transport: HIDTransport) -> [UInt8] {
        ReportBytes.array(count: size(for: transport)) { encode(feedback, transport: transport, into: $0) }
    }

    /// `f` = offset of valid_flag0; motors at f+3, f+4; lightbar at f+5...f+7.
    static func decodeFields(_ bytes: UnsafeRawBufferPointer, flagsAt f: Int) -> Feedback {
        let flags = bytes[f]
        var feedback = Feedback()
        if flags & 0x01 != 0 {
            feedback.rumble = Rumble(strong: Double(bytes[f + 4]) / 255, weak: Double(bytes[f + 3]) / 255)
        }
        if flags & 0x02 != 0 {
            feedback.lightbar = LightbarColor(red: bytes[f + 5], green: bytes[f + 6], blue: bytes[f + 7])
        }
        return feedback
    }

    static func encodeFields(_ feedback: Feedback, into out: UnsafeMutableRawBufferPointer, flagsAt f: Int) {
        var flags: UInt8 = 0
        if let rumble = feedback.rumble {
            flags |= 0x01
            out[f + 3] = Rumble.byte(rumble.weak)
            out[f + 4] = Rumble.byte(rumble.strong)
        }
        if let lightbar = feedback.lightbar {
            flags |= 0x02
            out[f + 5] = lightbar.red
            out[f + 6] = lightbar.green
            out[f + 7] = lightbar.blue
        }
        out[f] = flags
    }
}
