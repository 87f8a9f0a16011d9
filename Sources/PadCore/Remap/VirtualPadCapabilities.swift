/// What a virtual pad type can show to games: the outputs a remap may target.
public struct VirtualPadCapabilities: Sendable, Hashable {
    /// The pad type's name in messages: "xbox360", "dualsense".
    public var name: String
    public var buttons: ButtonSet
    /// The axes it has, in `Axis.allCases` order.
    public var axes: [Axis]
    /// Passes touchpad contacts on.
    public var touchpad: Bool
    /// Passes motion samples on.
    public var motion: Bool

    public init(name: String, buttons: ButtonSet, axes: [Axis], touchpad: Bool, motion: Bool) {
        self.name = name
        self.buttons = buttons
        self.axes = Axis.allCases.filter(axes.contains)
        self.touchpad = touchpad
        self.motion = motion
    }

    /// xpad's wired Xbox 360 pad: face buttons, back/guide/start, stick clicks, shoulders, the d-pad (as a hat),
    /// both sticks and both triggers. No paddles, misc1, touchpad or motion.
    public static let xbox360 = VirtualPadCapabilities(
        name: "xbox360",
        buttons: ButtonSet([
            .a, .b, .x, .y, .back, .guide, .start, .leftstick, .rightstick, .leftshoulder, .rightshoulder,
            .dpup, .dpdown, .dpleft, .dpright,
        ]),
        axes: Axis.allCases, touchpad: false, motion: false)

    /// A DualSense as hid-playstation presents it: the Xbox 360 set plus the touchpad click and the mute button
    /// (`misc1`), touchpad contacts and motion. No paddles (those are the DualSense Edge's).
    public static let dualSense = VirtualPadCapabilities(
        name: "dualsense",
        buttons: ButtonSet(xbox360.buttons.pressed + [.touchpad, .misc1]),
        axes: Axis.allCases, touchpad: true, motion: true)

    /// A DualSense Edge: the DualSense's set plus the four back buttons (two paddles, two Fn buttons).
    public static let dualSenseEdge = VirtualPadCapabilities(
        name: "dualsense-edge",
        buttons: ButtonSet(dualSense.buttons.pressed + [.paddle1, .paddle2, .paddle3, .paddle4]),
        axes: Axis.allCases, touchpad: true, motion: true)

    /// A DualShock 4: the Xbox 360 set plus the touchpad click, touchpad contacts and motion. No mute button.
    public static let dualShock4 = VirtualPadCapabilities(
        name: "dualshock4",
        buttons: ButtonSet(xbox360.buttons.pressed + [.touchpad]),
        axes: Axis.allCases, touchpad: true, motion: true)

    /// An Xbox Series pad: the Xbox 360 set plus Share (`misc1`). No touchpad or motion.
    public static let xboxOne = VirtualPadCapabilities(
        name: "xbox-one",
        buttons: ButtonSet(xbox360.buttons.pressed + [.misc1]),
        axes: Axis.allCases, touchpad: false, motion: false)

    /// A Switch Pro Controller: the Xbox 360 set plus Capture (`misc1`), and motion. ZL and ZR are digital (pressed
    /// past half); no touchpad.
    public static let switchPro = VirtualPadCapabilities(
        name: "switch-pro",
        buttons: ButtonSet(xbox360.buttons.pressed + [.misc1]),
        axes: Axis.allCases, touchpad: false, motion: true)

    /// A Steam Deck: the Xbox 360 set plus the four back buttons (R4, L4, R5, L5 as `paddle1`-`paddle4`), the
    /// quick access button (`misc1`), the trackpad click (`touchpad`), both trackpads and motion.
    public static let steamDeck = VirtualPadCapabilities(
        name: "steam-deck",
        buttons: ButtonSet(xbox360.buttons.pressed + [.misc1, .touchpad, .paddle1, .paddle2, .paddle3, .paddle4]),
        axes: Axis.allCases, touchpad: true, motion: true)

    /// No virtual pad (`remap --as none`): a profile drives only the virtual keyboard and mouse.
    public static let nothing = VirtualPadCapabilities(name: "none", buttons: ButtonSet(), axes: [], touchpad: false, motion: false)

    /// Everything padbridge's model has: what a physical source is assumed to have when nothing better is known.
    public static let everything = VirtualPadCapabilities(
        name: "any", buttons: ButtonSet(Button.allCases), axes: Axis.allCases, touchpad: true, motion: true)

    /// What some virtual pad kind can show: every button, axis, touchpad and motion of any `VirtualPadKind`.
    public static let anyVirtualPad: VirtualPadCapabilities = {
        let kinds = VirtualPadKind.allCases.map(\.capabilities)
        return VirtualPadCapabilities(
            name: "any virtual pad", buttons: ButtonSet(kinds.flatMap(\.buttons.pressed)),
            axes: Axis.allCases.filter { axis in kinds.contains { $0.axes.contains(axis) } },
            touchpad: kinds.contains(where: \.touchpad), motion: kinds.contains(where: \.motion))
    }()

    /// Whether `control` can be shown: its button, or the axis it is (part of).
    public func has(_ control: RemapControl) -> Bool {
        switch control {
        case let .button(button): buttons.contains(button)
        case let .axis(axis), let .stickHalf(axis, _): axes.contains(axis)
        case .desktop: true  // the virtual keyboard and mouse sit beside any virtual pad
        }
    }

    /// The names of every control it can show, in `RemapControl.allCases` order.
    public var controlNames: [String] { RemapControl.allCases.filter(has).map(\.name) }
}
