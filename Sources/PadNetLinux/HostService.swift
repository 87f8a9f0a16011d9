public import PadNet
public import Logging
public import PadCore
public import PadLinux
import PadSessions

/// The announcement on the LAN as `HostService` drives it (in production PadDNSSD's `HostAnnouncementThread`, wired in
/// the CLI): its TXT records follow the pairing window.
public protocol HostAnnouncing: AnyObject {
    func update(_ record: HostAnnouncementRecord)
    func close()
}

/// What the announcer says back.
public enum HostAnnouncementChange: Sendable, Hashable {
    case announced(name: String)
    /// Another host on the LAN has `from`: announced as `to`.
    case renamed(from: String, to: String)
    case notAnnounced(problem: String)
}

/// Starts announcing `name` on `port` with `record`; the changes come back through the handler, on the loop.
public typealias HostAnnouncerMaker =
    (_ name: String, _ port: UInt16, _ record: HostAnnouncementRecord,
     _ onChange: @escaping (HostAnnouncementChange) -> Void) throws -> any HostAnnouncing

/// The control socket could not listen: serve must not run without it (whoever holds the path would answer
/// `status`, `revoke` and `pairing-window`).
public struct HostControlSocketUnavailable: Error, CustomStringConvertible {
    public let path: String
    public let cause: any Error
    public var description: String { "cannot listen on the control socket \(path): \(cause)" }
}

/// What `padbridge serve` runs: the listening socket, the forwarding host, pairing (its window, the datagrams, the
/// clients it accepts into paired-clients), the announcement's records, the control socket, and the watches on the
/// trust files. Everything it has to say comes out as `Event`s, which the command prints. Loop-confined; the loop is
/// run by its caller. Linux parts: the `DeviceEventLoop`, `FileChangeWatch`, `SetupInspection`, the control socket.
public final class HostService {
    public struct Configuration: Sendable {
        /// Address and port to listen on; nil: every address (IPv6 and IPv4; IPv4 alone without IPv6).
        public var listen: String?
        /// The control socket; nil: one per config directory under `runtimeDirectory` (or /run/padbridge-serve).
        public var controlSocketPath: String?
        public var runtimeDirectory: String?
        /// The name clients know this host by, and it is announced as.
        public var hostName: String
        /// False: not announced on the LAN (--no-announce).
        public var announce: Bool
        /// A pairing window opens at start.
        public var openPairingAtStart: Bool
        public var forwarding: ForwardingHost.Options
        /// Where to serve the virtual pads over DSU too (`--dsu`); nil: not at all.
        public var dsuAddress: SocketAddress?

        public init(
            listen: String?, controlSocketPath: String?, runtimeDirectory: String?, hostName: String, announce: Bool,
            openPairingAtStart: Bool, forwarding: ForwardingHost.Options, dsuAddress: SocketAddress? = nil
        ) {
            self.listen = listen
            self.controlSocketPath = controlSocketPath
            self.runtimeDirectory = runtimeDirectory
            self.hostName = hostName
            self.announce = announce
            self.openPairingAtStart = openPairingAtStart
            self.forwarding = forwarding
            self.dsuAddress = dsuAddress
        }
    }

    /// Who opened a pairing window.
    public enum PairingWindowOpener: Sendable, Hashable {
        case start
        /// `padbridge pairing-window` without a control socket: the request file in the config directory.
        case pairingWindowCommand
        case controlSocket
    }

    public enum Event {
        /// Listening on IPv4 only: the kernel has no IPv6.
        case ipv6Unavailable
        case listening(SocketAddress, hostKey: LinkPublicKey)
        /// Virtual pads that need this node cannot be made (doctor's finding and fix).
        case virtualDeviceUnusable(SetupFinding)
        case pairingWindowOpened(PairingCode, by: PairingWindowOpener)
        /// Closed on the control socket.
        case pairingWindowClosed
        /// Not announced, by choice or by where it listens (no Avahi asked).
        case notAnnouncedBecause(String)
        case announced(name: String, port: UInt16)
        case announcedRenamed(from: String, to: String)
        /// Avahi cannot announce it (said once per problem): it serves all the same.
        case notAnnounced(problem: String)
        case controlSocketListening(path: String)
        case forwarding(ForwardingHost.Event)
        case pairing(HostPairing.Event)
        /// Serving the virtual pads over DSU on this address (`Configuration.dsuAddress`).
        case dsuListening(SocketAddress)
        /// A hosted pad (by its identity seed) took this DSU slot, or none: all four are taken.
        case dsuSlot(Int?, seed: String)
        case dsu(DSUServer.Event)
    }

    public let store: TrustStore
    public let hostKey: LinkPublicKey
    public let configuration: Configuration
    private let socket: UDPSocket
    private let host: ForwardingHost
    private let loop: DeviceEventLoop
    private let inspection: SetupInspection
    private let onEvent: (Event) -> Void
    private let started = MonotonicInstant.now()
    private var pairing: HostPairing
    private var announcer: (any HostAnnouncing)?
    private let dsu: DSUHostedPads?
    /// "announced on the LAN as ...", or why not (`status`).
    private var announcement: String
    private var lastAnnouncementProblem: String?
    private let windowEnds: LoopTimer
    private var pairingRequests: FileChangeWatch?
    private var pairedClientsWatch: FileChangeWatch?
    private var control: ServeControl?
    private var ending: ReleaseThenStop?
    private let owner: OwnerReference<HostService>

    /// Starts serving on `loop` (run by the caller) from `store`'s identity: events (the first ones before this
    /// returns) go to `onEvent`. `makeAnnouncer` nil: never announced.
    public init(
        configuration: Configuration, store: TrustStore, loop: DeviceEventLoop, logger: Logger,
        makeAnnouncer: HostAnnouncerMaker?, onEvent: @escaping (Event) -> Void
    ) throws {
        let identity = try store.identity()
        let hostKey = LinkPublicKey(identity.publicKey)
        let socket = try Self.listeningSocket(configuration.listen, loop: loop) { onEvent(.ipv6Unavailable) }
        let owner = OwnerReference<HostService>()
        var pairing = HostPairing(responder: PairingResponder(identity: identity, hostName: configuration.hostName))
        var announcer: (any HostAnnouncing)?
        var dsu: DSUHostedPads?
        let pairingRequests: FileChangeWatch
        let windowEnds = loop.makeTimer { owner.target?.announceTheWindow() }
        let host: ForwardingHost
        do {
            onEvent(.listening(socket.localAddress, hostKey: hostKey))
            // What clients' pads need: said now, not when the first one fails.
            let inspection = SetupInspection(facts: LiveSystemFacts())
            for finding in inspection.virtualDeviceNodes() where finding.severity != .ok {
                onEvent(.virtualDeviceUnusable(finding))
            }
            self.inspection = inspection
            if configuration.openPairingAtStart {
                let code = LinkEndpointDefaults.newPairingCode()
                pairing.open(code, atMicroseconds: MonotonicInstant.now().microseconds)
                onEvent(.pairingWindowOpened(code, by: .start))
            }
            var announcement = configuration.announce ? "not announced yet" : "not announced (--no-announce)"
            func record() -> HostAnnouncementRecord {
                HostAnnouncementRecord(
                    fingerprint: hostKey.keyFingerprint, pairingOpen: pairing.isOpen(atMicroseconds: MonotonicInstant.now().microseconds))
            }
            if let reason = Self.notAnnouncedReason(announce: configuration.announce, listen: socket.localAddress) {
                announcement = "not announced: \(reason)"
                onEvent(.notAnnouncedBecause(reason))
            } else if let makeAnnouncer {
                do {
                    announcer = try makeAnnouncer(configuration.hostName, socket.localAddress.port, record()) { change in
                        owner.target?.announcementChanged(change)
                    }
                } catch {
                    announcement = "not announced: \(error)"
                    onEvent(.notAnnounced(problem: "\(error)"))
                }
                announcer?.update(record())
                if let window = pairing.window, pairing.isOpen(atMicroseconds: MonotonicInstant.now().microseconds) {
                    windowEnds.schedule(at: MonotonicInstant(microseconds: window.expiresAtMicroseconds))
                }
            }
            self.announcement = announcement
            // `padbridge pairing-window` (another process, same config directory) opens a window without a restart.
            pairingRequests = try FileChangeWatch(path: store.pairingRequestPath, loop: loop) {
                owner.target?.takePairingRequest()
            }
            if let address = configuration.dsuAddress {
                let server: DSUServer
                do {
                    server = try DSUServer(listeningOn: address, loop: loop, logger: logger) { event in onEvent(.dsu(event)) }
                } catch {
                    var named = error
                    named.listenOption = "--dsu-listen"
                    throw named
                }
                dsu = DSUHostedPads(server: server) { slot, seed in onEvent(.dsuSlot(slot, seed: seed)) }
                onEvent(.dsuListening(server.localAddress))
            }
            host = ForwardingHost(
                socket: socket, identity: identity, store: store, options: configuration.forwarding, dsu: dsu,
                loop: loop, logger: logger
            ) { event in
                onEvent(.forwarding(event))
                owner.target?.control?.statusChanged()
            }
        } catch {
            windowEnds.close()
            announcer?.close()
            dsu?.close()
            socket.close()
            throw error
        }
        self.configuration = configuration
        self.store = store
        self.hostKey = hostKey
        self.socket = socket
        self.host = host
        self.loop = loop
        self.onEvent = onEvent
        self.pairing = pairing
        self.announcer = announcer
        self.dsu = dsu
        self.windowEnds = windowEnds
        self.pairingRequests = pairingRequests
        self.owner = owner
        owner.target = self

        do {
            try startControlSocket(logger: logger)
            // Deleting a client's line in paired-clients revokes it at once (its session ends).
            pairedClientsWatch = try FileChangeWatch(path: store.pairedClientsPath, loop: loop) {
                owner.target?.host.reloadPairedClients()
            }
        } catch {
            close()
            throw error
        }
        ending = ReleaseThenStop(loop: loop) {
            host.releaseAll()
            return true
        }
        host.onOtherDatagram = { bytes, path in
            guard let datagram = PairingDatagram(bytes) else { return }
            owner.target?.receivePairing(datagram, along: path)
        }
    }

    deinit { owner.target = nil }

    /// The control socket's path: the configuration's, else the one for this config directory.
    public var controlSocketPath: String {
        configuration.controlSocketPath
            ?? HostControlSocketPath.path(configDirectory: store.directory, runtimeDirectory: configuration.runtimeDirectory)
    }

    /// Releases every input (the virtual pads show it), then stops the loop (SIGINT, SIGTERM).
    public func requestShutdown() {
        if let ending { ending.request() } else { loop.stop() }
    }

    /// Closes everything: the watches, the control socket, the host (its virtual pads destroyed), the announcement,
    /// the socket.
    public func close() {
        pairedClientsWatch?.cancel()
        pairedClientsWatch = nil
        control?.close()
        control = nil
        host.close()
        dsu?.close()
        pairingRequests?.cancel()
        pairingRequests = nil
        windowEnds.close()
        announcer?.close()
        announcer = nil
        socket.close()
    }

    /// What `status` shows.
    public func status() -> HostStatus {
        HostStatus(
            name: configuration.hostName, key: hostKey.fingerprint, listening: "\(socket.localAddress)",
            port: Int(socket.localAddress.port), announcement: announcement,
            uptimeSeconds: (MonotonicInstant.now().nanoseconds - started.nanoseconds) / 1_000_000_000,
            pairing: pairing.status(atMicroseconds: MonotonicInstant.now().microseconds),
            devices: inspection.virtualDeviceNodes().map {
                DeviceAccessStatus(path: $0.subject, usable: $0.severity == .ok, finding: $0.finding, fix: $0.fix)
            },
            clients: host.clientStatuses())
    }

    /// Opens a pairing window now (a new one-time code), as the control socket asks.
    @discardableResult
    public func openPairingWindow(by opener: PairingWindowOpener, code: PairingCode = LinkEndpointDefaults.newPairingCode())
        -> PairingWindowStatus
    {
        pairing.open(code, atMicroseconds: MonotonicInstant.now().microseconds)
        pairingChanged()
        onEvent(.pairingWindowOpened(code, by: opener))
        return pairing.status(atMicroseconds: MonotonicInstant.now().microseconds)
    }

    /// Why `serve` does not announce itself, before asking Avahi: asked not to, or listening on loopback only.
    public static func notAnnouncedReason(announce: Bool, listen: SocketAddress) -> String? {
        if !announce { return "--no-announce" }
        if listen.isLoopback {
            return "listening on \(listen), a loopback address, which only this machine reaches"
        }
        return nil
    }

    /// The socket `serve` listens on: `listen`, else every address (IPv6 and IPv4), else, on a kernel without IPv6
    /// (booted with ipv6.disable=1), every IPv4 address (`ipv6Unavailable` is called first).
    public static func listeningSocket(
        _ listen: String?, loop: DeviceEventLoop, ipv6Unavailable: () -> Void
    ) throws(LinkSocketError) -> UDPSocket {
        func bound(_ text: String) throws(LinkSocketError) -> UDPSocket {
            try UDPSocket(
                bindingTo: try SocketAddress.resolve(text, defaultPort: LinkEndpointDefaults.port, passive: true)[0],
                loop: loop)
        }
        if let listen { return try bound(listen) }
        do {
            return try bound("[::]")
        } catch .ipv6Unavailable {
            ipv6Unavailable()
        }
        return try bound("0.0.0.0")
    }

    private var announcedRecord: HostAnnouncementRecord {
        HostAnnouncementRecord(
            fingerprint: hostKey.keyFingerprint, pairingOpen: pairing.isOpen(atMicroseconds: MonotonicInstant.now().microseconds))
    }

    /// The window closed by itself (it expired): the records follow.
    private func announceTheWindow() { announcer?.update(announcedRecord) }

    /// The window opened, closed, paired or closed by wrong codes: the records follow, and they follow again when it
    /// expires.
    private func pairingChanged() {
        announcer?.update(announcedRecord)
        if let window = pairing.window, pairing.isOpen(atMicroseconds: MonotonicInstant.now().microseconds) {
            windowEnds.schedule(at: MonotonicInstant(microseconds: window.expiresAtMicroseconds))
        }
    }

    private func announcementChanged(_ change: HostAnnouncementChange) {
        switch change {
        case let .announced(name):
            lastAnnouncementProblem = nil
            announcement = "announced on the LAN as \"\(name)\""
            control?.statusChanged()
            onEvent(.announced(name: name, port: socket.localAddress.port))
        case let .renamed(from, to):
            announcement = "announced on the LAN as \"\(to)\" (\"\(from)\" was taken)"
            control?.statusChanged()
            onEvent(.announcedRenamed(from: from, to: to))
        case let .notAnnounced(problem):
            guard problem != lastAnnouncementProblem else { return }  // said once
            lastAnnouncementProblem = problem
            announcement = "not announced: \(problem)"
            control?.statusChanged()
            onEvent(.notAnnounced(problem: problem))
        }
    }

    private func takePairingRequest() {
        guard let code = store.takePairingRequest() else { return }
        pairing.open(code, atMicroseconds: MonotonicInstant.now().microseconds)
        pairingChanged()
        control?.statusChanged()
        onEvent(.pairingWindowOpened(code, by: .pairingWindowCommand))
    }

    private func receivePairing(_ datagram: PairingDatagram, along path: DatagramPath) {
        let store = self.store
        let handled = pairing.handle(datagram, from: path.remote, atMicroseconds: MonotonicInstant.now().microseconds) {
            client in try store.accept(client)
        }
        if handled.windowChanged {
            pairingChanged()
            control?.statusChanged()
        }
        if let reply = handled.reply { socket.send(reply, along: path) }
        if let event = handled.event { onEvent(.pairing(event)) }
    }

    private func startControlSocket(logger: Logger) throws {
        let path = controlSocketPath
        let owner = self.owner
        do {
            control = try ServeControl(
                path: path,
                serve: ServeControl.Serve(
                    status: { owner.target?.status() ?? HostStatus.gone },
                    clients: { owner.target?.host.clientStatuses() ?? [] },
                    live: {
                        guard let host = owner.target?.host else { return HostLiveState(pads: [], clients: []) }
                        return HostLiveState(pads: host.livePads(), clients: host.clientStatuses())
                    },
                    revoke: { client in
                        guard let service = owner.target else { throw HostControlError("serve is stopping") }
                        let revoked = try service.store.revoke(client)
                        service.host.reloadPairedClients()  // at once, not when the file watch fires
                        return (revoked.name, revoked.key.fingerprint)
                    },
                    openPairing: {
                        owner.target?.openPairingWindow(by: .controlSocket) ?? PairingWindowStatus(open: false)
                    },
                    closePairing: {
                        guard let service = owner.target else { return PairingWindowStatus(open: false) }
                        service.pairing.close()
                        service.pairingChanged()
                        service.onEvent(.pairingWindowClosed)
                        return service.pairing.status(atMicroseconds: MonotonicInstant.now().microseconds)
                    }),
                loop: loop, logger: logger)
        } catch {
            throw HostControlSocketUnavailable(path: path, cause: error)
        }
        onEvent(.controlSocketListening(path: path))
        host.onLivePadsChanged = { owner.target?.control?.livePadsChanged() }
    }
}

extension HostStatus {
    /// What a control socket that outlived its serve (never, while the loop runs) answers.
    static let gone = HostStatus(
        name: "", key: "", listening: "", port: 0, announcement: "stopping", uptimeSeconds: 0,
        pairing: PairingWindowStatus(open: false), devices: [], clients: [])
}
