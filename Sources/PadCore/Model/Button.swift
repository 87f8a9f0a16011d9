/// A digital control, named as in SDL's GameController vocabulary.
public enum Button: String, CaseIterable, Sendable, Hashable, Codable {
    case a, b, x, y
    case back, guide, start
    case leftstick, rightstick
    case leftshoulder, rightshoulder
    case dpup, dpdown, dpleft, dpright
    case misc1
    case paddle1, paddle2, paddle3, paddle4
    case touchpad

    /// Bit position inside `ButtonSet`; stable, never reorder.
    @inlinable var bit: UInt32 {
        switch self {
        case .a: 1 << 0
        case .b: 1 << 1
        case .x: 1 << 2
        case .y: 1 << 3
        case .back: 1 << 4
        case .guide: 1 << 5
        case .start: 1 << 6
        case .leftstick: 1 << 7
        case .rightstick: 1 << 8
        case .leftshoulder: 1 << 9
        case .rightshoulder: 1 << 10
        case .dpup: 1 << 11
        case .dpdown: 1 << 12
        case .dpleft: 1 << 13
        case .dpright: 1 << 14
        case .misc1: 1 << 15
        case .paddle1: 1 << 16
        case .paddle2: 1 << 17
        case .paddle3: 1 << 18
        case .paddle4: 1 << 19
        case .touchpad: 1 << 20
        }
    }
}

/// The set of pressed buttons, stored inline (no heap allocation).
public struct ButtonSet: Sendable, Hashable {
    public var rawValue: UInt32

    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    @inlinable public init() { rawValue = 0 }
    public init(_ buttons: some Sequence<Button>) {
        rawValue = 0
        for button in buttons { insert(button) }
    }

    @inlinable public func contains(_ button: Button) -> Bool { rawValue & button.bit != 0 }
    @inlinable public mutating func insert(_ button: Button) { rawValue |= button.bit }
    @inlinable public mutating func remove(_ button: Button) { rawValue &= ~button.bit }
    @inlinable public mutating func set(_ button: Button, pressed: Bool) {
        if pressed { insert(button) } else { remove(button) }
    }
    @inlinable public var isEmpty: Bool { rawValue == 0 }

    /// The pressed buttons in `Button.allCases` order.
    public var pressed: [Button] { Button.allCases.filter(contains) }
}
