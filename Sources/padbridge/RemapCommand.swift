import ArgumentParser
import Glibc
import Logging
import PadCore
import PadLinux
import PadProfiles
import PadSessions

struct RemapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remap",
        abstract: "Bridge a physical pad to a virtual one: grabbed, remapped, with feedback going back.",
        discussion: """
            Grabs every event node of the pad (its input reaches only padbridge; released on exit), creates the \
            virtual pad (--as; default: the same kind where padbridge can build it, a DualSense for DualSense \
            pads, else an Xbox 360 pad), and forwards each frame. With padbridge's hiding service running \
            (systemd/padbridge-hide.socket), the pad's nodes, its hidraw node included, are hidden from other \
            programs while remap holds them, so SDL, Steam and games see only the virtual pad; without it remap says \
            once that they still see the pad, and how to install the service. Feedback games send to the virtual pad (rumble, \
            lightbar, player LEDs, mic LED, trigger effects) goes back to the physical pad; what it lacks is dropped.
            A profile that maps to keys (key:NAME), mouse buttons (mouse:left), the wheel (scroll:up), or puts a \
            stick, the gyro or flick stick on the mouse gets a virtual keyboard and/or mouse beside the virtual pad \
            (--as none: those alone); every key and button is released when the pad goes away and when remap ends.
            When the pad goes away the virtual pad is set to neutral at once and stays (games keep its player \
            slot); when the same pad (same ID) comes back, forwarding resumes. A virtual DualSense's identity \
            (MAC) derives from the physical pad's ID, so it is the same virtual pad across runs.
            --all bridges every connected pad, each to its own virtual pad, created in the order of their IDs \
            (the same pads get the same virtual slots every run), and every pad plugged in later; never a virtual \
            pad a padbridge bridge shows (remap's own or serve's), so two bridges never bridge each other's pads.
            For each virtual pad, one line "padbridge: ready {...}" goes to standard error once it exists.
            Without --profile each pad gets its own profile from the profiles directory \
            ($XDG_CONFIG_HOME/padbridge/profiles, or ~/.config/padbridge/profiles; --profiles DIR): the file named \
            by the pad's ID as `padbridge list` shows it (b43f9de35e24.toml), else by its kind (dualsense.toml, \
            dualsense-edge.toml, dualshock4.toml, xbox360.toml, xbox-one.toml, switch-pro.toml, steam-deck.toml, generic.toml; the earlier xboxone.toml, switchpro.toml, dualsenseedge.toml too), else \
            default.toml; none: the pad passes through unchanged. A line on standard error says which file each pad \
            got. A broken file is reported and its pad passes through unchanged; the other pads are not affected.
            --profile FILE remaps every pad through one TOML profile instead, checked completely before any device \
            is opened. A change to the profile (or to the directory), or SIGHUP, reloads it without touching the \
            virtual pads (a broken new profile is reported and the pad keeps the one it had).
            --record FILE records both sides of the bridge (padbridge's recording format, as `padbridge record` \
            writes it): the pad's events and reports, the virtual pad's events, the feedback games send the \
            virtual pad and what of it reached the pad. `padbridge replay FILE` brings the pad back.
            Ends on SIGINT or SIGTERM (standard input is not read): inputs released, virtual pads destroyed, grabs \
            released, physical pads quiet.
            """
    )

    @Argument(help: "The pad: index, ID or ID prefix, or device path (see `padbridge list`).")
    var pad: String?

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "The virtual pad: xbox360, dualsense, dualsense-edge, dualshock4, xbox-one, switch-pro, steam-deck, or none (the profile's keyboard and mouse only).",
            valueName: "kind"))
    var output: VirtualPadChoice?

    /// The virtual pad for `controller` whose profile asks for `choice`: --as's, else the profile's `as`, else the
    /// default for its kind; nil for none.
    func virtualKind(for controller: Controller, profileAsks choice: VirtualPadChoice?) -> VirtualPadKind? {
        if let output { return output.kind }
        if let choice { return choice.kind }
        return VirtualPadKind.defaultKind(for: controller.kind)
    }

    @Flag(name: .long, help: "Bridge every connected pad (in ID order) and every pad plugged in later.")
    var all = false

    @Option(
        name: .long,
        help: ArgumentHelp("One TOML remap profile for every pad (see docs/remapping.md). Saving it or SIGHUP reloads it.", valueName: "file"),
        completion: .file(extensions: ["toml"]))
    var profile: String?

    @Option(
        name: .customLong("profiles"),
        help: ArgumentHelp("The profiles directory (default: $XDG_CONFIG_HOME/padbridge/profiles): ID.toml, else KIND.toml, else default.toml.", valueName: "dir"),
        completion: .directory)
    var profilesDirectory: String?

    @OptionGroup var dsuOptions: DSUOptions

    @Option(name: .long, help: ArgumentHelp("Record the pad, its virtual pad and the feedback between them to this file.", valueName: "file"))
    var record: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if all && pad != nil { throw ValidationError("--all bridges every pad: give no PAD with it.") }
        if all && record != nil { throw ValidationError("--record records one bridge: name its PAD instead of --all.") }
        if profile != nil && profilesDirectory != nil {
            throw ValidationError("--profile gives every pad one profile, --profiles a directory of them: use one.")
        }
    }

    /// The profile for a virtual pad with `capabilities` (`.everything`: any target allowed).
    static func loadProfile(_ path: String, for capabilities: VirtualPadCapabilities) throws -> RemapProfile {
        try loadProfile(path) { _ in capabilities }
    }

    /// The profile, validated for the virtual pad `target` says it gets given its `as`: a mistake names the file,
    /// key and line.
    static func loadProfile(_ path: String, target: (VirtualPadChoice?) -> VirtualPadCapabilities) throws -> RemapProfile {
        let text: String
        do {
            text = try TextFile.contents(atPath: path)
        } catch {
            throw ValidationError("the profile: \(error)")
        }
        do {
            return try RemapProfileFile.parse(text, target: target)
        } catch {
            throw ValidationError("\(path): \(error)")
        }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.remap")
        signal(SIGPIPE, SIG_IGN)
        // --profile is checked before any device is opened: its syntax and keys now, against the virtual pad it asks
        // for or --as names (any kind's targets when the pad's own kind decides), and again against each pad's
        // virtual pad before it is made.
        if let profile {
            _ = try Self.loadProfile(profile) { choice in (output ?? choice)?.capabilities ?? .anyVirtualPad }
        }
        // Without --profile, each pad's own from the profiles directory.
        let directory: RemapProfileDirectory? =
            profile != nil ? nil : (profilesDirectory ?? RemapProfileDirectory.defaultPath()).map(RemapProfileDirectory.init(path:))

        let loop = try DeviceEventLoop()
        let dsuSlots = try dsuOptions.dsu ? DSUBridgeSlots(listen: dsuOptions.dsuListen, loop: loop, logger: logger) : nil
        defer { dsuSlots?.close() }
        var service: RemapService?
        try loop.watchSignals([SIGINT, SIGTERM, SIGHUP]) { signal in
            if signal == SIGHUP {
                service?.reload()
                return
            }
            logger.info("received signal \(signal): releasing inputs and destroying the virtual pads")
            if let service { service.requestShutdown() } else { loop.stop() }
        }

        // Receiving hotplug events starts before the listing, so a pad that comes back in between is not missed.
        let monitor = try UdevMonitor(context: UdevContext())
        let controllers = try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads, sdlSource: .padbridgeHelper)
        // --all: in fingerprint order, so the same pads get the same virtual slots every run, whatever order they
        // were plugged in. Never a bridge's own virtual pad.
        let chosen: [Controller] =
            all ? controllers.filter { !$0.isBridgeOutput }.sorted { $0.fingerprint < $1.fingerprint } : [try MonitorCommand.choose(pad, from: controllers)]

        // Given back after the bridges closed (defers run last to first): games see the pad again once its virtual
        // pad is gone, not both at once.
        let hiding = BridgeHiding(loop: loop, logger: logger, command: .remap)
        defer { hiding.releaseAll() }
        let recording = try record.map(BridgeRecording.init(path:))
        let remap = try RemapService(
            configuration: .init(
                controllers: chosen, bridgesNewPads: all, virtualKind: virtualKind(for:profileAsks:),
                profiles: profilePorts(directory: directory)),
            monitor: monitor, sdlSource: .padbridgeHelper, hiding: hiding, loop: loop, logger: logger
        ) { event in
            switch event {
            case .noPadYet: StatusOutput.say(.noPadYet, "no pad yet; each one plugged in will be bridged")
            case let .ready(bridge, kind, nodes, mac):
                dsuSlots?.serve(bridge)
                if let recording, let controller = bridge.controller {
                    recording.start(controller: controller, virtualNodes: nodes.eventNodes, loop: loop, logger: logger)
                    bridge.onPhysicalEvents = recording.physicalEvents
                    bridge.onVirtualFeedback = recording.gameFeedback
                    bridge.onPhysicalFeedbackWritten = recording.reachedPad
                }
                StatusOutput.say(
                    ReadyLine.event(
                        kind: kind, nodes: nodes, mac: mac, source: bridge.fingerprint.rawValue,
                        desktop: (bridge.keyboardNode, bridge.mouseNode)))
            case let .padAdded(controller):
                StatusOutput.say(
                    .padAdded, "bridging \(controller.name) [\(controller.fingerprint)] too (plugged in)",
                    ["pad": .string(controller.fingerprint.rawValue), "name": .string(controller.name)])
            case let .cannotBridge(controller, error):
                StatusOutput.say(
                    .cannotBridge, "cannot bridge \(controller.name) [\(controller.fingerprint)]: \(error)",
                    ["pad": .string(controller.fingerprint.rawValue), "name": .string(controller.name)])
            }
        }
        service = remap
        defer { remap.close() }
        // Before the bridges close: what the virtual pad showed last (the release) is still there to read.
        defer { recording?.finish() }
        // The pad's hidraw declarations are read now, before its bridge runs: reading them later would stall it.
        if let recording, let controller = chosen.first { recording.prepare(controller, logger: logger) }
        try remap.start()
        // Standard input is not read: remap takes no input, and must keep running with /dev/null there (a service,
        // nohup) or as a background job of a shell (reading the terminal would stop it with SIGTTIN).
        try loop.run()
    }

    /// remap's profile policy: --profile's file for every pad (a mistake in it ends the command at start; at a reload
    /// it is said and the pads keep theirs), else each pad's own from the profiles directory (a mistake there is
    /// said and the pad passes through), said per pad at start and at each reload.
    private func profilePorts(directory: RemapProfileDirectory?) -> RemapProfilePorts {
        let pad = { (bridge: RemapBridge) -> EventValue in .string(bridge.fingerprint.rawValue) }
        let kept = { (bridge: RemapBridge, error: any Error) -> Void in
            StatusOutput.say(.profileKept, "\(error); keeping the previous profile", ["pad": pad(bridge)])
        }
        if let profile {
            return RemapProfilePorts(
                starting: { _, kind in
                    try Self.loadProfile(profile) { choice in kind(choice)?.capabilities ?? .nothing }
                },
                reloaded: { bridge, _ in
                    do {
                        let reloaded = try Self.loadProfile(profile) { _ in bridge.kind?.capabilities ?? .nothing }
                        return .use(reloaded) {
                            StatusOutput.say(
                                .profileReloaded, "reloaded \(profile) for \(bridge.fingerprint)",
                                ["pad": pad(bridge), "file": .string(profile)])
                            Self.sayVirtualPadStays(bridge, asked: reloaded.virtualPad, overridden: output != nil)
                        }
                    } catch {
                        kept(bridge, error)
                        return .keep
                    }
                },
                refused: kept, watched: .file(path: profile))
        }
        guard let directory else {
            return RemapProfilePorts(
                starting: { _, _ in .identity }, reloaded: { _, _ in .keep }, refused: kept,
                watched: .nothing)
        }
        return RemapProfilePorts(
            starting: { controller, kind in
                let outcome = directory.outcome(for: controller) { choice in kind(choice)?.capabilities ?? .nothing }
                StatusOutput.say(directory.describe(outcome, for: controller))
                if case let .profile(chosen, _) = outcome { return chosen }
                return .identity
            },
            reloaded: { bridge, controller in
                guard let controller else { return .keep }
                let outcome = directory.outcome(for: controller) { _ in bridge.kind?.capabilities ?? .nothing }
                let say = { () -> Void in StatusOutput.say(directory.describe(outcome, for: controller)) }
                switch outcome {
                case let .profile(chosen, _):
                    return .use(chosen) {
                        say()
                        Self.sayVirtualPadStays(bridge, asked: chosen.virtualPad, overridden: output != nil)
                    }
                case .noProfile: return .use(.identity, taken: say)
                case let .broken(_, problem):
                    StatusOutput.say(
                        .profileKept, "\(problem); \(controller.name) [\(controller.fingerprint)] keeps its profile",
                        ["pad": .string(controller.fingerprint.rawValue)])
                    return .keep
                }
            },
            refused: kept, watched: .directory(path: directory.path))
    }

    /// A reloaded profile that asks for another virtual pad than the bridge shows: the pad stays (games keep their
    /// player slot), and the new one comes when remap starts again. Nothing is said under --as, which decides.
    static func sayVirtualPadStays(_ bridge: RemapBridge, asked: VirtualPadChoice?, overridden: Bool) {
        guard !overridden, let asked, asked.kind != bridge.kind else { return }
        StatusOutput.say(
            .virtualPadKept,
            "the profile for \(bridge.fingerprint) now asks for \(asked.name); its virtual pad stays "
                + "\(bridge.kind?.rawValue ?? "none") until remap starts again",
            ["pad": .string(bridge.fingerprint.rawValue), "asked": .string(asked.name)])
    }
}
