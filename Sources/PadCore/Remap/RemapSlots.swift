/// One value per `OneSidedSlot` (lanes 0..<10 of 16), inline: no heap allocation per `apply`.
typealias SlotMagnitudes = SIMD16<Int32>

/// One flag per `OneSidedSlot` (bits 0..<10), inline: whether the slot is beyond its press threshold.
struct SlotLatches: Hashable, Sendable {
    var rawValue: UInt16 = 0

    subscript(index: Int) -> Bool {
        get { rawValue & (1 << UInt16(index)) != 0 }
        set {
            if newValue { rawValue |= 1 << UInt16(index) } else { rawValue &= ~(1 << UInt16(index)) }
        }
    }
}

/// A one-sided source or target: a stick half or a trigger, as an index 0..<10 and its full magnitude
/// (32768 for a negative stick half, so -32768 round-trips; 32767 otherwise).
struct OneSidedSlot: Hashable, Sendable {
    let axis: Axis
    let direction: StickDirection

    /// Triggers use `.positive`.
    init(axis: Axis, direction: StickDirection) {
        self.axis = axis
        self.direction = axis.isTrigger ? .positive : direction
    }

    static let count = 10
    static let all: [OneSidedSlot] = Axis.allCases.flatMap { axis in
        axis.isTrigger
            ? [OneSidedSlot(axis: axis, direction: .positive)]
            : StickDirection.allCases.map { OneSidedSlot(axis: axis, direction: $0) }
    }

    var index: Int {
        switch axis {
        case .leftx: direction == .negative ? 0 : 1
        case .lefty: direction == .negative ? 2 : 3
        case .rightx: direction == .negative ? 4 : 5
        case .righty: direction == .negative ? 6 : 7
        case .lefttrigger: 8
        case .righttrigger: 9
        }
    }

    var fullMagnitude: Int32 { direction == .negative ? 32768 : 32767 }

    var control: RemapControl { axis.isTrigger ? .axis(axis) : .stickHalf(axis, direction) }

    func magnitude(in snapshot: PadSnapshot) -> Int32 {
        let value = Int32(snapshot[axis])
        return direction == .negative ? max(0, -value) : max(0, value)
    }
}

/// A source the routing tables index: a button (0..<21) or a one-sided slot (21..<31).
enum SourceSlot: Hashable, Sendable {
    case digital(Button)
    case oneSided(OneSidedSlot)

    static let count = Button.allCases.count + OneSidedSlot.count

    /// nil for a whole stick axis (which routes as its two halves) and for desktop targets (never sources).
    init?(_ control: RemapControl) {
        switch control {
        case let .button(button): self = .digital(button)
        case let .axis(axis) where axis.isTrigger: self = .oneSided(OneSidedSlot(axis: axis, direction: .positive))
        case .axis, .desktop: return nil
        case let .stickHalf(axis, direction): self = .oneSided(OneSidedSlot(axis: axis, direction: direction))
        }
    }

    var index: Int {
        switch self {
        case let .digital(button): button.bit.trailingZeroBitCount
        case let .oneSided(slot): Button.allCases.count + slot.index
        }
    }
}

/// A target the routing tables drive: a pad button, a one-sided pad slot, a key or mouse button of the virtual
/// keyboard or mouse (by its evdev code), or a wheel direction. Trivial values (no reference counting as frames are
/// routed).
enum OutputSlot: Hashable, Sendable {
    case digital(Button)
    case oneSided(OneSidedSlot)
    case key(UInt16)
    case scroll(ScrollDirection)

    /// nil for a whole stick axis (routed half to half by `RoutingTable.apply`).
    init?(_ control: RemapControl) {
        switch control.desktopTarget {
        case let .key(key)?:
            self = .key(key.code)
            return
        case let .mouseButton(button)?:
            self = .key(button.code)
            return
        case let .scroll(direction)?:
            self = .scroll(direction)
            return
        case nil:
            break
        }
        switch SourceSlot(control) {
        case let .digital(button): self = .digital(button)
        case let .oneSided(slot): self = .oneSided(slot)
        case nil: return nil
        }
    }
}
