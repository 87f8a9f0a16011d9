/// One direction of a stick axis. Up is negative on the Y axes (as SDL and evdev).
public enum StickDirection: String, Sendable, Hashable, CaseIterable {
    case negative = "-"
    case positive = "+"
}

/// A control a remap reads from or writes to, named as profiles spell it.
///
/// Three kinds, and which may map to which:
/// - *digital*: a button (`a`, `paddle1`): 0 or 1;
/// - *one-sided analog*: a trigger (`lefttrigger`, 0...1) or one half of a stick axis (`leftx+`, `lefty-` is up), 0...1;
/// - *two-sided analog*: a whole stick axis (`leftx`), -1...1.
///
/// Digital and one-sided controls map onto each other freely (a button drives a trigger or stick half to full;
/// a trigger or stick half presses a button beyond a threshold); a whole stick axis maps only to a whole stick axis.
public enum RemapControl: Sendable, Hashable {
    case button(Button)
    /// A whole axis: a stick axis (two-sided) or a trigger (one-sided).
    case axis(Axis)
    /// One half of a stick axis (`axis` is never a trigger).
    case stickHalf(Axis, StickDirection)
    /// A key or button of the virtual keyboard or mouse, or a wheel direction: a target only, never a source.
    case desktop(DesktopTarget)

    public enum Kind: Sendable, Hashable {
        case digital, oneSided, twoSided
    }

    public var kind: Kind {
        switch self {
        case .button: .digital
        case let .axis(axis): axis.isTrigger ? .oneSided : .twoSided
        case .stickHalf: .oneSided
        case .desktop: .digital
        }
    }

    /// The profile's spelling: `a`, `leftx`, `leftx+`, `lefty-`, `lefttrigger`.
    public var name: String {
        switch self {
        case let .button(button): button.rawValue
        case let .axis(axis): axis.rawValue
        case let .stickHalf(axis, direction): axis.rawValue + direction.rawValue
        case let .desktop(target): target.name
        }
    }

    /// Reads a profile's spelling of a pad control; nil for anything else (`lefttrigger+` included: a trigger has one
    /// side; desktop targets too: see `DesktopTarget.init(name:keyCode:)`).
    public init?(name: String) {
        if let button = Button(rawValue: name) {
            self = .button(button)
        } else if let axis = Axis(rawValue: name) {
            self = .axis(axis)
        } else if let last = name.last, let direction = StickDirection(rawValue: String(last)),
            let axis = Axis(rawValue: String(name.dropLast())), !axis.isTrigger
        {
            self = .stickHalf(axis, direction)
        } else {
            return nil
        }
    }

    /// Every pad control in a fixed order: buttons, whole axes, then stick halves (`leftx-`, `leftx+`, ...). These are
    /// the sources a profile can map; desktop targets are not among them.
    public static let allCases: [RemapControl] =
        Button.allCases.map(RemapControl.button) + Axis.allCases.map(RemapControl.axis)
        + Axis.allCases.filter { !$0.isTrigger }.flatMap { axis in
            StickDirection.allCases.map { RemapControl.stickHalf(axis, $0) }
        }

    /// Every name `init(name:)` accepts, in `allCases` order: what error messages list as allowed.
    public static var allNames: [String] { allCases.map(\.name) }

    /// The desktop target it is, if it is one.
    public var desktopTarget: DesktopTarget? {
        if case let .desktop(target) = self { target } else { nil }
    }
}
