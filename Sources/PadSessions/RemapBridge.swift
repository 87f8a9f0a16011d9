public import Logging
public import PadCore
public import PadLinux

/// One physical pad bridged in-process to one virtual pad (`padbridge remap`): the physical session's frames go to
/// the virtual session, the virtual pad's feedback to the physical pad's drain. When the pad goes away the virtual
/// pad goes neutral and stays; when it comes back, forwarding resumes. Loop-confined.
public final class RemapBridge {
    public let fingerprint: Fingerprint
    public let kind: VirtualPadKind
    /// The pad's nodes when it was bridged: what it must show again to be taken back.
    private let bridgedNodes: ControllerNodes
    private var physical: PhysicalPadSession?
    private let virtual: VirtualPadSession
    /// Called with each feedback event a game sent the virtual pad, before it goes to the physical pad.
    public var onVirtualFeedback: ((FeedbackEvent) -> Void)?
    /// Called when the physical pad went away (the virtual pad went neutral), and when it is read again.
    public var onPadGone: (() -> Void)?
    public var onPadBack: ((Controller) -> Void)?

    /// The physical pad as last discovered.
    public var controller: Controller? { physical?.controller }
    /// Called with every batch of events read from the physical pad's nodes (see `PhysicalPadSession.onEvents`).
    public var onPhysicalEvents: ((EvdevNode, [EvdevReading]) -> Void)? {
        get { physical?.onEvents }
        set { physical?.onEvents = newValue }
    }
    /// Called with each feedback state written to the physical pad.
    public var onPhysicalFeedbackWritten: ((Feedback) -> Void)? {
        get { physical?.onFeedbackWritten }
        set { physical?.onFeedbackWritten = newValue }
    }

    /// Creates the virtual pad (its identity derived from the pad's ID), then grabs and reads the pad.
    /// `onReady(nodes, mac)` is called once the kernel made the virtual pad's nodes.
    public init(
        controller: Controller, as kind: VirtualPadKind, profile: RemapProfile, loop: DeviceEventLoop,
        logger: Logger, onReady: @escaping (VirtualPadNodes, _ mac: String?) -> Void
    ) throws {
        fingerprint = controller.fingerprint
        self.kind = kind
        bridgedNodes = controller.nodes
        var feedbackTarget: ((FeedbackEvent) -> Void)?
        var mac: String?
        let virtual = try VirtualPadSession(
            kind: kind, seed: VirtualPadIdentitySeed.local(forPad: controller.fingerprint), loop: loop,
            logger: logger, onFeedback: { event in feedbackTarget?(event) },
            onReady: { nodes in onReady(nodes, mac) })
        mac = virtual.mac
        self.virtual = virtual
        // unowned(unsafe): no reference counting per frame. Sound because the physical session belongs to this
        // bridge, which closes it (ending its calls) before the virtual session goes.
        let physical = try PhysicalPadSession(
            controller: controller, profile: profile, target: kind.capabilities, grab: true, loop: loop,
            logger: logger
        ) { [unowned(unsafe) virtual] snapshot in virtual.apply(snapshot) }
        self.physical = physical
        physical.onDetached = { [unowned virtual, weak self] in
            virtual.goNeutral()
            self?.onPadGone?()
        }
        physical.onReattached = { [weak self, weak physical] in
            if let controller = physical?.controller { self?.onPadBack?(controller) }
        }
        feedbackTarget = { [weak self, weak physical] event in
            self?.onVirtualFeedback?(event)
            physical?.submit(Feedback(event))
        }
        logger.info(
            "bridging \(controller.name) [\(fingerprint)] to a virtual \(kind.rawValue) pad",
            metadata: ["nodes": "\(controller.nodes.allPaths.joined(separator: ","))"])
    }

    /// Whether the physical pad went away and the bridge waits for it to come back.
    public var isWaitingForItsPad: Bool { physical?.isAttached == false && virtual.isOpen }

    /// What `resume(from:acceptingIncomplete:)` did.
    public enum Resumption: Sendable, Hashable {
        /// The pad is read and forwarded again (or was never away).
        case resumed
        /// The pad is not among the controllers.
        case absent
        /// The pad is listed without nodes it had when it was bridged (its nodes appear one by one): not taken yet.
        case incomplete(missing: [String])
        /// The pad is back but could not be opened (logged).
        case failed
    }

    /// If the bridge's pad is among `controllers` again, and complete (every node it had when first bridged, by role:
    /// a pad taken without its touchpad or hidraw node would stay without them for the rest of the session), grabs
    /// it and forwards again; with `acceptingIncomplete`, takes it as it is listed.
    public func resume(from controllers: [Controller], acceptingIncomplete: Bool = false) -> Resumption {
        guard let physical, !physical.isAttached else { return .resumed }
        guard let again = Controller.returning(fingerprint, among: controllers) else { return .absent }
        let missing = again.nodes.missing(comparedTo: bridgedNodes)
        if !missing.isEmpty && !acceptingIncomplete { return .incomplete(missing: missing) }
        return physical.resume(from: [again]) ? .resumed : .failed
    }

    /// Switches to another profile without touching the virtual pad.
    public func use(_ profile: RemapProfile) throws {
        try physical?.use(profile)
    }

    /// The end of the bridge, first step: forwarding stops, then the virtual pad shows the released state (readers
    /// see the release before the pad goes, and no later frame presses anything again).
    public func releaseInputs() {
        physical?.stopForwarding()
        virtual.goNeutral()
    }

    /// Leaves nothing behind: the physical pad quiet and ungrabbed, the virtual pad destroyed.
    public func close() {
        physical?.close()
        physical = nil
        virtual.close()
    }
}
