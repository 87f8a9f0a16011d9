public import Logging
public import PadCore
public import PadLinux

/// A virtual pad standing for a physical one: shows the snapshots it is given, goes neutral when its source is
/// away (no stuck buttons, triggers or sticks; its owner decides how long it stays so, keeping games' player slot),
/// and hands what games send it to `onFeedback`. Its identity (a virtual DualSense's MAC)
/// derives from `seed`, so the same source gets the same virtual pad every time. Loop-confined.
public final class VirtualPadSession {
    public let kind: VirtualPadKind
    /// A virtual DualSense's MAC ("c6:2f:..."), nil for an Xbox 360 pad.
    public let mac: String?
    /// The device nodes, once the kernel has made them.
    public private(set) var nodes: VirtualPadNodes?
    private var pad: (any VirtualPad)?
    private let logger: Logger
    /// What readers see now.
    private var shown = PadSnapshot.neutral

    /// Creates the pad (`physicalPath`: its phys, under `VirtualPadKind.bridgeOutputPhysicalPathPrefix`; default
    /// `kind.bridgeOutputPhysicalPath`). `onReady` is called once the kernel has made its nodes (see `nodes`).
    public init(
        kind: VirtualPadKind, seed: String, name: String? = nil, bus: HIDTransport = .bluetooth,
        physicalPath: String? = nil, loop: DeviceEventLoop, logger: Logger,
        onFeedback: @escaping (FeedbackEvent) -> Void, onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) {
        self.kind = kind
        mac = kind == .dualSense ? DualSenseIdentity(seed: seed).uniq : nil
        self.logger = logger
        var readyNodes: ((VirtualPadNodes) -> Void)?
        pad = try kind.createPad(
            name: name, seed: seed, bus: bus, physicalPath: physicalPath ?? kind.bridgeOutputPhysicalPath, loop: loop, logger: logger,
            onFeedback: onFeedback,
            onReady: { nodes in readyNodes?(nodes) })
        readyNodes = { [weak self] nodes in
            self?.nodes = nodes
            onReady(nodes)
        }
    }

    /// Whether the pad exists (false after `close()`).
    public var isOpen: Bool { pad != nil }

    /// Shows `snapshot` (state-based: whatever it does not press is released).
    public func apply(_ snapshot: PadSnapshot) {
        show(snapshot)
    }

    /// Shows the released state: every button, trigger, stick and touch let go (battery and gravity kept).
    public func goNeutral() {
        show(shown.released)
    }

    /// Releases everything and destroys the pad. Idempotent.
    public func close() {
        pad?.close()
        pad = nil
    }

    private func show(_ snapshot: PadSnapshot) {
        guard let pad else { return }
        do {
            try pad.apply(snapshot)
            shown = snapshot
        } catch {
            logger.error("the virtual \(kind.rawValue) pad failed: \(error)")
        }
    }
}
