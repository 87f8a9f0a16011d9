/// One adaptive-trigger effect (doc §3): what the DualSense output report's 11-byte trigger block asks for.
///
/// Zones divide the trigger travel into 10 steps, 0 (released) ... 9 (fully pressed). Parameters are stored in the
/// device's own units (zone numbers, strengths 1...8, raw bytes for the legacy modes), so every named case maps to
/// exactly one block and back.
///
/// Equality and hashing compare the encoded `block`: `.raw(TriggerEffect.off.block) == .off`, and a named case built
/// with out-of-range parameters equals whatever its bytes decode to. Named cases built directly are not validated;
/// `TriggerEffect(block:)`, `init(commandLine:)` and the throwing constructors only produce in-range values.
public enum TriggerEffect: Sendable {
    /// 0x05: no resistance; returns the trigger stop to neutral.
    case off
    /// 0x21: resistance per zone (strength 1...8, 0 = zone inactive).
    case feedback(TriggerZoneStrengths)
    /// 0x25: semi-automatic gun: resistance from `startZone` (2...7) snapping at `endZone` (start+1...8), strength 1...8.
    case weapon(startZone: UInt8, endZone: UInt8, strength: UInt8)
    /// 0x26: automatic gun: vibration amplitude per zone (1...8, 0 = inactive) at `frequencyHz`.
    case vibration(TriggerZoneStrengths, frequencyHz: UInt8)
    /// 0x22 (unofficial): start 0...7 < end ≤ 8, strength 1...8, snap-back force 1...8.
    case bow(startZone: UInt8, endZone: UInt8, strength: UInt8, snapForce: UInt8)
    /// 0x23 (unofficial): start 0...8 < end ≤ 9, first foot 0...6 < second foot ≤ 7, frequency in Hz.
    case galloping(startZone: UInt8, endZone: UInt8, firstFoot: UInt8, secondFoot: UInt8, frequencyHz: UInt8)
    /// 0x27 (unofficial): start 0...8 < end ≤ 9, amplitudes A and B 0...7, frequency in Hz, period in 0.1 s.
    case machine(
        startZone: UInt8, endZone: UInt8, amplitudeA: UInt8, amplitudeB: UInt8, frequencyHz: UInt8,
        periodTenthsOfSecond: UInt8)
    /// 0x01 (legacy "Rigid"): raw start position and strength, 0...255.
    case simpleFeedback(position: UInt8, strength: UInt8)
    /// 0x02 (legacy "Pulse"): raw start, end and strength.
    case simpleWeapon(start: UInt8, end: UInt8, strength: UInt8)
    /// 0x06 (legacy): raw frequency, amplitude, position.
    case simpleVibration(frequency: UInt8, amplitude: UInt8, position: UInt8)
    /// 0x11 (legacy): raw position, strength 0...10.
    case limitedFeedback(position: UInt8, strength: UInt8)
    /// 0x12 (legacy): start ≥ 0x10, end start...start+100, strength 0...10.
    case limitedWeapon(start: UInt8, end: UInt8, strength: UInt8)
    /// Any other block, forwarded byte for byte.
    case raw(TriggerEffectBlock)
}

// MARK: Modes

/// The mode byte of each named case, with its display name: the table `TriggerEffect(block:)` dispatches on.
enum TriggerEffectMode: UInt8, CaseIterable, Sendable {
    case off = 0x05
    case feedback = 0x21
    case weapon = 0x25
    case vibration = 0x26
    case bow = 0x22
    case galloping = 0x23
    case machine = 0x27
    case simpleFeedback = 0x01
    case simpleWeapon = 0x02
    case simpleVibration = 0x06
    case limitedFeedback = 0x11
    case limitedWeapon = 0x12

    var name: String {
        switch self {
        case .off: "off"
        case .feedback: "feedback"
        case .weapon: "weapon"
        case .vibration: "vibration"
        case .bow: "bow"
        case .galloping: "galloping"
        case .machine: "machine"
        case .simpleFeedback: "simpleFeedback"
        case .simpleWeapon: "simpleWeapon"
        case .simpleVibration: "simpleVibration"
        case .limitedFeedback: "limitedFeedback"
        case .limitedWeapon: "limitedWeapon"
        }
    }

    /// The named case these bytes describe if every parameter is in range; nil otherwise. Unused bytes are not
    /// checked here: `TriggerEffect(block:)` re-encodes the candidate and keeps it only if the bytes match.
    func candidate(_ b: TriggerEffectBlock) -> TriggerEffect? {
        switch self {
        case .off:
            return .off
        case .feedback:
            return TriggerZoneStrengths(activeMask: b.uint16(at: 1), packedValues: b.uint32(at: 3)).map {
                .feedback($0)
            }
        case .vibration:
            return TriggerZoneStrengths(activeMask: b.uint16(at: 1), packedValues: b.uint32(at: 3)).map {
                .vibration($0, frequencyHz: b[9])
            }
        case .weapon:
            guard let (start, end) = b.zonePair(), (2...7).contains(start), (start + 1...8).contains(end), b[3] <= 7
            else { return nil }
            return .weapon(startZone: start, endZone: end, strength: b[3] + 1)
        case .bow:
            guard let (start, end) = b.zonePair(), (0...7).contains(start), end <= 8 else { return nil }
            return .bow(startZone: start, endZone: end, strength: (b[3] & 0x07) + 1,
                        snapForce: ((b[3] >> 3) & 0x07) + 1)
        case .galloping:
            let second = b[3] & 0x07, first = (b[3] >> 3) & 0x07
            guard let (start, end) = b.zonePair(), end <= 9, first <= 6, first < second else { return nil }
            return .galloping(startZone: start, endZone: end, firstFoot: first, secondFoot: second, frequencyHz: b[4])
        case .machine:
            guard let (start, end) = b.zonePair(), end <= 9 else { return nil }
            return .machine(
                startZone: start, endZone: end, amplitudeA: b[3] & 0x07, amplitudeB: (b[3] >> 3) & 0x07,
                frequencyHz: b[4], periodTenthsOfSecond: b[5])
        case .simpleFeedback:
            return .simpleFeedback(position: b[1], strength: b[2])
        case .simpleWeapon:
            return .simpleWeapon(start: b[1], end: b[2], strength: b[3])
        case .simpleVibration:
            return .simpleVibration(frequency: b[1], amplitude: b[2], position: b[3])
        case .limitedFeedback:
            guard b[2] <= 10 else { return nil }
            return .limitedFeedback(position: b[1], strength: b[2])
        case .limitedWeapon:
            guard b[1] >= 0x10, b[2] >= b[1], Int(b[2]) <= Int(b[1]) + 100, b[3] <= 10 else { return nil }
            return .limitedWeapon(start: b[1], end: b[2], strength: b[3])
        }
    }
}

extension TriggerEffectBlock {
    func uint16(at index: Int) -> UInt16 { UInt16(self[index]) | UInt16(self[index + 1]) << 8 }

    func uint32(at index: Int) -> UInt32 {
        UInt32(uint16(at: index)) | UInt32(uint16(at: index + 2)) << 16
    }

    mutating func setUInt16(_ value: UInt16, at index: Int) {
        self[index] = UInt8(truncatingIfNeeded: value)
        self[index + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    mutating func setUInt32(_ value: UInt32, at index: Int) {
        setUInt16(UInt16(truncatingIfNeeded: value), at: index)
        setUInt16(UInt16(truncatingIfNeeded: value >> 16), at: index + 2)
    }

    /// p[1...2] as a start/end mask with exactly two bits set: (lowest, highest).
    func zonePair() -> (start: UInt8, end: UInt8)? {
        let mask = uint16(at: 1)
        guard mask.nonzeroBitCount == 2 else { return nil }
        return (UInt8(mask.trailingZeroBitCount), UInt8(15 - mask.leadingZeroBitCount))
    }
}

// MARK: Block

extension TriggerEffect {
    /// Total and table-driven: a block decodes to a named case only if that case encodes back to exactly these
    /// bytes (all parameter constraints met, unused bytes zero); anything else is `.raw`. So
    /// `TriggerEffect(block: b).block == b` for every `b`. Does not allocate.
    public init(block: TriggerEffectBlock) {
        if let mode = TriggerEffectMode(rawValue: block[0]), let candidate = mode.candidate(block),
            candidate.block == block
        {
            self = candidate
        } else {
            self = .raw(block)
        }
    }

    /// The 11 bytes this effect sends. Out-of-range parameters of directly built cases are masked to their bit
    /// fields (never trap).
    public var block: TriggerEffectBlock {
        var b = TriggerEffectBlock()
        func setZonePair(_ start: UInt8, _ end: UInt8) {
            b.setUInt16(UInt16(1) << UInt16(start) | UInt16(1) << UInt16(end), at: 1)
        }
        switch self {
        case .off:
            b[0] = TriggerEffectMode.off.rawValue
        case let .feedback(zones):
            b[0] = TriggerEffectMode.feedback.rawValue
            b.setUInt16(zones.activeMask, at: 1)
            b.setUInt32(zones.packedValues, at: 3)
        case let .weapon(start, end, strength):
            b[0] = TriggerEffectMode.weapon.rawValue
            setZonePair(start, end)
            b[3] = (strength &- 1) & 0x07
        case let .vibration(zones, frequency):
            b[0] = TriggerEffectMode.vibration.rawValue
            b.setUInt16(zones.activeMask, at: 1)
            b.setUInt32(zones.packedValues, at: 3)
            b[9] = frequency
        case let .bow(start, end, strength, snapForce):
            b[0] = TriggerEffectMode.bow.rawValue
            setZonePair(start, end)
            b[3] = (strength &- 1) & 0x07 | ((snapForce &- 1) & 0x07) << 3
        case let .galloping(start, end, firstFoot, secondFoot, frequency):
            b[0] = TriggerEffectMode.galloping.rawValue
            setZonePair(start, end)
            b[3] = secondFoot & 0x07 | (firstFoot & 0x07) << 3
            b[4] = frequency
        case let .machine(start, end, amplitudeA, amplitudeB, frequency, period):
            b[0] = TriggerEffectMode.machine.rawValue
            setZonePair(start, end)
            b[3] = amplitudeA & 0x07 | (amplitudeB & 0x07) << 3
            b[4] = frequency
            b[5] = period
        case let .simpleFeedback(position, strength):
            b[0] = TriggerEffectMode.simpleFeedback.rawValue
            b[1] = position
            b[2] = strength
        case let .simpleWeapon(start, end, strength):
            b[0] = TriggerEffectMode.simpleWeapon.rawValue
            b[1] = start
            b[2] = end
            b[3] = strength
        case let .simpleVibration(frequency, amplitude, position):
            b[0] = TriggerEffectMode.simpleVibration.rawValue
            b[1] = frequency
            b[2] = amplitude
            b[3] = position
        case let .limitedFeedback(position, strength):
            b[0] = TriggerEffectMode.limitedFeedback.rawValue
            b[1] = position
            b[2] = strength
        case let .limitedWeapon(start, end, strength):
            b[0] = TriggerEffectMode.limitedWeapon.rawValue
            b[1] = start
            b[2] = end
            b[3] = strength
        case let .raw(raw):
            b = raw
        }
        return b
    }
}

extension TriggerEffect: Hashable {
    public static func == (lhs: TriggerEffect, rhs: TriggerEffect) -> Bool { lhs.block == rhs.block }
    public func hash(into hasher: inout Hasher) { hasher.combine(block) }
}

// MARK: Display

extension TriggerEffect {
    /// "off", "feedback", "weapon", "vibration", "bow", "galloping", "machine", "simpleFeedback", "simpleWeapon",
    /// "simpleVibration", "limitedFeedback", "limitedWeapon" or "raw".
    public var modeName: String {
        if case .raw = self { return "raw" }
        return TriggerEffectMode(rawValue: block[0])?.name ?? "raw"
    }

    /// The integer parameters in a fixed order, for display and JSON. Zone strengths of `.feedback` and `.vibration`
    /// are not included: read them from `zoneStrengths`. `.raw` gives its mode byte; its bytes are `block.hex`.
    public var parameters: [(name: String, value: Int)] {
        switch self {
        case .off, .feedback:
            return []
        case let .weapon(start, end, strength):
            return [("startZone", Int(start)), ("endZone", Int(end)), ("strength", Int(strength))]
        case let .vibration(_, frequency):
            return [("frequencyHz", Int(frequency))]
        case let .bow(start, end, strength, snapForce):
            return [
                ("startZone", Int(start)), ("endZone", Int(end)), ("strength", Int(strength)),
                ("snapForce", Int(snapForce)),
            ]
        case let .galloping(start, end, firstFoot, secondFoot, frequency):
            return [
                ("startZone", Int(start)), ("endZone", Int(end)), ("firstFoot", Int(firstFoot)),
                ("secondFoot", Int(secondFoot)), ("frequencyHz", Int(frequency)),
            ]
        case let .machine(start, end, amplitudeA, amplitudeB, frequency, period):
            return [
                ("startZone", Int(start)), ("endZone", Int(end)), ("amplitudeA", Int(amplitudeA)),
                ("amplitudeB", Int(amplitudeB)), ("frequencyHz", Int(frequency)),
                ("periodTenthsOfSecond", Int(period)),
            ]
        case let .simpleFeedback(position, strength), let .limitedFeedback(position, strength):
            return [("position", Int(position)), ("strength", Int(strength))]
        case let .simpleWeapon(start, end, strength), let .limitedWeapon(start, end, strength):
            return [("start", Int(start)), ("end", Int(end)), ("strength", Int(strength))]
        case let .simpleVibration(frequency, amplitude, position):
            return [("frequency", Int(frequency)), ("amplitude", Int(amplitude)), ("position", Int(position))]
        case let .raw(block):
            return [("mode", Int(block[0]))]
        }
    }

    /// The per-zone strengths of `.feedback` and amplitudes of `.vibration`; nil for other cases.
    public var zoneStrengths: TriggerZoneStrengths? {
        switch self {
        case let .feedback(zones), let .vibration(zones, _): zones
        default: nil
        }
    }
}

extension TriggerEffect: CustomStringConvertible {
    /// E.g. `weapon(startZone: 2, endZone: 5, strength: 8)`, `feedback(zones: 0,0,8,8,8,8,8,8,8,8)`,
    /// `raw(27000000000000000000ff)`.
    public var description: String {
        var fields: [String] = []
        if let zones = zoneStrengths {
            fields.append("zones: " + zones.array.map { String($0) }.joined(separator: ","))
        }
        if case let .raw(block) = self {
            fields.append(block.hex)
        } else {
            fields += parameters.map { "\($0.name): \($0.value)" }
        }
        return fields.isEmpty ? modeName : "\(modeName)(\(fields.joined(separator: ", ")))"
    }
}
