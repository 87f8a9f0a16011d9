/// The kinds of virtual pad padbridge can present to games.
public enum VirtualPadKind: String, Sendable, Hashable, CaseIterable {
    /// A uinput pad with xpad's Microsoft X-Box 360 pad identity and capabilities.
    case xbox360
    /// A uhid DualSense bound by the kernel's hid-playstation driver (gamepad, motion, touchpad nodes, hidraw).
    case dualSense = "dualsense"

    /// The `phys` of a virtual pad a bridge shows (`remap`, `serve`): how `connect --all` and discovery tell
    /// padbridge's own outputs from pads to forward (forwarding them would forward the forwarded pad again).
    public var bridgeOutputPhysicalPath: String { "\(Self.bridgeOutputPhysicalPathPrefix)\(rawValue)" }
    public static let bridgeOutputPhysicalPathPrefix = "padbridge-output/"

    /// What this kind can show to games: the outputs a remap may target.
    public var capabilities: VirtualPadCapabilities {
        switch self {
        case .xbox360: .xbox360
        case .dualSense: .dualSense
        }
    }

    /// The virtual pad padbridge builds for a physical pad of `kind` by default: the same kind where it can (a
    /// DualSense for a DualSense or DualSense Edge), else an Xbox 360 pad, which every game knows.
    public static func defaultKind(for kind: ControllerKind) -> VirtualPadKind {
        switch kind {
        case .dualSense, .dualSenseEdge: .dualSense
        default: .xbox360
        }
    }
}

/// The identity a virtual pad gets when it stands for a physical one: derived from the physical pad's ID, so the
/// same physical pad gets the same virtual pad (a virtual DualSense's MAC) on every run and every reconnection.
public enum VirtualPadIdentitySeed {
    /// `padbridge remap`'s seed for the pad `fingerprint`.
    public static func local(forPad fingerprint: Fingerprint) -> String { "padbridge-remap-\(fingerprint)" }
}
