public import Crypto
public import Logging
public import PadCore
public import PadLinux
public import PadNet
public import PadSessions

extension ForwardingHost {
    /// A host on `socket`'s datagrams, making real virtual pads on `loop` (served over DSU too, with `dsu`); a socket
    /// per confirmed client where the kernel allows one (`ConnectedClientSockets`), closed with the host.
    public convenience init(
        socket: UDPSocket, identity: Curve25519.KeyAgreement.PrivateKey, store: TrustStore, options: Options,
        dsu: DSUHostedPads? = nil, loop: DeviceEventLoop, logger: Logger, onEvent: @escaping (Event) -> Void
    ) {
        var tick: (() -> Void)?
        let timer = LoopWakeTimer(loop: loop) { tick?() }
        self.init(
            sender: socket, timer: timer, clocks: .following(loop), identity: identity, pairedClients: store,
            options: options, logger: logger, onEvent: onEvent,
            makePad: { kind, seed, onFeedback, onReady throws(VirtualPadCreationFailure) in
                do {
                    let pad = try VirtualPadSession(
                        kind: kind, seed: seed, loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
                    return dsu?.serving(pad, kind: kind, seed: seed) ?? pad
                } catch {
                    throw VirtualPadCreationFailure(error)
                }
            })
        tick = tickHandler
        socket.onDatagram = datagramHandler
        onDeinit = { [weak socket] in socket?.onDatagram = nil }
        do {
            let sockets = try ConnectedClientSockets(sharingPortOf: socket, logger: logger, onDatagram: datagramHandler)
            onClientPathsChanged = { [weak sockets] paths in sockets?.follow(paths) }
            onClose = { sockets.close() }
        } catch {
            logger.notice("\(error): every client's datagrams share the listening socket's queue")
        }
    }
}

extension ForwardingClient {
    /// A client forwarding `controllers` from `socket`, reading them as physical pads on `loop`; `opened` is given
    /// each pad's session as it is opened (a recorder's hooks).
    public convenience init(
        controllers: [Controller], host: SocketAddress, hostKey: LinkPublicKey,
        identity: Curve25519.KeyAgreement.PrivateKey, socket: UDPSocket, options: Options, loop: DeviceEventLoop,
        logger: Logger, opened: @escaping (PhysicalPadSession) -> Void = { _ in }, onEvent: @escaping (Event) -> Void
    ) throws {
        var tick: (() -> Void)?
        let timer = LoopWakeTimer(loop: loop) { tick?() }
        try self.init(
            controllers: controllers, host: host, hostKey: hostKey, identity: identity, sender: socket, timer: timer,
            clocks: .following(loop), options: options, logger: logger, onEvent: onEvent,
            makeSource: { controller, output in
                let target = (options.virtualKind ?? VirtualPadKind.defaultKind(for: controller.kind)).capabilities
                let session = try PhysicalPadSession(
                    controller: controller, profile: options.profile, target: target, grab: options.grab, loop: loop,
                    logger: logger, output: output)
                opened(session)
                return session
            })
        tick = tickHandler
        socket.onDatagram = datagramHandler
        onDeinit = { [weak socket] in socket?.onDatagram = nil }
    }
}
