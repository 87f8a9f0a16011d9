/// The four byte layouts in which DualSense output reports travel (doc §2.1). The 47-byte common block is the same in
/// all of them; only its position and the framing differ.
public enum DualSenseOutputLayout: Sendable, Hashable, CaseIterable {
    /// USB report 0x02, 63 bytes, common block at byte 1 (what `hid-playstation` sends).
    case usbKernel
    /// USB report 0x02, 48 bytes (the descriptor's size; SDL/Steam via hidraw), common block at byte 1.
    case usbCompact
    /// Bluetooth report 0x31, 78 bytes: byte 1 = sequence << 4, byte 2 = 0x10, common block at byte 3,
    /// CRC-32 (seed 0xA2) in bytes 74...77. What the kernel and SDL3 (≥ 2026-02) send.
    case bluetoothKernel
    /// Bluetooth report 0x31, 78 bytes: byte 1 = 0x02, common block at byte 2, CRC-32 (seed 0xA2).
    /// What SDL2 (and SDL3 before 2026-02) send.
    case bluetoothSDL2

    public var size: Int {
        switch self {
        case .usbKernel: 63
        case .usbCompact: 48
        case .bluetoothKernel, .bluetoothSDL2: 78
        }
    }

    public var reportID: UInt8 {
        switch self {
        case .usbKernel, .usbCompact: DualSenseOutputReport.usbReportID
        case .bluetoothKernel, .bluetoothSDL2: DualSenseOutputReport.bluetoothReportID
        }
    }

    /// Offset of the common block (c+0).
    public var commonBlockOffset: Int {
        switch self {
        case .usbKernel, .usbCompact: 1
        case .bluetoothKernel: 3
        case .bluetoothSDL2: 2
        }
    }

    public var transport: HIDTransport {
        switch self {
        case .usbKernel, .usbCompact: .usb
        case .bluetoothKernel, .bluetoothSDL2: .bluetooth
        }
    }
}

/// How rumble is switched on (doc §2.3). Both set valid_flag0 bit 1 (classic rumble instead of audio haptics).
public enum RumbleMethod: Sendable, Hashable, CaseIterable {
    /// valid_flag0 bit 0, "compatible vibration": older firmware.
    case compatible
    /// valid_flag2 bit 2, "compatible vibration 2": firmware ≥ 2.21 (kernel) / 2.24 (SDL), and the Edge.
    case improved
}

/// The DualSense output report (doc §2): rumble, lightbar, player LEDs, mic-mute LED and adaptive triggers.
///
/// Common-block fields (c+N) and `Feedback`:
///
/// | field | flag | bytes | `Feedback` |
/// |---|---|---|---|
/// | rumble | vf0 bit 0 or vf2 (c+38) bit 2 | c+3 strong (left motor), c+2 weak (right motor) | `rumble` = byte / 255 |
/// | mic LED | vf1 bit 0 | c+8 ≠ 0 → on | `micLed` |
/// | lightbar | vf1 bit 2 | c+44...46 R, G, B | `lightbar` |
/// | player LEDs | vf1 bit 4 | c+43 & 0x1F | `playerLeds` |
/// | right trigger | vf0 bit 2 | c+10...20 | `rightTrigger` = `TriggerEffect(block:)` |
/// | left trigger | vf0 bit 3 | c+21...31 | `leftTrigger` |
///
/// Decoding returns only the fields whose valid flags are set, with one exception: a report whose three valid-flag
/// bytes are all zero decodes as `rumble = .off`. That is how SDL stops rumble: it sends a report with the rumble
/// bits cleared, which makes the pad leave emulated rumble and go back to audio-driven haptics, i.e. the motors stop.
/// (Consequently an empty `Feedback` encodes to that same all-zero report and decodes as `rumble = .off`.)
/// Magnitudes are reported as sent: SDL halves them itself on the `.compatible` path.
///
/// Encoding sets exactly the flags of the fields present: rumble sets vf0 bit 1 plus vf0 bit 0 (`.compatible`) or
/// vf2 bit 2 (`.improved`) with magnitudes `Rumble.byte(_:)`; the mic LED writes c+8 = 1/0 with vf1 bit 0 and, as the
/// kernel does, power-save c+9 bit 4 (mic mute) with vf1 bit 1. Every other byte is zero.
public enum DualSenseOutputReport {
    public static let usbReportID: UInt8 = 0x02, bluetoothReportID: UInt8 = 0x31
    /// Smallest USB report accepted (report ID + 47-byte common block).
    public static let minimumUSBSize = 48
    public static let bluetoothSize = 78

    /// Decodes any of the four layouts. USB: ID 0x02 and at least 48 bytes (the kernel's 63 and SDL's 48 both fit;
    /// extra bytes are ignored). Bluetooth: ID 0x31, at least 78 bytes, valid CRC over bytes 0...73 (seed 0xA2);
    /// byte 1 bit 1 set selects the SDL2 layout (common block at 2), clear the kernel layout (common block at 3),
    /// as INPUTTINO does (doc §2.1). SDL2's CRC-less "tickle" report therefore throws `.checksumMismatch`.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(ReportDecodingError) -> Feedback {
        guard let id = bytes.first else { throw .empty }
        switch id {
        case usbReportID:
            guard bytes.count >= minimumUSBSize else {
                throw .truncated(expected: minimumUSBSize, actual: bytes.count)
            }
            return decodeCommon(bytes, at: 1)
        case bluetoothReportID:
            guard bytes.count >= bluetoothSize else {
                throw .truncated(expected: bluetoothSize, actual: bytes.count)
            }
            try PlayStationCRC32.verify(bytes, length: bluetoothSize, seed: PlayStationCRC32.outputSeed)
            return decodeCommon(bytes, at: bytes[1] & 0x02 != 0 ? 2 : 3)
        default:
            throw .unknownReportID(id)
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(ReportDecodingError) -> Feedback {
        try ReportBytes.decode(bytes, decode)
    }

    /// Encodes into `buffer` (precondition: `buffer.count >= layout.size`); returns `layout.size`.
    /// `sequence` is used only by `.bluetoothKernel` (its low 4 bits go to byte 1's high nibble).
    public static func encode(
        _ feedback: Feedback, layout: DualSenseOutputLayout, sequence: UInt8 = 0,
        rumbleMethod: RumbleMethod = .improved, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let out = ReportBytes.prepare(buffer, count: layout.size, for: "DualSenseOutputReport")
        out[0] = layout.reportID
        switch layout {
        case .usbKernel, .usbCompact: break
        case .bluetoothKernel:
            out[1] = (sequence & 0x0F) << 4
            out[2] = 0x10
        case .bluetoothSDL2:
            out[1] = 0x02
        }
        encodeCommon(feedback, rumbleMethod: rumbleMethod, into: out, at: layout.commonBlockOffset)
        if layout.transport == .bluetooth { PlayStationCRC32.seal(out, seed: PlayStationCRC32.outputSeed) }
        return layout.size
    }

    public static func encoded(
        _ feedback: Feedback, layout: DualSenseOutputLayout, sequence: UInt8 = 0,
        rumbleMethod: RumbleMethod = .improved
    ) -> [UInt8] {
        ReportBytes.array(count: layout.size) {
            encode(feedback, layout: layout, sequence: sequence, rumbleMethod: rumbleMethod, into: $0)
        }
    }

    // MARK: Common block (47 bytes; caller has checked the length)

    static func decodeCommon(_ bytes: UnsafeRawBufferPointer, at c: Int) -> Feedback {
        let vf0 = bytes[c], vf1 = bytes[c + 1], vf2 = bytes[c + 38]
        var feedback = Feedback()
        if vf0 | vf1 | vf2 == 0 {
            feedback.rumble = .off
            return feedback
        }
        if vf0 & 0x01 != 0 || vf2 & 0x04 != 0 {
            feedback.rumble = Rumble(strong: Double(bytes[c + 3]) / 255, weak: Double(bytes[c + 2]) / 255)
        }
        if vf1 & 0x01 != 0 { feedback.micLed = bytes[c + 8] != 0 }
        if vf1 & 0x04 != 0 {
            feedback.lightbar = LightbarColor(red: bytes[c + 44], green: bytes[c + 45], blue: bytes[c + 46])
        }
        if vf1 & 0x10 != 0 { feedback.playerLeds = bytes[c + 43] & 0x1F }
        if vf0 & 0x04 != 0 {
            let block = UnsafeRawBufferPointer(rebasing: bytes[(c + 10)..<(c + 21)])
            feedback.rightTrigger = TriggerEffect(block: TriggerEffectBlock(unsafe: block))
        }
        if vf0 & 0x08 != 0 {
            let block = UnsafeRawBufferPointer(rebasing: bytes[(c + 21)..<(c + 32)])
            feedback.leftTrigger = TriggerEffect(block: TriggerEffectBlock(unsafe: block))
        }
        return feedback
    }

    static func encodeCommon(
        _ feedback: Feedback, rumbleMethod: RumbleMethod, into out: UnsafeMutableRawBufferPointer, at c: Int
    ) {
        var vf0: UInt8 = 0, vf1: UInt8 = 0, vf2: UInt8 = 0
        if let rumble = feedback.rumble {
            vf0 |= 0x02
            switch rumbleMethod {
            case .compatible: vf0 |= 0x01
            case .improved: vf2 |= 0x04
            }
            out[c + 2] = Rumble.byte(rumble.weak)
            out[c + 3] = Rumble.byte(rumble.strong)
        }
        if let micLed = feedback.micLed {
            vf1 |= 0x01 | 0x02
            out[c + 8] = micLed ? 1 : 0
            out[c + 9] = micLed ? 0x10 : 0
        }
        if let lightbar = feedback.lightbar {
            vf1 |= 0x04
            out[c + 44] = lightbar.red
            out[c + 45] = lightbar.green
            out[c + 46] = lightbar.blue
        }
        if let playerLeds = feedback.playerLeds {
            vf1 |= 0x10
            out[c + 43] = playerLeds & 0x1F
        }
        if let right = feedback.rightTrigger {
            vf0 |= 0x04
            right.block.write(to: UnsafeMutableRawBufferPointer(rebasing: out[(c + 10)..<(c + 21)]))
        }
        if let left = feedback.leftTrigger {
            vf0 |= 0x08
            left.block.write(to: UnsafeMutableRawBufferPointer(rebasing: out[(c + 21)..<(c + 32)]))
        }
        out[c] = vf0
        out[c + 1] = vf1
        out[c + 38] = vf2
    }
}
