public import Logging
public import PadCore
public import PadLinux

/// Hides the pads a command holds from this machine's other programs while it holds them, and gives them back (in
/// production the CLI's `BridgeHiding`, through padbridge's hiding service).
public protocol PadHiding: AnyObject {
    func hide(_ controller: Controller)
    func release(_ fingerprint: Fingerprint)
}

/// Where `remap`'s pads get their profiles: the command's policy (one --profile for every pad, or a profiles
/// directory), which also says what it chose. The service asks; it never reads a profile itself.
public struct RemapProfilePorts {
    /// What a reload changes for one bridge.
    public enum Reloaded {
        /// The bridge takes this profile; `taken` runs once it has (to say so).
        case use(RemapProfile, taken: () -> Void)
        /// The bridge keeps the profile it has (the new one is broken, or there is nothing to reload).
        case keep
    }

    /// What is watched for changes, which reload (after the burst of writes an editor makes), as SIGHUP does.
    public enum Watched {
        case file(path: String)
        /// The `.toml` files of a directory; one made later is read at the next SIGHUP.
        case directory(path: String)
        case nothing
    }

    /// The profile a pad starts with, read for the virtual pad `kind` says it gets given the profile's own `as`
    /// (`RemapProfile.virtualPad`). Throwing ends the command when the pads are first bridged (a broken --profile),
    /// and skips only that pad when one is plugged in later.
    public var starting: (Controller, _ kind: (VirtualPadChoice?) -> VirtualPadKind?) throws -> RemapProfile
    /// At a reload: what `bridge` (its pad, when present) takes.
    public var reloaded: (RemapBridge, Controller?) -> Reloaded
    /// Called when `bridge.use` refused the reloaded profile (it does not fit the virtual pad); the bridge keeps its own.
    public var refused: (RemapBridge, any Error) -> Void
    public var watched: Watched

    public init(
        starting: @escaping (Controller, _ kind: (VirtualPadChoice?) -> VirtualPadKind?) throws -> RemapProfile,
        reloaded: @escaping (RemapBridge, Controller?) -> Reloaded,
        refused: @escaping (RemapBridge, any Error) -> Void,
        watched: Watched
    ) {
        self.starting = starting
        self.reloaded = reloaded
        self.refused = refused
        self.watched = watched
    }
}

/// What `padbridge remap` runs once its pads and profile policy are known: a `RemapBridge` per pad (grabbed, hidden,
/// remapped, feedback going back), pads that come back picked up after each hotplug burst (with --all, new ones
/// bridged, in ID order; never a bridge's own virtual pad), the profiles reloaded when their files change or on
/// `reload()`, and the ending that releases every input before the virtual pads go. Its events, which the command
/// prints, say what happened. Loop-confined; the loop is run by its caller.
public final class RemapService {
    public struct Configuration {
        /// The pads chosen at start (with `bridgesNewPads`, in fingerprint order; maybe none).
        public var controllers: [Controller]
        /// --all: every pad plugged in later is bridged too (never one a bridge shows).
        public var bridgesNewPads: Bool
        /// The virtual pad `controller` gets (nil: none, the profile's keyboard and mouse only).
        /// The virtual pad for a pad whose profile asks for `choice` (its `as`; nil: nothing asked).
        public var virtualKind: (Controller, _ choice: VirtualPadChoice?) -> VirtualPadKind?
        public var profiles: RemapProfilePorts

        public init(
            controllers: [Controller], bridgesNewPads: Bool,
            virtualKind: @escaping (Controller, VirtualPadChoice?) -> VirtualPadKind?,
            profiles: RemapProfilePorts
        ) {
            self.controllers = controllers
            self.bridgesNewPads = bridgesNewPads
            self.virtualKind = virtualKind
            self.profiles = profiles
        }
    }

    public enum Event {
        /// No pad at start (--all): each one plugged in will be bridged.
        case noPadYet
        /// `bridge`'s virtual pad exists, with these nodes (`mac`: a virtual DualSense's).
        case ready(RemapBridge, kind: VirtualPadKind?, nodes: VirtualPadNodes, mac: String?)
        /// A pad plugged in later is bridged too (--all).
        case padAdded(Controller)
        /// A pad of --all could not be bridged (grabbed by another program, no access); tried again when pads next
        /// come or go. The others stay bridged.
        case cannotBridge(Controller, any Error)
    }

    public private(set) var bridges: [RemapBridge] = []
    private let configuration: Configuration
    private let hiding: any PadHiding
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let onEvent: (Event) -> Void
    private var relisting: HotplugRelisting?
    private var profileWatch: FileChangeWatch?
    private var reloadSoon: LoopDeadline?
    private var ending: ReleaseThenStop?
    /// When a pad that came back without all its nodes was first seen so.
    private var incompleteSince: [Fingerprint: MonotonicInstant] = [:]

    /// A pad back without all its nodes is taken as it is after this long.
    public static let incompleteGraceMilliseconds: UInt64 = 2000

    /// Watches `monitor` (made before the pads were listed, so a pad that comes back in between is not missed) and
    /// the profiles; bridges nothing yet (`start()`).
    public init(
        configuration: Configuration, monitor: UdevMonitor, sdlSource: ControllerCatalog.SDLSource, hiding: any PadHiding,
        loop: DeviceEventLoop, logger: Logger, onEvent: @escaping (Event) -> Void
    ) throws {
        self.configuration = configuration
        self.hiding = hiding
        self.loop = loop
        self.logger = logger
        self.onEvent = onEvent
        relisting = try HotplugRelisting(
            monitor: monitor, sdlSource: sdlSource, loop: loop, logger: logger,
            isWanted: { [weak self] in
                guard let self else { return false }
                return self.configuration.bridgesNewPads || self.bridges.contains(where: \.isWaitingForItsPad)
            },
            onListing: { [weak self] present in self?.listed(present) })
    }

    /// Bridges the pads chosen at start. With --all a pad that cannot be bridged is said and skipped; otherwise its
    /// error ends the command, as a broken --profile does.
    public func start() throws {
        if configuration.controllers.isEmpty { onEvent(.noPadYet) }
        for controller in configuration.controllers {
            if configuration.bridgesNewPads {
                do { try bridge(controller) } catch { onEvent(.cannotBridge(controller, error)) }
            } else {
                try bridge(controller)
            }
        }
        let reloadAfterTheBurst: () -> Void = { [weak self] in self?.reloadAfterTheBurst() }
        switch configuration.profiles.watched {
        case let .file(path): profileWatch = try FileChangeWatch(path: path, loop: loop, onChange: reloadAfterTheBurst)
        case let .directory(path):
            // A directory made later is read at the next SIGHUP (`systemctl --user reload padbridge-remap`).
            profileWatch = try? FileChangeWatch(
                directory: path, loop: loop, names: { $0.hasSuffix(".toml") }, onChange: reloadAfterTheBurst)
        case .nothing: break
        }
    }

    /// Reloads every bridge's profile (SIGHUP, a changed file), without touching the virtual pads.
    public func reload() {
        let profiles = configuration.profiles
        for bridge in bridges {
            let controller = bridge.controller
            switch profiles.reloaded(bridge, controller) {
            case .keep: continue
            case let .use(profile, taken):
                do {
                    try bridge.use(profile)
                    taken()
                } catch {
                    profiles.refused(bridge, error)
                }
            }
        }
    }

    /// Ends: forwarding stops before the virtual pads show the release (no later frame presses anything again), the
    /// release shows for a grace period, then the loop stops. Later requests change nothing.
    public func requestShutdown() {
        if ending == nil {
            ending = ReleaseThenStop(loop: loop) { [weak self] in
                self?.bridges.forEach { $0.releaseInputs() }
                return true
            }
        }
        ending?.request()
    }

    /// Stops watching and closes every bridge (virtual pads destroyed, grabs released). Idempotent.
    public func close() {
        relisting?.cancel()
        relisting = nil
        profileWatch?.cancel()
        profileWatch = nil
        reloadSoon?.cancel()
        reloadSoon = nil
        bridges.forEach { $0.close() }
    }

    // MARK: -

    private func bridge(_ controller: Controller) throws {
        let profile = try configuration.profiles.starting(controller) { [configuration] choice in
            configuration.virtualKind(controller, choice)
        }
        let kind = configuration.virtualKind(controller, profile.virtualPad)
        var made: RemapBridge?
        let bridge = try RemapBridge(controller: controller, as: kind, profile: profile, loop: loop, logger: logger) {
            [weak self] nodes, mac in
            guard let self, let made else { return }
            self.onEvent(.ready(made, kind: kind, nodes: nodes, mac: mac))
        }
        made = bridge
        bridges.append(bridge)
        // Grabbed now: the nodes are hidden from everyone else while the bridge holds them.
        hiding.hide(controller)
        bridge.onPadGone = { [hiding, fingerprint = controller.fingerprint] in hiding.release(fingerprint) }
        bridge.onPadBack = { [hiding] controller in hiding.hide(controller) }
    }

    /// After each hotplug burst: a pad that came back is taken once its listing is complete (every node it had, by
    /// role); one that stays incomplete is taken as it is after `incompleteGraceMilliseconds`. With --all, pads
    /// plugged in since are bridged too, in ID order; never a bridge's own virtual pad, never one bridged. Returns
    /// when to list again without a hotplug event.
    private func listed(_ present: [Controller]) -> UInt64? {
        let now = MonotonicInstant.now()
        var listAgainAfter: UInt64?
        for bridge in bridges where bridge.isWaitingForItsPad {
            let since = incompleteSince[bridge.fingerprint]
            let waitedLongEnough =
                since.map { now.nanoseconds - $0.nanoseconds >= Self.incompleteGraceMilliseconds * 1_000_000 } ?? false
            switch bridge.resume(from: present, acceptingIncomplete: waitedLongEnough) {
            case .incomplete(let missing):
                if since == nil {
                    incompleteSince[bridge.fingerprint] = now
                    logger.info("\(bridge.fingerprint) is back without its \(missing.joined(separator: ", ")); waiting for them")
                }
                listAgainAfter = Self.incompleteGraceMilliseconds
            case .resumed, .absent, .failed:
                incompleteSince[bridge.fingerprint] = nil
            }
        }
        if configuration.bridgesNewPads {
            let bridged = Set(bridges.map(\.fingerprint))
            for controller in present.sorted(by: { $0.fingerprint < $1.fingerprint })
            where !controller.isBridgeOutput && !bridged.contains(controller.fingerprint) {
                do {
                    try bridge(controller)
                    onEvent(.padAdded(controller))
                } catch {
                    onEvent(.cannotBridge(controller, error))
                }
            }
        }
        return listAgainAfter
    }

    private func reloadAfterTheBurst() {
        reloadSoon?.cancel()
        reloadSoon = loop.deadline(afterMilliseconds: 100) { [weak self] in
            self?.reloadSoon = nil
            self?.reload()
        }
    }
}
