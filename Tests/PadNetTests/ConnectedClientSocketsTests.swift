@testable import PadLinux
import PadLinuxTestSupport
import PadNet
import PadNetLinux
import Testing

/// A paired client's own socket on the host's port, on 127.0.0.1: its datagrams are queued and read apart from a
/// flood's.
@Suite("ConnectedClientSockets on 127.0.0.1", .serialized)
struct ConnectedClientSocketsTests {
    private static let loopbackAny = "127.0.0.1:0"

    /// The listening socket's receive buffer filled with junk (more than any default buffer holds), then a datagram from
    /// a client with a socket of its own and one from a client without: the first is read at the loop's first turn,
    /// after at most one turn's share of junk; the second was dropped by the kernel with the junk.
    @Test func aClientsDatagramsAreQueuedAndReadApartFromAFlood() throws {
        let loop = try DeviceEventLoop()
        let any = try #require(try SocketAddress.resolve(Self.loopbackAny, defaultPort: 0, passive: true).first)
        let listening = try UDPSocket(bindingTo: any, loop: loop)
        let client = try UDPSocket(bindingTo: any, loop: loop)
        let stranger = try UDPSocket(bindingTo: any, loop: loop)
        let flooder = try UDPSocket(bindingTo: any, loop: loop)
        var delivered: [(bytes: [UInt8], path: DatagramPath)] = []
        let sockets = try ConnectedClientSockets(sharingPortOf: listening, logger: .init(label: "test")) { bytes, path in
            delivered.append((Array(bytes), path))
            if bytes.first == 0xAA || delivered.count > 100_000 { loop.stop() }
        }
        listening.onDatagram = { bytes, path in
            delivered.append((Array(bytes), path))
            if bytes.first == 0xAA || bytes.first == 0x01 || delivered.count > 100_000 { loop.stop() }
        }

        // The client is heard once on the listening socket (as its handshake is); then it gets its own socket.
        #expect(client.send([0x01], to: listening.localAddress))
        #expect(try loop.run(forAtMost: 5), "what the test waits for came")
        let path = try #require(delivered.last?.path)
        #expect(delivered.map(\.bytes) == [[0x01]] && path.remote == client.localAddress)
        sockets.follow([path])
        #expect(sockets.count == 1)
        delivered.removeAll()

        let junk = [UInt8](repeating: 0x55, count: 1_400)
        for _ in 0..<20_000 { flooder.send(junk, to: listening.localAddress) }
        #expect(stranger.send([0xBB] + junk.dropFirst(), to: listening.localAddress))
        #expect(client.send([0xAA], to: listening.localAddress))
        #expect(try loop.run(forAtMost: 5), "what the test waits for came")
        let mark = try #require(delivered.lastIndex { $0.bytes == [0xAA] }, "the client's datagram arrived")
        #expect(delivered[mark].path == path, "along the path the client was heard by")
        #expect(mark <= ConnectedClientSockets.listeningDatagramsPerTurn, "read after at most one turn's junk")
        let junkCount = delivered.count - 1
        #expect(junkCount > 0 && junkCount < 20_000, "the flood filled the listening socket")

        // The rest of the junk, up to a marker queued behind it (there is room again: some junk was read), then: the
        // stranger's datagram was dropped with it (the control: without a socket of its own the client's would have
        // been too).
        #expect(flooder.send([0xEE], to: listening.localAddress))
        listening.onDatagram = { bytes, path in
            delivered.append((Array(bytes), path))
            if bytes.first == 0xEE { loop.stop() }
        }
        #expect(try loop.run(forAtMost: 5), "what the test waits for came")
        #expect(delivered.last?.bytes == [0xEE], "the marker behind the junk came")
        #expect(!delivered.contains { $0.bytes.first == 0xBB }, "the kernel dropped the stranger's datagram with the junk")

        // A client no longer followed is heard on the listening socket again.
        sockets.follow([])
        #expect(sockets.count == 0)
        delivered.removeAll()
        listening.onDatagram = { bytes, path in
            delivered.append((Array(bytes), path))
            loop.stop()
        }
        #expect(client.send([0xCC], to: listening.localAddress))
        #expect(try loop.run(forAtMost: 5), "what the test waits for came")
        #expect(delivered.map(\.bytes) == [[0xCC]])
        sockets.close()
    }

    /// A client's datagrams still queued on the listening socket when its own socket is made are handed over before
    /// those that reach its own socket: in the order the client sent them (the host would take a stick value in an
    /// older datagram read after a newer one as superseded, and never show it).
    @Test func datagramsQueuedBeforeAClientsSocketWasMadeComeFirst() throws {
        let loop = try DeviceEventLoop()
        let any = try #require(try SocketAddress.resolve(Self.loopbackAny, defaultPort: 0, passive: true).first)
        let listening = try UDPSocket(bindingTo: any, loop: loop)
        let client = try UDPSocket(bindingTo: any, loop: loop)
        var delivered: [UInt8] = []
        var paths: Set<DatagramPath> = []
        let sockets = try ConnectedClientSockets(sharingPortOf: listening, logger: .init(label: "test")) { bytes, path in
            delivered.append(bytes[0])
            paths.insert(path)
            if bytes[0] == 7 || delivered.count > 20 { loop.stop() }
        }
        var waitingOnceMade: Int?
        listening.onDatagram = { bytes, path in
            delivered.append(bytes[0])
            paths.insert(path)
            if bytes[0] == 1 {
                // The client is confirmed by its first datagram: its socket is made while 2...5 are still queued on
                // the listening socket, and what it sends next goes to its own.
                sockets.follow([path])
                waitingOnceMade = sockets.waitingCount
                for byte: UInt8 in 6...7 { client.send([byte], to: listening.localAddress) }
            }
            if bytes[0] == 7 || delivered.count > 20 { loop.stop() }
        }
        for byte: UInt8 in 1...5 { #expect(client.send([byte], to: listening.localAddress)) }
        #expect(try loop.run(forAtMost: 5), "what the test waits for came")
        #expect(waitingOnceMade == 1, "the new socket waits for the listening socket's queue")
        #expect(delivered == Array(1...7), "in the order sent")
        #expect(paths.count == 1 && paths.first?.remote == client.localAddress, "along the one path")
        #expect(sockets.count == 1 && sockets.waitingCount == 0, "read once the queue before it was")
        sockets.close()
    }

    /// The turn that made a client's socket may read the listening socket's last datagram with its last share of the
    /// turn, so the turn does not find the queue empty and the listening socket is never readable again: the new
    /// socket must still be read (in the guest's motion test it never was: the host heard nothing more from the
    /// client, and its handshakes went unanswered).
    @Test func aSocketMadeWhenTheListeningTurnReadsTheLastDatagramIsRead() throws {
        let loop = try DeviceEventLoop()
        let any = try #require(try SocketAddress.resolve(Self.loopbackAny, defaultPort: 0, passive: true).first)
        let listening = try UDPSocket(bindingTo: any, loop: loop)
        let client = try UDPSocket(bindingTo: any, loop: loop)
        var delivered: [UInt8] = []
        let sockets = try ConnectedClientSockets(sharingPortOf: listening, logger: .init(label: "test")) { bytes, _ in
            delivered.append(bytes[0])
            if bytes[0] == 3 { loop.stop() }
        }
        listening.onDatagram = { bytes, path in
            delivered.append(bytes[0])
            if bytes[0] == 1 {
                sockets.follow([path])  // 2 is still queued: the socket waits for it
                client.send([3], to: listening.localAddress)
            }
        }
        // As many as the listening socket reads in a turn: the turn ends with its share, not with an empty read.
        for byte in 1...UInt8(ConnectedClientSockets.listeningDatagramsPerTurn) {
            #expect(client.send([byte], to: listening.localAddress))
        }
        #expect(try loop.run(forAtMost: 2), "what the test waits for came")
        #expect(delivered == [1, 2, 3], "the client's socket was read once the listening socket had handed 2 over")
        #expect(sockets.waitingCount == 0)
        sockets.close()
    }

    /// Sharing the port with clients' sockets does not let a second `serve` bind it.
    @Test func aSecondListenerStillCannotTakeThePort() throws {
        let loop = try DeviceEventLoop()
        let any = try #require(try SocketAddress.resolve(Self.loopbackAny, defaultPort: 0, passive: true).first)
        let listening = try UDPSocket(bindingTo: any, loop: loop)
        let sockets = try ConnectedClientSockets(sharingPortOf: listening, logger: .init(label: "test")) { _, _ in }
        let taken = try #require(
            try SocketAddress.resolve("127.0.0.1:\(listening.localAddress.port)", defaultPort: 0).first)
        #expect(throws: LinkSocketError.self) { try UDPSocket(bindingTo: taken, loop: loop) }
        sockets.close()
    }
}
