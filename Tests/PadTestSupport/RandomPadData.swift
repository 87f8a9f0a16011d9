public import PadCore

/// A tiny seeded generator so random tests are deterministic and a failure replays from its seed
/// (SplitMix64, Steele, Lea and Flood 2014).
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    public mutating func byte() -> UInt8 { UInt8.random(in: .min ... .max, using: &self) }
    public mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
    public mutating func chance(_ numerator: Int, in denominator: Int) -> Bool {
        Int.random(in: 0..<denominator, using: &self) < numerator
    }
}


extension PadSnapshot {
    /// A random snapshot; `changeRate` is the chance each control differs from `base`.
    public static func random(
        using generator: inout SplitMix64, from base: PadSnapshot = .neutral, changeRate: Double = 1
    ) -> PadSnapshot {
        var snapshot = base
        func changes() -> Bool { Double.random(in: 0..<1, using: &generator) < changeRate }
        for button in Button.allCases where changes() { snapshot[button] = Bool.random(using: &generator) }
        for axis in Axis.allCases where changes() {
            snapshot[axis] = Int16.random(in: axis.range, using: &generator)
        }
        for contact in 0..<TouchContacts.count where changes() {
            snapshot.touches[contact] = TouchContact(
                trackingID: UInt8.random(in: 0...127, using: &generator), active: Bool.random(using: &generator),
                x: Double.random(in: 0...1, using: &generator), y: Double.random(in: 0...1, using: &generator))
        }
        if changes() {
            func vector() -> Vector3 {
                Vector3(
                    x: Double.random(in: -40...40, using: &generator), y: Double.random(in: -40...40, using: &generator),
                    z: Double.random(in: -40...40, using: &generator))
            }
            snapshot.motion = MotionSample(
                gyroRadiansPerSecond: vector(), accelMetersPerSecondSquared: vector(),
                timestampMicroseconds: UInt64.random(in: 0...UInt64(UInt32.max), using: &generator))
        }
        if changes() {
            snapshot.battery = BatteryState(
                percent: UInt8.random(in: 0...100, using: &generator), charging: Bool.random(using: &generator))
        }
        return snapshot
    }
}
