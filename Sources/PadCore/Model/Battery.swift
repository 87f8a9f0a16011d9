/// Battery charge as the pad reports it.
public struct BatteryState: Sendable, Hashable {
    /// 0...100.
    public var percent: UInt8
    public var charging: Bool

    @inlinable public init(percent: UInt8, charging: Bool) {
        self.percent = min(percent, 100)
        self.charging = charging
    }

    /// What a pad reports before it has said anything about its battery.
    public static let unknown = BatteryState(percent: 0, charging: false)
}
