/// Per-zone strength 0...8 for the 10 trigger zones (0 = zone inactive, doc §3), stored inline.
///
/// Wire form (modes 0x21 and 0x26): a 16-bit active-zone mask (bit i = zone i) and a 32-bit value holding
/// (strength − 1) in bits 3i...3i+2 for each active zone.
public struct TriggerZoneStrengths: Sendable, Hashable {
    public static let zoneCount = 10
    public static let strengths: ClosedRange<UInt8> = 0...8

    /// Zone i in bits 4i...4i+3.
    private var storage: UInt64 = 0

    /// All zones inactive.
    public init() {}

    /// Zone i gets `strengths[i]` (clamped to 8); missing zones are 0, extra values are ignored.
    public init(_ strengths: [UInt8]) {
        for (zone, strength) in strengths.prefix(Self.zoneCount).enumerated() { self[zone] = strength }
    }

    /// Zones `startZone...9` at `strength` (clamped to 8); other zones 0.
    public init(from startZone: Int, strength: UInt8) {
        for zone in max(0, startZone)..<Self.zoneCount { self[zone] = strength }
    }

    /// Strength of `zone` (0...9). Other zones read as 0 and ignore writes; writes clamp to 8.
    public subscript(zone: Int) -> UInt8 {
        get {
            guard (0..<Self.zoneCount).contains(zone) else { return 0 }
            return UInt8(truncatingIfNeeded: storage >> UInt64(4 * zone)) & 0x0F
        }
        set {
            guard (0..<Self.zoneCount).contains(zone) else { return }
            let shift = UInt64(4 * zone)
            storage = storage & ~(0x0F << shift) | UInt64(min(newValue, 8)) << shift
        }
    }

    public var isEmpty: Bool { storage == 0 }

    /// The ten strengths in zone order.
    public var array: [UInt8] { (0..<Self.zoneCount).map { self[$0] } }

    /// Bit i set when zone i has a strength above 0.
    public var activeMask: UInt16 {
        var mask: UInt16 = 0
        for zone in 0..<Self.zoneCount where self[zone] > 0 { mask |= 1 << UInt16(zone) }
        return mask
    }

    /// (strength − 1) in 3 bits per active zone.
    public var packedValues: UInt32 {
        var packed: UInt32 = 0
        for zone in 0..<Self.zoneCount where self[zone] > 0 {
            packed |= UInt32(self[zone] - 1) << UInt32(3 * zone)
        }
        return packed
    }

    /// Inverse of (`activeMask`, `packedValues`); nil when the pair is not canonical (mask bits above zone 9,
    /// value bits for inactive zones or above bit 29), so that decoding never accepts bytes it would not re-encode.
    public init?(activeMask mask: UInt16, packedValues packed: UInt32) {
        guard mask >> UInt16(Self.zoneCount) == 0 else { return nil }
        for zone in 0..<Self.zoneCount {
            let value = UInt8(truncatingIfNeeded: packed >> UInt32(3 * zone)) & 0x07
            if mask & (1 << UInt16(zone)) != 0 {
                self[zone] = value + 1
            } else if value != 0 {
                return nil
            }
        }
        guard packed >> 30 == 0 else { return nil }
    }
}
