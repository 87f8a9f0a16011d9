public import Logging
public import PadLinux

/// A socket of its own for each paired client on the host's port (`UDPSocket.init(connectedTo:sharingPortOf:local:)`),
/// so that the kernel queues a client's datagrams apart from everyone else's: a flood of junk that fills the listening
/// socket's receive buffer makes the kernel drop junk (and first handshakes), never the datagrams of a client whose
/// session is running. The listening socket is read a few datagrams per turn of the loop, so the clients' sockets are
/// read between them whatever it holds.
///
/// Only clients that authenticated a datagram of a confirmed session get a socket (`ForwardingHost`'s
/// `onClientPathsChanged`): someone without a paired key cannot make the host open any. A client that moves (another
/// address or port) is heard on the listening socket again, and its socket follows it. Loop-confined.
public final class ConnectedClientSockets {
    /// Sockets beyond this many are not made (their clients stay on the listening socket, as before).
    public static let maximumSockets = 64
    /// How many datagrams the listening socket reads per turn once it shares its port.
    public static let listeningDatagramsPerTurn = 2

    private let listening: UDPSocket
    private let logger: Logger
    private let onDatagram: (UnsafeRawBufferPointer, DatagramPath) -> Void
    private var sockets: [DatagramPath: UDPSocket] = [:]

    /// Sockets sharing `listening`'s port; their datagrams go to `onDatagram` as the listening socket's do.
    public init(
        sharingPortOf listening: UDPSocket, logger: Logger,
        onDatagram: @escaping (UnsafeRawBufferPointer, DatagramPath) -> Void
    ) throws(LinkSocketError) {
        try listening.allowConnectedSocketsOnItsPort()
        listening.maximumDatagramsPerWake = Self.listeningDatagramsPerTurn
        self.listening = listening
        self.logger = logger
        self.onDatagram = onDatagram
    }

    /// The paths clients are heard along now: a socket for each new one, closed for each gone.
    public func follow(_ paths: Set<DatagramPath>) {
        for (path, socket) in sockets where !paths.contains(path) {
            socket.close()
            sockets[path] = nil
        }
        for path in paths where sockets[path] == nil {
            guard sockets.count < Self.maximumSockets else { break }
            do {
                let socket = try UDPSocket(connectedTo: path.remote, sharingPortOf: listening, local: path.local)
                let onDatagram = self.onDatagram
                // Its datagrams come along the path the client was heard by (the local address it was bound to).
                socket.onDatagram = { bytes, _ in onDatagram(bytes, path) }
                sockets[path] = socket
            } catch {
                logger.notice("\(error); \(path.remote)'s datagrams share the listening socket's queue")
            }
        }
    }

    /// The sockets open now (for tests and status).
    public var count: Int { sockets.count }

    /// Closes every client's socket. Idempotent.
    public func close() {
        for socket in sockets.values { socket.close() }
        sockets.removeAll()
    }
}
