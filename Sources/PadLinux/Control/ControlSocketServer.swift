import Glibc
public import Logging
import PadCore
import SystemPackage

/// A Unix stream socket that takes one request a line and answers from the loop that owns it (`padbridge serve`'s
/// control socket). Never blocks the loop: a connection is read when the loop says it is readable, and written
/// without waiting; a reader too slow to take what it is sent (its socket buffer full) is dropped, never waited
/// for. At most `maximumConnections` at once. Loop-confined.
public final class ControlSocketServer {
    /// Who connected, as the kernel recorded it (SO_PEERCRED).
    public struct Peer: Sendable, Hashable {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
    }

    public static let maximumConnections = 32

    public let path: String
    private var listener: UnixStreamSocket?
    private var listenerWatch: LoopWatch?
    private var connections: [ControlConnection] = []
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let isAllowed: (Peer) -> Bool
    private let onLine: (Substring, ControlConnection) -> Void

    /// Listens at `path` (mode `mode`; a socket left there by an earlier run is replaced). `isAllowed` decides, from
    /// the peer's credentials, whether a connection is served (a refused one is told so and closed); `onLine` gets
    /// each request line.
    public init(
        path: String, mode: UInt32 = 0o660, loop: DeviceEventLoop, logger: Logger, isAllowed: @escaping (Peer) -> Bool,
        onLine: @escaping (Substring, ControlConnection) -> Void
    ) throws(DeviceAccessError) {
        self.path = path
        self.loop = loop
        self.logger = logger
        self.isAllowed = isAllowed
        self.onLine = onLine
        let listener = try UnixStreamSocket.listening(at: path, mode: mode)
        listenerWatch = try loop.makeWatch(listener.descriptor, path: path) { [weak self] _ in self?.acceptAll() }
        self.listener = consume listener
    }

    /// Every connection now open.
    public var openConnections: [ControlConnection] { connections }

    /// Stops listening, closes every connection and removes the socket file. Idempotent.
    public func close() {
        guard listener != nil else { return }
        listenerWatch?.cancel()
        listenerWatch = nil
        listener = nil
        for connection in connections { connection.close() }
        connections = []
        unlink(path)
    }

    deinit { close() }

    private func acceptAll() {
        while let socket = listener?.accept() {
            guard let credentials = socket.peer() else { continue }
            let peer = Peer(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
            guard isAllowed(peer) else {
                logger.notice("control socket: refused a connection from uid \(peer.uid) (pid \(peer.pid))")
                _ = socket.send(#"{"ok":false,"error":"not allowed: run this as the user that runs serve, or root"}"# + "\n")
                continue
            }
            guard connections.count < Self.maximumConnections else {
                _ = socket.send(#"{"ok":false,"error":"too many connections to the control socket"}"# + "\n")
                continue
            }
            let connection = ControlConnection(socket: socket, peer: peer)
            connection.server = self
            do {
                connection.watch = try loop.makeWatch(connection.descriptor, path: "control connection") {
                    [weak self, weak connection] _ in
                    guard let self, let connection else { return }
                    self.read(connection)
                }
                connections.append(connection)
            } catch {
                logger.warning("control socket: cannot watch a connection: \(error)")
            }
        }
    }

    private func read(_ connection: ControlConnection) {
        while connection.isOpen {
            switch connection.receive() {
            case let .bytes(bytes, descriptors: _):
                for line in connection.lines.append(bytes) where connection.isOpen {
                    onLine(line, connection)
                }
                if connection.lines.overflowed {
                    _ = connection.send(#"{"ok":false,"error":"a request longer than 4096 bytes"}"#)
                    connection.close()
                }
            case .none:
                return
            case .closed:
                connection.close()
            }
        }
    }

    fileprivate func forget(_ connection: ControlConnection) {
        connection.watch?.cancel()
        connection.watch = nil
        connections.removeAll { $0 === connection }
    }
}

/// One client of a `ControlSocketServer`. Loop-confined.
public final class ControlConnection {
    public let peer: ControlSocketServer.Peer
    /// What the client asked to be sent as things change (free for the request handler's use).
    public var subscriptions: Set<String> = []
    private var socket: UnixStreamSocket?
    fileprivate var watch: LoopWatch?
    fileprivate var lines = StreamLines()
    fileprivate weak var server: ControlSocketServer?

    /// For registering with the loop only (the socket owns it).
    fileprivate let descriptor: FileDescriptor

    fileprivate init(socket: consuming UnixStreamSocket, peer: ControlSocketServer.Peer) {
        descriptor = socket.descriptor
        self.socket = consume socket
        self.peer = peer
    }

    public var isOpen: Bool { socket != nil }

    fileprivate func receive() -> UnixStreamSocket.Received {
        socket?.receive() ?? .closed
    }

    /// Sends `line` and a newline without waiting; a client whose socket cannot take it whole now (it does not read)
    /// is closed. Returns whether it was sent.
    @discardableResult
    public func send(_ line: String) -> Bool {
        guard isOpen else { return false }
        if socket?.send(line + "\n") == true { return true }
        close()
        return false
    }

    /// Closes the connection. Idempotent.
    public func close() {
        guard socket != nil else { return }
        server?.forget(self)
        socket = nil
    }
}
