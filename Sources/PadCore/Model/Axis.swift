/// An analog control, named as in SDL's GameController vocabulary.
///
/// Sticks are `Int16` over -32768...32767 with up negative (as SDL and evdev);
/// triggers are 0...32767.
public enum Axis: String, CaseIterable, Sendable, Hashable, Codable {
    case leftx, lefty, rightx, righty
    case lefttrigger, righttrigger

    public var isTrigger: Bool { self == .lefttrigger || self == .righttrigger }

    /// The values this axis may take.
    public var range: ClosedRange<Int16> { isTrigger ? 0...Int16.max : Int16.min...Int16.max }
}
