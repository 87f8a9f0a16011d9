public import PadNet
public import Logging
import PadLinux

/// A socket of its own for each paired client on the host's port (`UDPSocket.init(connectedTo:sharingPortOf:local:)`),
/// so that the kernel queues a client's datagrams apart from everyone else's: a flood of junk that fills the listening
/// socket's receive buffer makes the kernel drop junk (and first handshakes), never the datagrams of a client whose
/// session is running. The listening socket is read a few datagrams per turn of the loop, so the clients' sockets are
/// read between them whatever it holds.
///
/// Only clients that authenticated a datagram of a confirmed session get a socket (`ForwardingHost`'s
/// `onClientPathsChanged`): someone without a paired key cannot make the host open any. A client that moves (another
/// address or port) is heard on the listening socket again, and its socket follows it.
///
/// A client's datagrams are handed over in the order they came. Those that reached the port before its socket was
/// made are still in the listening socket's queue, and that socket is read a few at a time: a client socket read
/// at once would hand over newer ones first, and the host would take a stick value in an older one, arriving after,
/// as superseded (never shown). So a new socket is read only once the listening socket has been read empty, or has
/// read `listeningDatagramsBeforeHandover` more datagrams (a flood that never lets it empty: order is then given up
/// for whatever was still behind the junk). Loop-confined.
public final class ConnectedClientSockets {
    /// Sockets beyond this many are not made (their clients stay on the listening socket, as before).
    public static let maximumSockets = 64
    /// How many datagrams the listening socket reads per turn once it shares its port.
    public static let listeningDatagramsPerTurn = 2
    /// A new client's socket is read at the latest after the listening socket read this many more datagrams: more
    /// than its queue holds at the default buffer size (212,992 bytes, at least 768 a datagram as the kernel counts
    /// them: about 280).
    public static let listeningDatagramsBeforeHandover: UInt64 = 1_024

    private let listening: UDPSocket
    private let logger: Logger
    private let onDatagram: (UnsafeRawBufferPointer, DatagramPath) -> Void
    private var sockets: [DatagramPath: UDPSocket] = [:]
    /// Sockets not read yet, and how many datagrams the listening socket had read when each was made.
    private var waiting: [DatagramPath: UInt64] = [:]

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
        listening.onTurnEnded = { [weak self] drained in self?.listeningTurnEnded(drained: drained) }
    }

    /// The paths clients are heard along now: a socket for each new one, closed for each gone.
    public func follow(_ paths: Set<DatagramPath>) {
        for (path, socket) in sockets where !paths.contains(path) {
            socket.close()
            sockets[path] = nil
            waiting[path] = nil
        }
        for path in paths where sockets[path] == nil {
            guard sockets.count < Self.maximumSockets else { break }
            do {
                let socket = try UDPSocket(
                    connectedTo: path.remote, sharingPortOf: listening, local: path.local, readingNow: false)
                let onDatagram = self.onDatagram
                // Its datagrams come along the path the client was heard by (the local address it was bound to).
                // One from elsewhere can only have come between the socket's bind and its connect: it goes as what
                // it is.
                socket.onDatagram = { bytes, from in onDatagram(bytes, from.remote == path.remote ? path : from) }
                // Looked at once the socket is connected, not before: a datagram that reached the port until then is
                // in the listening socket's queue, every later one in this socket's. (Looked at before, one that came
                // while the socket was being made was overtaken by the next, read at once from the new socket: a
                // returning client's stick value taken as superseded, seen once in the kernel suite.)
                if listening.hasQueuedDatagram {
                    waiting[path] = listening.datagramsRead
                    listening.maximumDatagramsPerWake = UDPSocket.datagramsPerWake  // catches up sooner
                } else {
                    try socket.startReading()
                }
                sockets[path] = socket
            } catch {
                logger.notice("\(error); \(path.remote)'s datagrams share the listening socket's queue")
            }
        }
    }

    /// Starts reading the sockets whose clients' earlier datagrams the listening socket has handed over by now.
    private func listeningTurnEnded(drained: Bool) {
        guard !waiting.isEmpty else { return }
        // A turn that ended with its share may have taken the last datagram: then the listening socket is not
        // readable again, and no later turn would say so.
        let empty = drained || !listening.hasQueuedDatagram
        for (path, readWhenMade) in waiting
        where empty || listening.datagramsRead &- readWhenMade >= Self.listeningDatagramsBeforeHandover {
            waiting[path] = nil
            do {
                try sockets[path]?.startReading()
            } catch {
                sockets[path] = nil  // closed: the client is heard on the listening socket again
                logger.notice("\(error); \(path.remote)'s datagrams share the listening socket's queue")
            }
        }
        if waiting.isEmpty { listening.maximumDatagramsPerWake = Self.listeningDatagramsPerTurn }
    }

    /// Client sockets made but not read yet (the listening socket still holds datagrams from before them).
    public var waitingCount: Int { waiting.count }

    /// The sockets open now (for tests and status).
    public var count: Int { sockets.count }

    /// Closes every client's socket. Idempotent.
    public func close() {
        for socket in sockets.values { socket.close() }
        sockets.removeAll()
        waiting.removeAll()
    }
}
