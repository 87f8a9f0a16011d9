import ArgumentParser
import Glibc
import Logging
import PadCore
import PadLinux
import PadProfiles

struct RemapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remap",
        abstract: "Bridge a physical pad to a virtual one: grabbed, remapped, with feedback going back.",
        discussion: """
            Grabs every event node of the pad (games see only the virtual pad; released on exit), creates the \
            virtual pad (--as; default: the same kind where padbridge can build it, a DualSense for DualSense \
            pads, else an Xbox 360 pad), and forwards each frame. Feedback games send to the virtual pad (rumble, \
            lightbar, player LEDs, mic LED, trigger effects) goes back to the physical pad; what it lacks is dropped.
            When the pad goes away the virtual pad is set to neutral at once and stays (games keep its player \
            slot); when the same pad (same ID) comes back, forwarding resumes. A virtual DualSense's identity \
            (MAC) derives from the physical pad's ID, so it is the same virtual pad across runs.
            --all bridges every connected pad, each to its own virtual pad, created in the order of their IDs \
            (the same pads get the same virtual slots every run).
            For each virtual pad, one line "padbridge: ready {...}" goes to standard error once it exists.
            --profile FILE remaps through a TOML profile, checked completely before any device is opened; a change \
            to the file, or SIGHUP, reloads it without touching the virtual pad (a broken new profile is reported \
            and the old one stays).
            Ends on end of input, SIGINT or SIGTERM: inputs released, virtual pads destroyed, grabs released, \
            physical pads quiet.
            """
    )

    @Argument(help: "The pad: index, ID or ID prefix, or device path (see `padbridge list`).")
    var pad: String?

    @Option(name: .customLong("as"), help: "The virtual pad: xbox360 or dualsense.")
    var virtualKind: VirtualPadKind?

    @Flag(name: .long, help: "Bridge every connected pad, each to its own virtual pad (in ID order).")
    var all = false

    @Option(
        name: .long,
        help: "A TOML remap profile (see README, \"Remap profiles\"). Saving the file or SIGHUP reloads it.")
    var profile: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if all && pad != nil { throw ValidationError("--all bridges every pad: give no PAD with it.") }
    }

    /// The profile for a virtual pad of `kind`, parsed and validated: a mistake names the file, key and line.
    static func loadProfile(_ path: String?, for kind: VirtualPadKind) throws -> RemapProfile {
        guard let path else { return .identity }
        let text: String
        do {
            text = try TextFile.contents(atPath: path)
        } catch {
            throw ValidationError("the profile: \(error)")
        }
        do {
            return try RemapProfileFile.parse(text, for: RemapBridge.capabilities(of: kind))
        } catch {
            throw ValidationError("\(path): \(error)")
        }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.remap")
        signal(SIGPIPE, SIG_IGN)
        // The profile is checked before any device is opened: its syntax and keys now, against the virtual pad
        // type (known once the pad is) before that pad's virtual pad is made. Read and parsed once per type.
        var profiles: [VirtualPadKind: RemapProfile] = [:]
        func startingProfile(for kind: VirtualPadKind) throws -> RemapProfile {
            if let known = profiles[kind] { return known }
            let loaded = try Self.loadProfile(profile, for: kind)
            profiles[kind] = loaded
            return loaded
        }
        if let virtualKind {
            _ = try startingProfile(for: virtualKind)
        } else if profile != nil {
            _ = try startingProfile(for: .dualsense)  // the wider type: only the target check waits
        }
        let loop = try DeviceEventLoop()
        var shutdown: (() -> Void)?
        var reload: (() -> Void)?
        try loop.watchSignals([SIGINT, SIGTERM, SIGHUP]) { signal in
            if signal == SIGHUP {
                reload?()
                return
            }
            logger.info("received signal \(signal): releasing inputs and destroying the virtual pads")
            if let shutdown { shutdown() } else { loop.stop() }
        }

        // Receiving hotplug events starts before the listing, so a pad that comes back in between is not missed.
        let monitor = try UdevMonitor(context: UdevContext())
        let controllers = try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads)
        // --all: in fingerprint order, so the same pads get the same virtual slots every run, whatever order they
        // were plugged in.
        let chosen: [Controller] =
            all ? controllers.sorted { $0.fingerprint < $1.fingerprint } : [try MonitorCommand.choose(pad, from: controllers)]
        if chosen.isEmpty { throw ValidationError(PadSelectionError.noControllers.description) }

        var bridges: [RemapBridge] = []
        defer { bridges.forEach { $0.close() } }
        for controller in chosen {
            let kind = virtualKind ?? RemapBridge.defaultVirtualKind(for: controller)
            bridges.append(
                try RemapBridge(
                    controller: controller, as: kind, profile: try startingProfile(for: kind), loop: loop,
                    logger: logger))
        }
        reload = { [profile] in
            guard let profile else { return logger.info("SIGHUP: no --profile to reload") }
            for bridge in bridges {
                do {
                    try bridge.use(try Self.loadProfile(profile, for: bridge.kind))
                    logger.notice("reloaded \(profile) for \(bridge.fingerprint)")
                } catch {
                    LineOutput.standardError.write("padbridge: \(error); keeping the previous profile")
                }
            }
        }

        var settle: LoopDeadline?
        let hotplug = try loop.watch(monitor) { _ in
            settle?.cancel()
            settle = try? loop.deadline(afterMilliseconds: ListCommand.settleMilliseconds) {
                settle = nil
                guard bridges.contains(where: \.isWaitingForItsPad) else { return }
                do {
                    let present = try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads)
                    for bridge in bridges { bridge.resume(from: present) }
                } catch {
                    logger.warning("listing pads after a hotplug event failed: \(error)")
                }
            }
        }
        defer { hotplug.cancel() }

        // A change to the profile file reloads it, as SIGHUP does (after the burst of writes an editor makes).
        var reloadSoon: LoopDeadline?
        let profileWatch = try profile.map { path in
            try FileChangeWatch(path: path, loop: loop) {
                reloadSoon?.cancel()
                reloadSoon = try? loop.deadline(afterMilliseconds: 100) {
                    reloadSoon = nil
                    reload?()
                }
            }
        }
        defer { profileWatch?.cancel() }

        var releaseGrace: LoopDeadline?
        shutdown = {
            if releaseGrace != nil {
                loop.stop()
                return
            }
            for bridge in bridges { bridge.releaseInputs() }
            releaseGrace = try? loop.deadline(afterMilliseconds: VirtualCommand.releaseGraceMilliseconds) {
                loop.stop()
            }
            if releaseGrace == nil { loop.stop() }
        }
        try loop.watchStandardInputLines({ _ in }, onEndOfFile: { shutdown?() })
        try loop.run()
    }
}

/// One physical pad bridged to one virtual pad: the physical pad's frames go to the virtual pad, the virtual pad's
/// feedback to the physical pad's drain. Survives the physical pad going away and coming back. Loop-confined.
final class RemapBridge {
    let fingerprint: Fingerprint
    let kind: VirtualPadKind
    private var pipeline: RemapPipeline
    private var turboWake: LoopDeadline?
    private var controller: Controller
    private let loop: DeviceEventLoop
    private let logger: Logger
    private var virtualPad: (any VirtualPad)?
    private var reader: ControllerReader?
    private var feedback: FeedbackDrainRunner?
    /// The physical pad's last snapshot (what the pipeline last got).
    private var source = PadSnapshot.neutral

    /// The virtual pad padbridge builds for a physical pad by default: the same kind where it can.
    static func defaultVirtualKind(for controller: Controller) -> VirtualPadKind {
        switch controller.kind {
        case .dualSense, .dualSenseEdge: .dualsense
        default: .xbox360
        }
    }

    static func capabilities(of kind: VirtualPadKind) -> VirtualPadCapabilities {
        switch kind {
        case .xbox360: .xbox360
        case .dualsense: .dualsense
        }
    }

    init(
        controller: Controller, as kind: VirtualPadKind, profile: RemapProfile, loop: DeviceEventLoop, logger: Logger
    ) throws {
        fingerprint = controller.fingerprint
        self.kind = kind
        pipeline = try RemapPipeline(profile: profile, target: Self.capabilities(of: kind))
        self.controller = controller
        self.loop = loop
        self.logger = logger
        let onFeedback: (FeedbackEvent) -> Void = { [weak self] event in
            self?.feedback?.submit(Feedback(event))
        }
        // The same physical pad gets the same virtual DualSense (MAC) on every run.
        let seed = "padbridge-remap-\(fingerprint)"
        let mac = kind == .dualsense ? DualSenseIdentity(seed: seed).uniq : nil
        let onReady: (VirtualPadNodes) -> Void = { [fingerprint] nodes in
            LineOutput.standardError.write(
                "padbridge: ready " + ReadyLine.json(kind: kind, nodes: nodes, mac: mac, source: fingerprint.rawValue))
        }
        virtualPad = try kind.createPad(
            name: nil, seed: seed, bus: .bluetooth, loop: loop, logger: logger, onFeedback: onFeedback,
            onReady: onReady)
        try attach(controller)
        logger.info(
            "bridging \(controller.name) [\(fingerprint)] to a virtual \(kind.rawValue) pad",
            metadata: ["nodes": "\(controller.nodes.allPaths.joined(separator: ","))"])
    }

    /// Whether the physical pad went away and the bridge waits for it to come back.
    var isWaitingForItsPad: Bool { reader == nil && virtualPad != nil }

    /// Grabs and reads the physical pad, and opens its feedback path.
    private func attach(_ controller: Controller) throws {
        self.controller = controller
        let reader = try ControllerReader(controller: controller, grab: true, loop: loop) { pad in
            ControllerLayouts.layout(for: controller, padNode: pad)
        }
        // unowned(unsafe): no reference counting per frame. Sound because the reader belongs to this bridge and
        // stops calling when closed (close(), or its own deinit when the bridge goes); nothing it calls frees the
        // bridge.
        reader.onFrame = { [unowned(unsafe) self] snapshot, _ in self.show(snapshot) }
        reader.onUnplugged = { [unowned self] node in self.padWentAway(node) }
        self.reader = reader
        show(reader.snapshot)
        feedback = openFeedback(for: controller)
    }

    private func openFeedback(for controller: Controller) -> FeedbackDrainRunner? {
        let path: String? =
            controller.kind.isPlayStation ? controller.nodes.hidraw
            : controller.capabilities.rumble ? controller.nodes.evdev(.pad)?.path : nil
        guard let path else {
            logger.debug("\(controller.name) takes no feedback; games' feedback is dropped")
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

    /// Runs the physical pad's snapshot through the profile and shows the result on the virtual pad. A held turbo
    /// button arms one timer for the pipeline's next wake; nothing runs while nothing is held.
    private func show(_ snapshot: PadSnapshot) {
        source = snapshot
        // Only a turbo button needs the time: no clock read per frame otherwise.
        let output = pipeline.apply(snapshot, atMicroseconds: pipeline.usesTime ? MonotonicInstant.now().microseconds : 0)
        do {
            try virtualPad?.apply(output)
        } catch {
            logger.error("the virtual pad for \(controller.name) failed: \(error)")
        }
        if let turboWake {
            turboWake.cancel()
            self.turboWake = nil
        }
        if let wake = pipeline.nextWakeMicroseconds {
            let now = MonotonicInstant.now().microseconds
            let milliseconds = wake > now ? (wake - now + 999) / 1000 : 0
            turboWake = try? loop.deadline(afterMilliseconds: max(1, milliseconds)) { [weak self] in
                guard let self else { return }
                self.show(self.source)
            }
        }
    }

    /// Switches to another profile without touching the virtual pad; its state (toggles, layers) starts afresh.
    func use(_ profile: RemapProfile) throws {
        pipeline = try RemapPipeline(profile: profile, target: Self.capabilities(of: kind))
        show(source)
    }

    /// The physical pad went away: the virtual pad goes neutral at once (no stuck buttons) and stays.
    private func padWentAway(_ node: EvdevNode) {
        logger.notice(
            "\(controller.name) [\(fingerprint)] went away (\(node.path)); the virtual pad stays, neutral, until it comes back")
        reader?.close()
        reader = nil
        feedback = nil
        releaseInputs()
        // Latched toggles and layers must not come back held: the pipeline starts afresh when the pad returns.
        pipeline = (try? RemapPipeline(profile: pipeline.profile, target: pipeline.target)) ?? pipeline
    }

    /// If the bridge's pad is among `controllers` again, grab it and forward again.
    func resume(from controllers: [Controller]) {
        guard isWaitingForItsPad, let again = controllers.first(where: { $0.fingerprint == fingerprint }) else { return }
        do {
            try attach(again)
            logger.notice("\(again.name) [\(fingerprint)] is back; forwarding again")
        } catch {
            logger.warning("\(again.name) [\(fingerprint)] is back but cannot be read: \(error)")
        }
    }

    /// Shows the released state (end of the bridge: readers see the release before the pad goes).
    func releaseInputs() {
        turboWake = nil
        source = source.released
        do { try virtualPad?.apply(.neutral) } catch { logger.warning("could not release the virtual pad: \(error)") }
    }

    /// Leaves nothing behind: the physical pad quiet and ungrabbed, the virtual pad destroyed.
    func close() {
        feedback?.close()
        feedback = nil
        reader?.close()
        reader = nil
        virtualPad?.close()
        virtualPad = nil
    }
}
