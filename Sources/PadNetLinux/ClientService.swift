public import PadNet
public import Crypto
public import Logging
public import PadCore
public import PadLinux
public import PadSessions

/// What `padbridge connect` runs once its host, pads and profile are known: its socket, the forwarding client (made
/// first, its events then handled here: no client referred to before it exists), hiding the forwarded pads, picking
/// up pads that come back (and, forwarding every pad, new ones) after each hotplug burst, and the statistics. Its
/// events, which the command prints, come with the address the client sends to. Loop-confined; the loop is run by its
/// caller. Linux parts: the `DeviceEventLoop`, the `UdevMonitor` and `HotplugRelisting`.
public final class ClientService {
    public struct Configuration {
        public var controllers: [Controller]
        /// --all: every pad plugged in later is forwarded too.
        public var forwardsNewPads: Bool
        public var host: SocketAddress
        public var hostKey: LinkPublicKey
        public var forwarding: ForwardingClient.Options
        /// --stats: the link's figures this often; nil: never.
        public var statisticsEveryMilliseconds: UInt64?

        public init(
            controllers: [Controller], forwardsNewPads: Bool, host: SocketAddress, hostKey: LinkPublicKey,
            forwarding: ForwardingClient.Options, statisticsEveryMilliseconds: UInt64?
        ) {
            self.controllers = controllers
            self.forwardsNewPads = forwardsNewPads
            self.host = host
            self.hostKey = hostKey
            self.forwarding = forwarding
            self.statisticsEveryMilliseconds = statisticsEveryMilliseconds
        }
    }

    public enum Event {
        /// The client's event; `hostAddress`: where it sends now.
        case forwarding(ForwardingClient.Event, hostAddress: SocketAddress)
        /// The link's figures now and at the previous report (`statisticsEveryMilliseconds` apart).
        case statistics(ForwardingClient.Statistics, previous: ForwardingClient.Statistics)
    }

    public let client: ForwardingClient
    /// Ended by the host (taken over by another connect, or revoked): the loop was stopped.
    public private(set) var endedByHost = false
    private let socket: UDPSocket
    private let loop: DeviceEventLoop
    private let hiding: (any PadHiding)?
    private let onEvent: (Event) -> Void
    /// The pads of the latest listing: where a pad that came back, or joined, is found with its nodes.
    private var listed: [Controller]
    private var pending: [ForwardingClient.Event] = []
    private var relisting: HotplugRelisting?
    private var statisticsTimer: LoopDeadline?
    private let owner: OwnerReference<ClientService>
    /// Each forwarded pad's session, as the client opened it (for a recorder's hooks).
    private let openedPads: OpenedPadSessions

    /// The session reading the forwarded pad with this ID; nil before it is opened.
    public func physicalPad(_ fingerprint: Fingerprint) -> PhysicalPadSession? {
        openedPads.byFingerprint[fingerprint]
    }

    /// Forwards `configuration.controllers` to the host; events go to `onEvent` once this returns (the client's, if
    /// any came while it was made, first). `monitor` was receiving hotplug events before the pads were listed; pads
    /// are listed again through `sdlSource`.
    public init(
        configuration: Configuration, identity: Curve25519.KeyAgreement.PrivateKey, monitor: UdevMonitor,
        sdlSource: ControllerCatalog.SDLSource, hiding: (any PadHiding)?, loop: DeviceEventLoop, logger: Logger, onEvent: @escaping (Event) -> Void
    ) throws {
        let owner = OwnerReference<ClientService>()
        let socket = try UDPSocket(bindingTo: try SocketAddress.anyLocal(toReach: configuration.host), loop: loop)
        // Events the client says while it is made wait until this service holds it.
        let early = EarlyEvents()
        let openedPads = OpenedPadSessions()
        let client: ForwardingClient
        do {
            client = try ForwardingClient(
                controllers: configuration.controllers, host: configuration.host, hostKey: configuration.hostKey,
                identity: identity, socket: socket, options: configuration.forwarding, loop: loop, logger: logger,
                opened: { [openedPads] session in openedPads.byFingerprint[session.controller.fingerprint] = session }
            ) { event in
                if let service = owner.target { service.handle(event) } else { early.events.append(event) }
            }
        } catch {
            socket.close()
            throw error
        }
        self.client = client
        self.socket = socket
        self.openedPads = openedPads
        self.loop = loop
        self.hiding = hiding
        self.onEvent = onEvent
        self.listed = configuration.controllers
        self.owner = owner
        owner.target = self
        for event in early.events { handle(event) }

        let forwardsNewPads = configuration.forwardsNewPads
        // After each hotplug burst: pads that were unplugged and are back resume; with --all, new pads join.
        do {
            relisting = try HotplugRelisting(
                monitor: monitor, sdlSource: sdlSource, loop: loop, logger: logger,
                isWanted: { forwardsNewPads || client.isWaitingForAPad }
            ) { present in
                owner.target?.listed = present
                client.resume(from: present)
                if forwardsNewPads { client.addNewPads(from: present) }
                return nil
            }
        } catch {
            close()
            throw error
        }
        if let milliseconds = configuration.statisticsEveryMilliseconds {
            var previous = client.statistics
            statisticsTimer = loop.repeating(everyMilliseconds: milliseconds) {
                let now = client.statistics
                owner.target?.onEvent(.statistics(now, previous: previous))
                previous = now
            }
        }
    }

    deinit { owner.target = nil }

    /// Hides the pads forwarded now (after the command said what it forwards).
    public func hideForwardedPads() {
        for controller in listed { hide(controller.fingerprint) }
    }

    /// Stops relisting and the statistics, closes the client (its pads released) and the socket.
    public func close() {
        relisting?.cancel()
        relisting = nil
        statisticsTimer?.cancel()
        statisticsTimer = nil
        client.close()
        openedPads.byFingerprint.removeAll()
        socket.close()
    }

    private func hide(_ fingerprint: Fingerprint) {
        if let hiding, let controller = listed.first(where: { $0.fingerprint == fingerprint }) { hiding.hide(controller) }
    }

    private func handle(_ event: ForwardingClient.Event) {
        switch event {
        case let .padDetached(id):
            hiding?.release(id)
            onEvent(.forwarding(event, hostAddress: client.hostAddress))
        case let .padBack(id), let .padAdded(id, _):
            onEvent(.forwarding(event, hostAddress: client.hostAddress))
            hide(id)
        case .revoked, .takenOver:
            endedByHost = true
            onEvent(.forwarding(event, hostAddress: client.hostAddress))
            loop.stop()
        case .connected, .linkLost, .reconnecting, .tooManyPads, .noAnswer, .padNotForwarded:
            onEvent(.forwarding(event, hostAddress: client.hostAddress))
        }
    }
}

/// The client's events said while it is being made (before its service holds it). Loop-confined.
private final class EarlyEvents {
    var events: [ForwardingClient.Event] = []
}

/// The pads' sessions by ID, filled as the client opens them (while it is made, and later with --all).
private final class OpenedPadSessions {
    var byFingerprint: [Fingerprint: PhysicalPadSession] = [:]
}
