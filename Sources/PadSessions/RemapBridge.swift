public import Logging
public import PadCore
public import PadLinux

/// One physical pad bridged in-process to one virtual pad (`padbridge remap`), and to a virtual keyboard and mouse
/// when its profile drives them: the physical session's frames go to the virtual devices, the virtual pad's
/// feedback to the physical pad's drain. When the pad goes away the virtual pad goes neutral and stays, and every
/// key and mouse button is released; when it comes back, forwarding resumes. Loop-confined.
public final class RemapBridge {
    public let fingerprint: Fingerprint
    /// The virtual pad's kind; nil for none (`remap --as none`: the keyboard and mouse only).
    public let kind: VirtualPadKind?
    /// What a profile may target: the virtual pad's controls (none without one), keys and the mouse.
    public var capabilities: VirtualPadCapabilities { kind?.capabilities ?? .nothing }
    /// The pad's nodes when it was bridged: what it must show again to be taken back.
    private let bridgedNodes: ControllerNodes
    private var physical: PhysicalPadSession?
    private let virtual: VirtualPadSession?
    private var desktop: VirtualKeyboardAndMouse?
    private let loop: DeviceEventLoop
    private let logger: Logger
    /// The virtual pad's phys; the keyboard's and mouse's are it + "/keyboard", "/mouse" (so `list` groups them).
    private let outputPath: String

    /// `padbridge-output/KIND/remap-ID` (`none` for no virtual pad).
    static func outputPhysicalPath(kind: VirtualPadKind?, pad: Fingerprint) -> String {
        "\(VirtualPadKind.bridgeOutputPhysicalPathPrefix)\(kind?.rawValue ?? "none")/remap-\(pad.rawValue)"
    }
    /// The virtual keyboard's and mouse's event nodes, once made.
    public var keyboardNode: String? { desktop?.keyboardNode }
    public var mouseNode: String? { desktop?.mouseNode }
    /// Called with each feedback event a game sent the virtual pad, before it goes to the physical pad.
    public var onVirtualFeedback: ((FeedbackEvent) -> Void)?
    /// Called with each frame the virtual pad shows (after the profile), and with the released state when the pad
    /// went away (`padPresent` false): what `remap --dsu` serves.
    public var onShown: ((PadSnapshot, _ padPresent: Bool) -> Void)?
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

    /// Creates the virtual pad (its identity derived from the pad's ID) and the keyboard and mouse the profile
    /// needs, then grabs and reads the pad. `onReady(nodes, mac)` is called once the kernel made the virtual pad's
    /// nodes (with no nodes, from the loop, when there is no virtual pad).
    public init(
        controller: Controller, as kind: VirtualPadKind?, profile: RemapProfile, loop: DeviceEventLoop,
        logger: Logger, onReady: @escaping (VirtualPadNodes, _ mac: String?) -> Void
    ) throws {
        fingerprint = controller.fingerprint
        self.kind = kind
        self.loop = loop
        self.logger = logger
        bridgedNodes = controller.nodes
        var feedbackTarget: ((FeedbackEvent) -> Void)?
        var mac: String?
        let outputPath = Self.outputPhysicalPath(kind: kind, pad: controller.fingerprint)
        self.outputPath = outputPath
        let virtual = try kind.map { kind in
            try VirtualPadSession(
                kind: kind, seed: VirtualPadIdentitySeed.local(forPad: controller.fingerprint), physicalPath: outputPath,
                loop: loop,
                logger: logger, onFeedback: { event in feedbackTarget?(event) },
                onReady: { nodes in onReady(nodes, mac) })
        }
        mac = virtual?.mac
        self.virtual = virtual
        // unowned(unsafe): no reference counting per frame. Sound because the physical session belongs to this
        // bridge, which closes it (ending its calls) before the virtual session goes, and before the bridge goes.
        var shownTo: ((PadSnapshot, Bool) -> Void)?
        let physical = try PhysicalPadSession(
            controller: controller, profile: profile, target: kind?.capabilities ?? .nothing, grab: true, loop: loop,
            logger: logger
        ) { [unowned(unsafe) virtual] snapshot in
            virtual?.apply(snapshot)
            shownTo?(snapshot, true)
        }
        self.physical = physical
        try makeDesktopDevices(for: physical)
        // unowned(unsafe), as above: the physical session is this bridge's, and it calls only while the bridge has it.
        physical.onDesktopFrame = { [unowned(unsafe) self] frame in self.showOnDesktop(frame) }
        if virtual == nil { loop.deferWork { onReady(VirtualPadNodes(eventNodes: [], hidrawNode: nil, sysfsPath: ""), nil) } }
        shownTo = { [unowned(unsafe) self] snapshot, present in self.onShown?(snapshot, present) }
        physical.onDetached = { [weak virtual, weak self] in
            virtual?.goNeutral()
            self?.onShown?(.neutral, false)
            self?.desktop?.releaseAll()
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
            "bridging \(controller.name) [\(fingerprint)] to \(kind.map { "a virtual \($0.rawValue) pad" } ?? "no virtual pad")",
            metadata: [
                "event": "bridging", "pad": "\(fingerprint.rawValue)", "name": "\(controller.name)",
                "nodes": "\(controller.nodes.allPaths.joined(separator: ","))",
            ])
    }

    /// Makes the keyboard and mouse the profile needs and the bridge does not have yet (a reloaded profile may need
    /// them; one that no longer does leaves them, idle, until the bridge ends).
    private func makeDesktopDevices(for physical: PhysicalPadSession) throws {
        let needs = physical.profileNeeds
        let has = (keyboard: desktop?.keyboardNode != nil, mouse: desktop?.mouseNode != nil)
        guard (needs.keyboard && !has.keyboard) || (needs.mouse && !has.mouse) else { return }
        let old = desktop
        desktop = try VirtualKeyboardAndMouse(
            keyboard: needs.keyboard || has.keyboard, mouse: needs.mouse || has.mouse,
            physicalPath: outputPath, logger: logger)
        old?.close()
    }

    private func showOnDesktop(_ frame: DesktopFrame) {
        guard let desktop else { return }
        do {
            try desktop.show(frame)
        } catch {
            logger.error("the virtual keyboard and mouse failed: \(error)")
        }
    }

    /// Whether the physical pad went away and the bridge waits for it to come back.
    public var isWaitingForItsPad: Bool { physical?.isAttached == false && (virtual?.isOpen ?? true) }

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
        guard let physical else { return }
        try physical.use(profile)
        try makeDesktopDevices(for: physical)
    }

    /// The end of the bridge, first step: forwarding stops, then the virtual pad shows the released state (readers
    /// see the release before the pad goes, and no later frame presses anything again).
    public func releaseInputs() {
        physical?.stopForwarding()
        virtual?.goNeutral()
        desktop?.releaseAll()
    }

    /// Leaves nothing behind: the physical pad quiet and ungrabbed, the virtual pad destroyed.
    public func close() {
        physical?.close()
        physical = nil
        virtual?.close()
        desktop?.close()
        desktop = nil
    }
}
