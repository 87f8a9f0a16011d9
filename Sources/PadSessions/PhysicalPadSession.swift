public import Logging
public import PadCore
public import PadLinux

/// A physical pad as a source of frames: its event nodes read (grabbed or not) and assembled into snapshots, run
/// through a remap profile, and handed to `output`; feedback for it goes in through its feedback drain. Survives
/// the pad going away and coming back (`resume(from:)`). What `remap` and `connect` read pads with. Loop-confined.
public final class PhysicalPadSession {
    public let fingerprint: Fingerprint
    /// The pad as last discovered (its nodes change when it comes back).
    public private(set) var controller: Controller
    /// Called when the pad went away (every node closed, grabs ended). Its last output stays whatever it was: the
    /// receiver decides what an absent pad shows (the virtual pad goes neutral).
    public var onDetached: (() -> Void)?
    /// Called when the pad came back and is read again (after `resume(from:)` found it).
    public var onReattached: (() -> Void)?
    /// Called with every batch of events read from a node of the pad, before they are assembled (a recorder of a
    /// grabbed pad: only the grabbing handle sees its events).
    public var onEvents: ((EvdevNode, [EvdevReading]) -> Void)? {
        didSet { reader?.onEvents = onEvents }
    }
    /// Called with each feedback state written to the pad.
    public var onFeedbackWritten: ((Feedback) -> Void)? {
        didSet { feedback?.onWritten = onFeedbackWritten }
    }

    private let output: (PadSnapshot) -> Void
    /// Called after `output` with what the profile gives the virtual keyboard and mouse, for profiles that drive
    /// them (`RemapPipeline.drivesDesktop`).
    public var onDesktopFrame: ((DesktopFrame) -> Void)?
    private var pipeline: RemapPipeline
    private let grab: Bool
    private let loop: DeviceEventLoop
    private let logger: Logger
    private var reader: ControllerReader?
    private var feedback: FeedbackDrainRunner?
    /// One timer for the pipeline's next wake (a held turbo button), re-armed per frame: no timerfd per frame.
    private var pipelineWake: LoopTimer?
    /// The pad's last snapshot, as read (what the pipeline last got).
    private var source = PadSnapshot.neutral
    private var forwarding = true

    /// Opens and reads `controller` (with `grab`, every node is grabbed: only padbridge sees its events), compiles
    /// `profile` for a virtual pad with `target`'s capabilities, and calls `output` with the first snapshot (the
    /// state held now) before returning, then with every frame.
    public init(
        controller: Controller, profile: RemapProfile, target: VirtualPadCapabilities, grab: Bool,
        loop: DeviceEventLoop, logger: Logger, output: @escaping (PadSnapshot) -> Void
    ) throws {
        fingerprint = controller.fingerprint
        self.controller = controller
        pipeline = try RemapPipeline(profile: profile, target: target)
        self.grab = grab
        self.loop = loop
        self.logger = logger
        self.output = output
        pipelineWake = loop.makeTimer { [weak self] () throws(DeviceAccessError) in
            guard let self else { return }
            self.show(self.source)
        }
        try attach(controller)
    }

    /// Whether the pad is being read (false after it went away, until it comes back).
    public var isAttached: Bool { reader != nil }

    /// Whether the current profile drives a virtual keyboard and a virtual mouse.
    public var profileNeeds: (keyboard: Bool, mouse: Bool) { (pipeline.needsVirtualKeyboard, pipeline.needsVirtualMouse) }

    /// Switches to another profile; its state (toggles, layers) starts afresh.
    public func use(_ profile: RemapProfile) throws {
        pipeline = try RemapPipeline(profile: profile, target: pipeline.target)
        show(source)
    }

    /// Feedback for the physical pad (dropped when it takes none, or is away).
    public func submit(_ feedback: Feedback) {
        self.feedback?.submit(feedback)
    }

    /// Stops handing frames on (the reader keeps the grab): once a receiver has shown the released state, no later
    /// frame (a motion node reports every few ms) may press again what the pad still holds.
    public func stopForwarding() {
        forwarding = false
        pipelineWake?.cancel()
    }

    /// If the pad is among `controllers` again, reads it again. Returns whether it did.
    @discardableResult
    public func resume(from controllers: [Controller]) -> Bool {
        guard reader == nil, let again = Controller.returning(fingerprint, among: controllers) else { return false }
        do {
            try attach(again)
            logger.notice(
                "\(again.name) [\(fingerprint)] is back",
                metadata: ["event": "padBack", "pad": "\(fingerprint.rawValue)", "name": "\(again.name)"])
            onReattached?()
            return true
        } catch {
            logger.warning("\(again.name) [\(fingerprint)] is back but cannot be read: \(error)")
            return false
        }
    }

    /// The pad quiet (rumble off, triggers off, lights restored) and ungrabbed. Idempotent.
    public func close() {
        forwarding = false
        feedback?.close()
        feedback = nil
        reader?.close()
        reader = nil
        pipelineWake?.close()
        pipelineWake = nil
    }

    private func attach(_ controller: Controller) throws {
        self.controller = controller
        let reader = try ControllerReader(controller: controller, grab: grab, loop: loop) { pad in
            ControllerLayouts.layout(for: controller, padNode: pad)
        }
        // unowned(unsafe): no reference counting per frame. Sound because the reader belongs to this session and
        // stops calling when closed (close(), or its own deinit when the session goes); nothing it calls frees the
        // session.
        reader.onFrame = { [unowned(unsafe) self] snapshot, _ in self.show(snapshot) }
        reader.onUnplugged = { [unowned self] node in self.wentAway(node) }
        reader.onEventsDropped = { [unowned self, name = controller.name] node in
            let message =
                "the kernel dropped events of \(name) (\(node.path)): padbridge fell behind reading it (is the "
                + "machine overloaded?); its state is caught up, presses and releases in between are lost"
            self.logger.warning(
                "\(message)",
                metadata: ["event": "eventsDropped", "pad": "\(self.fingerprint.rawValue)", "name": "\(name)", "node": "\(node.path)"])
        }
        reader.onEvents = onEvents
        if let problem = reader.backButtonsUnreadable {
            let message =
                "\(controller.name) [\(fingerprint)]: its back buttons are not read (hid-playstation makes no event for "
                + "them; they are in its hidraw node, which cannot be opened: \(problem)); every other control is"
            logger.warning(
                "\(message)",
                metadata: ["event": "backButtonsUnread", "pad": "\(fingerprint.rawValue)"])
        }
        self.reader = reader
        show(reader.snapshot)
        feedback = openFeedback(for: controller)
        feedback?.onWritten = onFeedbackWritten
    }

    private func openFeedback(for controller: Controller) -> FeedbackDrainRunner? {
        guard let path = controller.feedbackNodePath else {
            logger.debug("\(controller.name) takes no feedback; feedback for it is dropped")
            return nil
        }
        do {
            let opened = try PhysicalFeedbackSinks.open(path: path)
            return try FeedbackDrainRunner(
                sink: opened.sink, restoring: opened.initialState, loop: loop, logger: logger
            ) { [weak self] error in
                if let error { self?.logger.warning("feedback to the physical pad stopped: \(error)") }
            }
        } catch {
            logger.warning("no feedback to \(controller.name): \(error)")
            return nil
        }
    }

    /// Runs `snapshot` through the profile and hands the result on. A held turbo button arms the one wake timer
    /// for the pipeline's next edge; nothing runs while nothing is held.
    private func show(_ snapshot: PadSnapshot) {
        source = snapshot
        guard forwarding else { return }
        // Only a turbo button needs the time: no clock read per frame otherwise.
        let now = pipeline.usesTime ? MonotonicInstant.now().microseconds : 0
        output(pipeline.apply(snapshot, atMicroseconds: now))
        if pipeline.drivesDesktop { onDesktopFrame?(pipeline.desktop) }
        if let wake = pipeline.nextWakeMicroseconds {
            pipelineWake?.schedule(at: MonotonicInstant(microseconds: max(wake, now + 1)))
        } else if pipeline.usesTime {
            pipelineWake?.cancel()
        }
    }

    private func wentAway(_ node: EvdevNode) {
        logger.notice(
            "\(controller.name) [\(fingerprint)] went away (\(node.path))",
            metadata: ["event": "padWentAway", "pad": "\(fingerprint.rawValue)", "name": "\(controller.name)", "node": "\(node.path)"])
        reader?.close()
        reader = nil
        feedback = nil  // its node is gone: no closing write to make
        pipelineWake?.cancel()
        source = source.released
        // Latched toggles and layers must not come back held: the pipeline starts afresh when the pad returns.
        pipeline = (try? RemapPipeline(profile: pipeline.profile, target: pipeline.target)) ?? pipeline
        onDetached?()
    }
}
