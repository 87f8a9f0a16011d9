// Validating constructors (doc §3, "official" modes) and the command-line form.

extension TriggerEffect {
    static let zoneRange = 0...9

    /// Resistance from `startZone` (0...9) to the end of travel at `strength` (0...8; 0 gives `.off`, as the doc
    /// prescribes).
    public static func feedback(startZone: Int, strength: Int) throws(TriggerEffectError) -> TriggerEffect {
        guard zoneRange.contains(startZone) else { throw .outOfRange("feedback", "startZone", startZone, zoneRange) }
        guard (0...8).contains(strength) else { throw .outOfRange("feedback", "strength", strength, 0...8) }
        if strength == 0 { return .off }
        return .feedback(TriggerZoneStrengths(from: startZone, strength: UInt8(strength)))
    }

    /// Vibration from `startZone` (0...9) to the end of travel at `amplitude` (0...8) and `frequencyHz` (0...255).
    /// Amplitude 0 or frequency 0 gives `.off` (nothing would vibrate).
    public static func vibration(startZone: Int, amplitude: Int, frequencyHz: Int) throws(TriggerEffectError)
        -> TriggerEffect
    {
        guard zoneRange.contains(startZone) else { throw .outOfRange("vibration", "startZone", startZone, zoneRange) }
        guard (0...8).contains(amplitude) else { throw .outOfRange("vibration", "amplitude", amplitude, 0...8) }
        guard (0...255).contains(frequencyHz) else {
            throw .outOfRange("vibration", "frequencyHz", frequencyHz, 0...255)
        }
        if amplitude == 0 || frequencyHz == 0 { return .off }
        return .vibration(
            TriggerZoneStrengths(from: startZone, strength: UInt8(amplitude)), frequencyHz: UInt8(frequencyHz))
    }

    /// Semi-automatic gun: resistance from `startZone` (2...7) that snaps at `endZone` (startZone+1...8), at
    /// `strength` (1...8; 0 gives `.off`, like `feedback`).
    public static func weapon(startZone: Int, endZone: Int, strength: Int) throws(TriggerEffectError)
        -> TriggerEffect
    {
        guard (2...7).contains(startZone) else { throw .outOfRange("weapon", "startZone", startZone, 2...7) }
        guard (startZone + 1...8).contains(endZone) else {
            throw .outOfRange("weapon", "endZone", endZone, startZone + 1...8)
        }
        guard (0...8).contains(strength) else { throw .outOfRange("weapon", "strength", strength, 0...8) }
        if strength == 0 { return .off }
        return .weapon(startZone: UInt8(startZone), endZone: UInt8(endZone), strength: UInt8(strength))
    }

    static let commandLineForms =
        "off, feedback:START:STRENGTH, weapon:START:END:STRENGTH, vibration:POSITION:AMPLITUDE:FREQUENCY, raw:HEX22"

    /// Command-line form: `off`, `feedback:START:STRENGTH`, `weapon:START:END:STRENGTH`,
    /// `vibration:POSITION:AMPLITUDE:FREQUENCY`, `raw:HEX22` (22 hex digits, the 11 bytes; decoded with
    /// `init(block:)`, so a raw block that is a named effect becomes that effect). Mode names are case-insensitive.
    /// Errors name the field, the value and the allowed range.
    public init(commandLine: String) throws(TriggerEffectError) {
        let parts = commandLine.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let mode = parts[0].lowercased()
        let arguments = Array(parts.dropFirst())

        func expect(_ names: [String]) throws(TriggerEffectError) {
            guard arguments.count == names.count else {
                let form = ([mode] + names).joined(separator: ":")
                throw TriggerEffectError(
                    "\(mode) takes \(names.count) parameter\(names.count == 1 ? "" : "s") (\(form)), got \(arguments.count) in \"\(commandLine)\"")
            }
        }
        func integer(_ index: Int, _ name: String) throws(TriggerEffectError) -> Int {
            guard let value = Int(arguments[index]) else {
                throw TriggerEffectError("\(mode) \(name) \"\(arguments[index])\" is not an integer")
            }
            return value
        }

        switch mode {
        case "off":
            try expect([])
            self = .off
        case "feedback":
            try expect(["START", "STRENGTH"])
            self = try .feedback(startZone: integer(0, "startZone"), strength: integer(1, "strength"))
        case "weapon":
            try expect(["START", "END", "STRENGTH"])
            self = try .weapon(
                startZone: integer(0, "startZone"), endZone: integer(1, "endZone"), strength: integer(2, "strength"))
        case "vibration":
            try expect(["POSITION", "AMPLITUDE", "FREQUENCY"])
            self = try .vibration(
                startZone: integer(0, "startZone"), amplitude: integer(1, "amplitude"),
                frequencyHz: integer(2, "frequencyHz"))
        case "raw":
            try expect(["HEX22"])
            guard let block = TriggerEffectBlock(hex: arguments[0]) else {
                throw TriggerEffectError(
                    "raw block \"\(arguments[0])\" must be exactly 22 hex digits (11 bytes), got \(arguments[0].utf8.count) characters")
            }
            self = TriggerEffect(block: block)
        default:
            throw TriggerEffectError("unknown trigger effect \"\(parts[0])\"; expected one of: \(Self.commandLineForms)")
        }
    }
}
