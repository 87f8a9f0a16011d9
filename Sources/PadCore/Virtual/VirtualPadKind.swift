/// The kinds of virtual pad padbridge can present to games.
public enum VirtualPadKind: String, Sendable, Hashable, CaseIterable {
    /// A uinput pad with xpad's Microsoft X-Box 360 pad identity and capabilities.
    case xbox360
    /// A uhid DualSense bound by the kernel's hid-playstation driver (gamepad, motion, touchpad nodes, hidraw).
    case dualSense = "dualsense"
    /// A uhid DualSense Edge (054c:0df2): the DualSense plus its four back buttons, which hidraw readers (SDL,
    /// Steam) see.
    case dualSenseEdge = "dualsense-edge"
    /// A uhid DualShock 4 v2 (054c:09cc) on Bluetooth, bound by hid-sony (Linux 6.1) or hid-playstation (6.2 and
    /// later): gamepad, motion and touchpad nodes, lightbar, hidraw.
    case dualShock4 = "dualshock4"
    /// A uhid Xbox Series pad on Bluetooth (045e:0b13) bound by hid-microsoft: its Share button (`misc1`) is in the
    /// HID reports SDL and Steam read.
    case xboxOne = "xbox-one"
    /// A uhid Nintendo Switch Pro Controller on Bluetooth (057e:2009) bound by hid-nintendo: gamepad and IMU nodes,
    /// player lights, and a hidraw node SDL's Switch driver talks to (`EmulatedSwitchPro`).
    case switchPro = "switch-pro"
    /// A uhid Steam Deck's controls (28de:1205) on Bluetooth, read at its hidraw node by SDL's Steam Deck driver and
    /// Steam (`EmulatedSteamDeck`): no kernel driver makes a gamepad of it.
    case steamDeck = "steam-deck"

    /// The pad's name in sentences: "DualSense", "Xbox 360 pad".
    public var displayName: String {
        switch self {
        case .xbox360: "Xbox 360 pad"
        case .dualSense: "DualSense"
        case .dualSenseEdge: "DualSense Edge"
        case .dualShock4: "DualShock 4"
        case .xboxOne: "Xbox Series pad"
        case .switchPro: "Switch Pro Controller"
        case .steamDeck: "Steam Deck"
        }
    }

    /// Whether the pad is made with uhid and bound by a HID driver (it has a MAC derived from a seed, and a hidraw
    /// node); else it is a uinput pad.
    public var isHIDDevice: Bool { self != .xbox360 }

    /// The kernel modules that bind a uhid pad of this kind, as `modprobe` takes them (a DualShock 4: hid-sony up
    /// to Linux 6.1, hid-playstation from 6.2); none for a uinput pad.
    public var bindingDrivers: [String] {
        switch self {
        case .xbox360: []
        case .dualSense, .dualSenseEdge: ["hid-playstation"]
        case .dualShock4: ["hid-sony", "hid-playstation"]
        case .xboxOne: ["hid-microsoft"]
        case .switchPro: ["hid-nintendo"]
        case .steamDeck: ["hid-generic"]
        }
    }

    /// What to say when no driver probed a pad of this kind: "is hid-playstation loaded? Run `sudo modprobe
    /// hid-playstation`"; empty for a uinput pad.
    public var missingDriverAdvice: String {
        let modules = bindingDrivers
        guard let first = modules.first else { return "" }
        if modules.count == 1 { return "is \(first) loaded? Run `sudo modprobe \(first)`" }
        return "is \(modules.joined(separator: " or ")) loaded? Run `sudo modprobe -a \(modules.joined(separator: " "))`"
    }

    /// Whether the pad may claim either bus (`--bus`): PlayStation pads; an Xbox Series pad is a Bluetooth one.
    public var choosesItsBus: Bool { self == .dualSense || self == .dualSenseEdge || self == .dualShock4 }

    /// The `phys` of a virtual pad a bridge shows (`remap`, `serve`): how `connect --all` and discovery tell
    /// padbridge's own outputs from pads to forward (forwarding them would forward the forwarded pad again).
    public var bridgeOutputPhysicalPath: String { "\(Self.bridgeOutputPhysicalPathPrefix)\(rawValue)" }
    public static let bridgeOutputPhysicalPathPrefix = "padbridge-output/"

    /// What this kind can show to games: the outputs a remap may target.
    public var capabilities: VirtualPadCapabilities {
        switch self {
        case .xbox360: .xbox360
        case .dualSense: .dualSense
        case .dualSenseEdge: .dualSenseEdge
        case .dualShock4: .dualShock4
        case .xboxOne: .xboxOne
        case .switchPro: .switchPro
        case .steamDeck: .steamDeck
        }
    }

    /// The virtual pad padbridge builds for a physical pad of `kind` by default (`remap` without `--as`, a host for a
    /// forwarded pad): the same kind where padbridge can build it, so a game sees the pad the player holds (its
    /// paddles, Share button, touchpad, motion); else an Xbox 360 pad, which every game knows.
    public static func defaultKind(for kind: ControllerKind) -> VirtualPadKind {
        switch kind {
        case .dualSense: .dualSense
        case .dualSenseEdge: .dualSenseEdge
        case .dualShock4: .dualShock4
        case .xboxOne: .xboxOne
        case .switchPro: .switchPro
        case .steamDeck: .steamDeck
        case .xbox360, .generic: .xbox360
        }
    }
}

/// The identity a virtual pad gets when it stands for a physical one: derived from the physical pad's ID, so the
/// same physical pad gets the same virtual pad (a virtual DualSense's MAC) on every run and every reconnection.
public enum VirtualPadIdentitySeed {
    /// `padbridge remap`'s seed for the pad `fingerprint`.
    public static func local(forPad fingerprint: Fingerprint) -> String { "padbridge-remap-\(fingerprint)" }
}

/// What a remap shows games: a virtual pad of a kind, or none (the profile's virtual keyboard and mouse only). How
/// `--as` and a profile's `as` are spelled: a kind's name or "none".
public enum VirtualPadChoice: Sendable, Hashable {
    case pad(VirtualPadKind)
    case none

    public init?(name: String) {
        if name == "none" {
            self = .none
        } else if let kind = VirtualPadKind(rawValue: name) {
            self = .pad(kind)
        } else {
            return nil
        }
    }

    /// Every spelling, kinds first.
    public static let names: [String] = VirtualPadKind.allCases.map(\.rawValue) + ["none"]

    public var name: String {
        switch self {
        case let .pad(kind): kind.rawValue
        case .none: "none"
        }
    }

    /// The pad's kind; nil for none.
    public var kind: VirtualPadKind? {
        switch self {
        case let .pad(kind): kind
        case .none: nil
        }
    }

    /// What the choice can show: its kind's capabilities, or nothing but the keyboard and mouse.
    public var capabilities: VirtualPadCapabilities { kind?.capabilities ?? .nothing }
}
