import PadNet
import Glibc
import Logging
import PadCore
import PadLinux
import SystemPackage

/// `serve`'s control socket (`HostControlRequest`): answers from serve's own loop, and tells subscribers when what
/// `status` shows changed (at most once per `eventIntervalMilliseconds`), and `live` subscribers when a pad changed
/// (at most once per `liveIntervalMilliseconds`, and once a second for the link figures). Loop-confined.
final class ServeControl {
    /// What serve lends the control socket: its state, read when asked, and the few things it may change.
    struct Serve {
        var status: () -> HostStatus
        var clients: () -> [HostClientStatus]
        /// Each forwarded pad now, and the clients' link figures (reading it re-arms the host's change signal).
        var live: () -> HostLiveState
        /// Removes the client from paired-clients and ends its session; returns its name and key.
        var revoke: (String) throws -> (name: String, key: String)
        var openPairing: () -> PairingWindowStatus
        var closePairing: () -> PairingWindowStatus
    }

    static let eventIntervalMilliseconds: UInt64 = 100
    /// At most 60 `live` events a second per subscriber (17 ms: 58.8).
    static let liveIntervalMilliseconds: UInt64 = 17
    /// While nothing changes, `live` subscribers still hear the link figures this often.
    static let liveHeartbeatMilliseconds: UInt64 = 1_000

    let server: ControlSocketServer
    private let serve: Serve
    private let loop: DeviceEventLoop
    private var eventDue: LoopDeadline?
    private var liveDue: LoopDeadline?
    private var liveHeartbeat: LoopDeadline?
    private var lastLiveSent = MonotonicInstant(nanoseconds: 0)

    /// Listens at `path` (its directory made, 0700, when missing: a directory that cannot be made is the error, not
    /// the bind that fails after it); the socket file is 0600. See `isAllowed`.
    init(path: String, serve: Serve, loop: DeviceEventLoop, logger: Logger) throws {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty { try TextFile.makeDirectories(directory, permissions: .ownerReadWriteExecute) }
        self.serve = serve
        self.loop = loop
        var handle: ((Substring, ControlConnection) -> Void)?
        server = try ControlSocketServer(
            path: path, mode: 0o600, loop: loop, logger: logger, isAllowed: Self.isAllowed, onLine: { line, connection in handle?(line, connection) })
        handle = { [unowned self] line, connection in self.answer(line, on: connection) }
    }

    func close() {
        eventDue?.cancel()
        liveDue?.cancel()
        liveHeartbeat?.cancel()
        server.close()
    }

    /// Root and serve's own user only (SO_PEERCRED's record of who connected). Never by group: a process's group
    /// is whatever it switched to (`sg GROUP`, a setgid program), so a member of serve's group (for the system
    /// service, anyone given `/dev/uhid`) could open pairing and revoke clients. The socket file is 0600 as well.
    static func isAllowed(_ peer: ControlSocketServer.Peer) -> Bool {
        isAllowed(peer, serveUID: geteuid())
    }

    static func isAllowed(_ peer: ControlSocketServer.Peer, serveUID: uid_t) -> Bool {
        peer.uid == 0 || peer.uid == serveUID
    }

    /// Something `status` shows changed: subscribers hear it once the interval since the last event has passed.
    func statusChanged() {
        guard eventDue == nil, server.openConnections.contains(where: { !$0.subscriptions.isEmpty }) else { return }
        eventDue = loop.deadline(afterMilliseconds: Self.eventIntervalMilliseconds) { [weak self] in
            guard let self else { return }
            self.eventDue = nil
            let line = HostControlReply.event("status", self.serve.status())
            for connection in self.server.openConnections where connection.subscriptions.contains(HostControlEvent.status.rawValue) {
                connection.send(line)  // one that cannot take it now is dropped
            }
        }
    }

    private var liveSubscribers: [ControlConnection] {
        server.openConnections.filter { $0.subscriptions.contains(HostControlEvent.live.rawValue) }
    }

    /// A forwarded pad's state or feedback changed (`ForwardingHost.onLivePadsChanged`): `live` subscribers hear it
    /// at the next turn, or once `liveIntervalMilliseconds` have passed since the last `live` event.
    func livePadsChanged() {
        guard liveDue == nil, !liveSubscribers.isEmpty else { return }
        let sinceLast = (MonotonicInstant.now().nanoseconds &- lastLiveSent.nanoseconds) / 1_000_000
        let wait = sinceLast >= Self.liveIntervalMilliseconds ? 0 : Self.liveIntervalMilliseconds - sinceLast
        liveDue = loop.deadline(afterMilliseconds: wait) { [weak self] in
            guard let self else { return }
            self.liveDue = nil
            self.sendLive()
        }
    }

    private func sendLive() {
        let subscribers = liveSubscribers
        guard !subscribers.isEmpty else {
            liveHeartbeat?.cancel()
            liveHeartbeat = nil
            return
        }
        lastLiveSent = MonotonicInstant.now()
        let line = HostControlReply.event(HostControlEvent.live.rawValue, serve.live())
        for connection in subscribers { connection.send(line) }  // one that cannot take it now is dropped
    }

    private func answer(_ line: Substring, on connection: ControlConnection) {
        let (id, parsed) = HostControlRequest.parse(line)
        let request: HostControlRequest
        switch parsed {
        case let .success(value): request = value
        case let .failure(error):
            connection.send(HostControlReply.failure(id: id, error))
            connection.close()
            return
        }
        switch request {
        case .status:
            connection.send(HostControlReply.success(id: id, "status", serve.status()))
        case .clients:
            connection.send(HostControlReply.success(id: id, "clients", serve.clients()))
        case let .revoke(client):
            do {
                let revoked = try serve.revoke(client)
                connection.send(HostControlReply.success(id: id, "revoked", ["name": revoked.name, "key": revoked.key]))
                statusChanged()
            } catch {
                connection.send(HostControlReply.failure(id: id, HostControlError("\(error)")))
            }
        case .openPairing:
            connection.send(HostControlReply.success(id: id, "pairing", serve.openPairing()))
            statusChanged()
        case .closePairing:
            connection.send(HostControlReply.success(id: id, "pairing", serve.closePairing()))
            statusChanged()
        case let .subscribe(events):
            connection.subscriptions.formUnion(events.map(\.rawValue))
            connection.send(HostControlReply.success(id: id, "status", serve.status()))
            if events.contains(.live) {
                connection.send(HostControlReply.event(HostControlEvent.live.rawValue, serve.live()))
                if liveHeartbeat == nil {
                    liveHeartbeat = loop.repeating(everyMilliseconds: Self.liveHeartbeatMilliseconds) { [weak self] in
                        self?.sendLive()
                    }
                }
            }
        }
    }
}
