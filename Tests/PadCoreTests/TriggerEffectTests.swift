import PadTestSupport
import Testing
@testable import PadCore

@Suite struct TriggerEffectTests {
    static func block(_ hex: String) -> TriggerEffectBlock { TriggerEffectBlock(hex: hex)! }

    // MARK: Golden blocks

    @Test func sdlTestProgramBlocks() {
        // SDL's testgamecontroller: {0x05} off, {0x01, 0, 110} constant resistance, {0x06, 15, 63, 128} resistance + vibration.
        #expect(TriggerEffect(block: TriggerEffectBlock([0x05])).modeName == "off")
        guard case let .simpleFeedback(position, strength) = TriggerEffect(block: TriggerEffectBlock([0x01, 0, 110])) else {
            Issue.record("0x01"); return
        }
        #expect(position == 0 && strength == 110)
        guard case let .simpleVibration(frequency, amplitude, at) = TriggerEffect(block: TriggerEffectBlock([0x06, 15, 63, 128])) else {
            Issue.record("0x06"); return
        }
        #expect(frequency == 15 && amplitude == 63 && at == 128)
    }

    /// Blocks computed by hand from doc §3's packing rules.
    static let documented: [(String, String)] = [
        // Feedback(position 3, strength 8): mask zones 3...9 = 0x03F8; values 7 << 3i for i in 3...9 = 0x3FFFFE00.
        ("feedback:3:8", "21f80300feff3f00000000"),
        // Feedback(0, 1): mask 0x03FF, all values 0.
        ("feedback:0:1", "21ff030000000000000000"),
        // Weapon(2, 5, 8): mask (1 << 2) | (1 << 5) = 0x0024, p[3] = 7.
        ("weapon:2:5:8", "2524000700000000000000"),
        // Vibration(0, 8, 30): mask 0x03FF, values 0x3FFFFFFF, p[9] = 30.
        ("vibration:0:8:30", "26ff03ffffff3f00001e00"),
        // Vibration(9, 1, 255): mask 0x0200, value 0, p[9] = 0xff.
        ("vibration:9:1:255", "260002000000000000ff00"),
        ("off", "0500000000000000000000"),
        ("feedback:4:0", "0500000000000000000000"),
        ("raw:fc0102030405060708090a", "fc0102030405060708090a"),
        ("RAW:FC0102030405060708090A", "fc0102030405060708090a"),
        ("raw:2200060000000000000000", "2200060000000000000000"),
    ]

    @Test(arguments: documented)
    func commandLineToBlock(commandLine: String, hex: String) throws {
        let effect = try TriggerEffect(commandLine: commandLine)
        #expect(effect.block.hex == hex)
        #expect(TriggerEffect(block: Self.block(hex)) == effect)
    }

    @Test func namedCasesFromRawBlocks() {
        #expect(TriggerEffect(block: Self.block("21f80300feff3f00000000")).zoneStrengths?.array == [0, 0, 0, 8, 8, 8, 8, 8, 8, 8])
        guard case let .bow(start, end, strength, snap) = TriggerEffect(block: Self.block("2201010f00000000000000")) else {
            Issue.record("bow"); return
        }
        // mask 0x0101 = zones 0 and 8; p[3] = 0x0f → strength (7 + 1), snap ((1) + 1).
        #expect([start, end, strength, snap] == [0, 8, 8, 2])
        let weapon = TriggerEffect(block: Self.block("2524000700000000000000"))
        #expect(weapon.modeName == "weapon")
        #expect(weapon.parameters.map(\.name) == ["startZone", "endZone", "strength"])
        #expect(weapon.parameters.map(\.value) == [2, 5, 8])
    }

    // MARK: Non-canonical blocks stay raw

    static let rawBlocks: [String] = [
        "0501000000000000000000",  // off with a parameter
        "2100040000000000000000",  // zone 10 in the mask
        "2101000001000000000000",  // value bits for zone 2, which the mask leaves inactive
        "2101000000004000000000",  // value bit 30
        "2101000000000001000000",  // p[7] set
        "2506000700000000000000",  // weapon start 1 (< 2)
        "2500010700000000000000",  // weapon: one zone bit only
        "2524000800000000000000",  // weapon strength byte 8 (> 7)
        "2524000700000000000001",  // weapon with p[10] set
        "2201014000000000000000",  // bow: bits above 5 in p[3]
        "2203000101000000000000",  // bow: p[4] set
        "2303003800000000000000",  // galloping first foot 7 (> 6)
        "2303000900000000000000",  // galloping first foot 1 == second foot 1
        "2701030000000000000000",  // machine mask with three bits
        "11000b0000000000000000",  // limitedFeedback strength 11
        "120f200500000000000000",  // limitedWeapon start 0x0f (< 0x10)
        "12107a0500000000000000",  // limitedWeapon end 0x7a > start + 100
        "12100f0500000000000000",  // limitedWeapon end < start
        "0101020300000000000000",  // simpleFeedback with p[3]
        "0000000000000000000000",
        "fc00000000000000000000",
    ]

    @Test(arguments: rawBlocks)
    func nonCanonicalBlocksDecodeAsRaw(hex: String) {
        let effect = TriggerEffect(block: Self.block(hex))
        #expect(effect.modeName == "raw", "\(hex) → \(effect)")
        #expect(effect.block.hex == hex)
    }

    @Test(arguments: ["2524000700000000000000", "2201013f00000000000000", "2201010100000000000000",
                      "2303000a00000000000000", "11000a0000000000000000", "1210740500000000000000"])
    func canonicalNeighboursAreNamed(hex: String) {
        // Controls for the table above: one step back inside every constraint.
        #expect(TriggerEffect(block: Self.block(hex)).modeName != "raw", "\(hex)")
    }

    // MARK: Laws

    @Test func tenThousandRandomBlocksRoundTrip() {
        var rng = SplitMix64(seed: 0xB10C)
        let modes: [UInt8] = [0x05, 0x21, 0x25, 0x26, 0x22, 0x23, 0x27, 0x01, 0x02, 0x06, 0x11, 0x12]
        var named = [String: Int]()
        for _ in 0..<10_000 {
            var bytes = rng.bytes(11)
            if rng.chance(3, in: 4) {
                // Mostly-zero parameters, and in-range values for the constrained fields, so named cases are hit.
                bytes[0] = modes.randomElement(using: &rng)!
                for i in 1..<11 where rng.chance(5, in: 6) { bytes[i] = 0 }
                switch bytes[0] {
                case 0x25, 0x22, 0x23, 0x27:
                    let start = Int.random(in: 0...8, using: &rng), end = Int.random(in: (start + 1)...9, using: &rng)
                    let mask = UInt16(1) << UInt16(start) | UInt16(1) << UInt16(end)
                    bytes[1] = UInt8(mask & 0xFF); bytes[2] = UInt8(mask >> 8)
                    if bytes[0] == 0x23 {
                        let first = UInt8.random(in: 0...6, using: &rng)
                        bytes[3] = first << 3 | UInt8.random(in: (first + 1)...7, using: &rng)
                    } else {
                        bytes[3] &= bytes[0] == 0x25 ? 0x07 : 0x3F
                    }
                case 0x12:
                    bytes[1] = UInt8.random(in: 0x10...0xFF, using: &rng)
                    bytes[2] = bytes[1] &+ UInt8.random(in: 0...min(100, 0xFF - bytes[1]), using: &rng)
                    bytes[3] = UInt8.random(in: 0...10, using: &rng)
                default: break
                }
            }
            let block = TriggerEffectBlock(bytes)
            let effect = TriggerEffect(block: block)
            #expect(effect.block == block, "\(block.hex)")
            #expect(TriggerEffect(block: effect.block) == effect)
            named[effect.modeName, default: 0] += 1
        }
        for name in ["off", "feedback", "weapon", "vibration", "bow", "galloping", "machine", "simpleFeedback",
                     "simpleWeapon", "simpleVibration", "limitedFeedback", "limitedWeapon", "raw"] {
            #expect(named[name, default: 0] > 10, "\(name) reached \(named[name, default: 0]) times")
        }
    }

    static let namedCases: [TriggerEffect] = [
        .off,
        .feedback(TriggerZoneStrengths([1, 2, 3, 4, 5, 6, 7, 8, 0, 8])),
        .feedback(TriggerZoneStrengths()),
        .weapon(startZone: UInt8(2), endZone: 8, strength: 1),
        .weapon(startZone: UInt8(7), endZone: 8, strength: 8),
        .vibration(TriggerZoneStrengths([0, 0, 0, 0, 0, 0, 0, 0, 0, 8]), frequencyHz: 255),
        .bow(startZone: 0, endZone: 8, strength: 8, snapForce: 1),
        .bow(startZone: 7, endZone: 8, strength: 1, snapForce: 8),
        .galloping(startZone: 0, endZone: 9, firstFoot: 6, secondFoot: 7, frequencyHz: 1),
        .galloping(startZone: 8, endZone: 9, firstFoot: 0, secondFoot: 1, frequencyHz: 0),
        .machine(startZone: 1, endZone: 9, amplitudeA: 7, amplitudeB: 0, frequencyHz: 5, periodTenthsOfSecond: 10),
        .simpleFeedback(position: 255, strength: 0),
        .simpleWeapon(start: 1, end: 2, strength: 3),
        .simpleVibration(frequency: 0, amplitude: 0, position: 0),
        .limitedFeedback(position: 200, strength: 10),
        .limitedWeapon(start: 0x10, end: 0x74, strength: 0),
        .limitedWeapon(start: 0xF0, end: 0xFF, strength: 10),
    ]

    @Test(arguments: namedCases)
    func namedCaseSurvivesItsBlock(effect: TriggerEffect) {
        let decoded = TriggerEffect(block: effect.block)
        #expect(decoded.modeName == effect.modeName && decoded.modeName != "raw")
        #expect(decoded.parameters.map(\.value) == effect.parameters.map(\.value))
        #expect(decoded.zoneStrengths == effect.zoneStrengths)
        #expect(decoded.block == effect.block)
    }

    @Test func equalityIsByWireBytes() {
        #expect(TriggerEffect.raw(TriggerEffectBlock([0x05])) == .off)
        #expect(TriggerEffect.raw(TriggerEffectBlock([0x05, 1])) != .off)
        #expect(Set([TriggerEffect.off, .raw(TriggerEffectBlock([0x05]))]).count == 1)
    }

    @Test func outOfRangeDirectCasesNeverTrap() {
        let wild = TriggerEffect.weapon(startZone: UInt8(200), endZone: 0, strength: 0)
        #expect(wild.block[0] == 0x25)
        #expect(TriggerEffect(block: wild.block).block == wild.block)
        _ = TriggerEffect.bow(startZone: 16, endZone: 255, strength: 0, snapForce: 0).block
        _ = TriggerEffect.galloping(startZone: 255, endZone: 255, firstFoot: 255, secondFoot: 255, frequencyHz: 255).block
    }

    // MARK: Constructors and errors

    @Test(arguments: [
        ("feedback:10:1", ["startZone", "10", "0...9"]),
        ("feedback:0:9", ["strength", "9", "0...8"]),
        ("feedback:-1:1", ["startZone", "-1"]),
        ("weapon:1:5:8", ["startZone", "1", "2...7"]),
        ("weapon:7:7:1", ["endZone", "7", "8...8"]),
        ("weapon:2:9:1", ["endZone", "9", "3...8"]),
        ("weapon:2:5:9", ["strength", "9", "0...8"]),
        ("vibration:0:9:30", ["amplitude", "9", "0...8"]),
        ("vibration:0:8:256", ["frequencyHz", "256", "0...255"]),
        ("feedback:3", ["feedback", "2 parameters", "got 1"]),
        ("off:1", ["off", "0 parameters"]),
        ("feedback:x:1", ["startZone", "\"x\"", "not an integer"]),
        ("bounce", ["unknown", "bounce", "feedback:START:STRENGTH"]),
        ("", ["unknown"]),
        ("raw:0500", ["raw", "22 hex digits", "0500"]),
        ("raw:zz00000000000000000000", ["raw", "22 hex digits"]),
    ])
    func commandLineErrors(commandLine: String, mentions: [String]) {
        do {
            let effect = try TriggerEffect(commandLine: commandLine)
            Issue.record("\(commandLine) parsed as \(effect)")
        } catch {
            for word in mentions { #expect(error.description.contains(word), "\(error.description)") }
        }
    }

    @Test func zeroStrengthIsOff() throws {
        #expect(try TriggerEffect.feedback(startZone: 5, strength: 0) == .off)
        #expect(try TriggerEffect.vibration(startZone: 5, amplitude: 0, frequencyHz: 40) == .off)
        #expect(try TriggerEffect.vibration(startZone: 5, amplitude: 3, frequencyHz: 0) == .off)
        #expect(try TriggerEffect.weapon(startZone: 2, endZone: 3, strength: 0) == .off)
        #expect(try TriggerEffect.feedback(startZone: 9, strength: 1) != .off)
    }

    // MARK: Block and zones

    @Test func blockBasics() {
        let b = TriggerEffectBlock(Array(1...20))
        #expect(b.bytes == Array(1...11))
        #expect(TriggerEffectBlock([7]).bytes == [7] + [UInt8](repeating: 0, count: 10))
        #expect(b[-1] == 0 && b[11] == 0)
        #expect(b.hex == "0102030405060708090a0b")
        #expect(TriggerEffectBlock(hex: "0102030405060708090A0B") == b)
        #expect(TriggerEffectBlock(hex: "0102030405060708090a0") == nil)
        #expect(TriggerEffectBlock(hex: "0102030405060708090a0g") == nil)
        #expect(TriggerEffectBlock(hex: "") == nil)
        var buffer = [UInt8](repeating: 0xEE, count: 13)
        buffer.withUnsafeMutableBytes { b.write(to: $0) }
        #expect(buffer == Array(1...11) + [0xEE, 0xEE])
        let short = [UInt8](repeating: 9, count: 4).withUnsafeBytes { TriggerEffectBlock(unsafe: $0) }
        #expect(short.bytes == [9, 9, 9, 9, 0, 0, 0, 0, 0, 0, 0])
        var edited = TriggerEffectBlock()
        edited[10] = 0xAB; edited[3] = 0xCD; edited[12] = 1
        #expect(edited.hex == "000000cd0000000000" + "00ab")
    }

    @Test func zoneStrengths() {
        var zones = TriggerZoneStrengths([9, 0, 3, 1, 1, 1, 1, 1, 1, 1, 5, 5])
        #expect(zones.array == [8, 0, 3, 1, 1, 1, 1, 1, 1, 1])
        #expect(zones[10] == 0 && zones[-1] == 0)
        zones[12] = 3
        zones[1] = 200
        #expect(zones[1] == 8)
        #expect(zones.activeMask == 0x03FF)
        #expect(TriggerZoneStrengths().isEmpty)
        #expect(TriggerZoneStrengths(from: 7, strength: 2).array == [0, 0, 0, 0, 0, 0, 0, 2, 2, 2])
    }
}
