import Crypto
import Glibc
import Logging
@testable import PadLinux
import PadLinuxTestSupport
@testable import PadNet
import PadNetLinux
import Testing

@Suite("UDPSocket on 127.0.0.1", .serialized)
struct UDPSocketTests {
    @Test func addressesParseWithAndWithoutPorts() throws {
        #expect(try SocketAddress.resolve("127.0.0.1", defaultPort: 48100).first?.description == "127.0.0.1:48100")
        #expect(try SocketAddress.resolve("127.0.0.1:9", defaultPort: 48100).first?.description == "127.0.0.1:9")
        #expect(try SocketAddress.resolve("[::1]:7", defaultPort: 48100).first?.description == "[::1]:7")
        #expect(try SocketAddress.resolve("::1", defaultPort: 5).first?.description == "[::1]:5")
        #expect(throws: LinkSocketError.badAddress("127.0.0.1:0")) { try SocketAddress.resolve("127.0.0.1:0", defaultPort: 1) }
        #expect(throws: LinkSocketError.badAddress("[::1")) { try SocketAddress.resolve("[::1", defaultPort: 1) }
    }

    /// Addresses compare and hash by their bytes (`==` compares the words they are kept in; a datagram's path is
    /// compared with its client's for every datagram).
    @Test func addressesAreEqualExactlyWhenTheirBytesAre() throws {
        func resolved(_ text: String) throws -> SocketAddress {
            try #require(try SocketAddress.resolve(text, defaultPort: 1).first)
        }
        let same = [try resolved("127.0.0.1:48100"), try resolved("127.0.0.1:48100")]
        #expect(same[0] == same[1] && same[0].hashValue == same[1].hashValue)
        let others = try ["127.0.0.1:48101", "127.0.0.2:48100", "[::1]:48100", "[::ffff:127.0.0.1]:48100"].map(resolved)
        for other in others { #expect(other != same[0], "\(other) differs from \(same[0])") }
        #expect(try resolved("[::1]:7") == resolved("[::1]:7"))
        #expect(try resolved("[::1]:7") != resolved("[::2]:7"), "a difference in the last bytes of an IPv6 address")
        // Bytes past the length are not the address's: two prefixes of the same bytes differ by length alone.
        let bytes: [UInt8] = Array(repeating: 0, count: 28)
        let short = bytes.withUnsafeBytes { SocketAddressBytes($0.baseAddress!, length: 16) }
        let long = bytes.withUnsafeBytes { SocketAddressBytes($0.baseAddress!, length: 28) }
        #expect(short != long)
        var garbage: [UInt8] = Array(repeating: 0xAA, count: 28)
        garbage.replaceSubrange(0..<16, with: bytes[0..<16])
        #expect(garbage.withUnsafeBytes { SocketAddressBytes($0.baseAddress!, length: 16) } == short,
                "what lies past the length in the source is not copied")
    }

    /// The host and the client call back through an unowned reference they clear in their deinit (not a weak one):
    /// one dropped while its socket lives must take no more of its datagrams, and a datagram that comes then is read
    /// and dropped, not handed to freed memory.
    @Test func aHostDroppedWhileItsSocketLivesTakesNoMoreDatagrams() throws {
        let loop = try DeviceEventLoop()
        let any = try #require(try SocketAddress.resolve("127.0.0.1:0", defaultPort: 0, passive: true).first)
        let listening = try UDPSocket(bindingTo: any, loop: loop)
        let sender = try UDPSocket(bindingTo: any, loop: loop)
        var template = Array("/tmp/padbridge-dropped-host-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        var host: ForwardingHost? = ForwardingHost(
            socket: listening, identity: Curve25519.KeyAgreement.PrivateKey(), store: TrustStore(directory: directory),
            options: .init(virtualKind: nil, maximumPads: 8, lingerMilliseconds: 1_000), loop: loop,
            logger: Logger(label: "dropped host"), onEvent: { _ in })
        weak let dropped = host
        #expect(listening.onDatagram != nil, "the host takes its socket's datagrams")
        host = nil
        #expect(dropped == nil, "nothing else keeps the host")
        #expect(listening.onDatagram == nil, "its deinit gave its socket's datagrams back")
        var turns = 0
        listening.onTurnEnded = { _ in
            turns += 1
            loop.stop()
        }
        // A transport-shaped datagram (0x03, an index, a counter, a tag): what a client's frame would look like.
        #expect(sender.send([0x03] + Array(repeating: 0x5A, count: 40), to: listening.localAddress))
        #expect(try loop.run(forAtMost: 5), "the datagram was read")
        #expect(turns == 1)
        listening.close()
        sender.close()
    }

    @Test func datagramsGoBothWaysThroughTheLoop() throws {
        let loop = try DeviceEventLoop()
        let any = try #require(try SocketAddress.resolve("127.0.0.1:0", defaultPort: 0, passive: true).first)
        let host = try UDPSocket(bindingTo: any, loop: loop)
        let client = try UDPSocket(bindingTo: any, loop: loop)
        #expect(host.localAddress.port != 0 && host.localAddress.port != client.localAddress.port)
        var received: [[UInt8]] = []
        var replies: [[UInt8]] = []
        host.onDatagram = { bytes, from in
            received.append(Array(bytes))
            #expect(from.remote == client.localAddress && from.local != nil, "the local address it came to")
            host.send(Array(bytes.reversed()), along: from)
        }
        client.onDatagram = { bytes, _ in
            replies.append(Array(bytes))
            if replies.count == 3 { loop.stop() }
        }
        for payload in [[1, 2, 3], [], [9]] as [[UInt8]] { #expect(client.send(payload, to: host.localAddress)) }
        #expect(try loop.run(forAtMost: 5), "what the test waits for came")
        #expect(received == [[1, 2, 3], [], [9]])
        #expect(replies == [[3, 2, 1], [], [9]])
        host.close()
        client.close()
        #expect(!client.send([1], to: host.localAddress), "a closed socket sends nothing")
    }

    /// A backlog (a host behind a burst of many clients' frames) is read a bounded batch per wake-up, so the loop's
    /// timers (the host's acknowledgements, its link-lost checks) run between batches. Before, one wake-up read the
    /// socket until it was empty: a backlog that kept coming kept every timer waiting, and a host working through
    /// it acknowledged nothing for over 400 ms, so its clients took the link for lost (seen in the many-pads test).
    @Test func aBacklogIsReadInBatchesWithTheTimersBetween() throws {
        let loop = try DeviceEventLoop()
        let any = try #require(try SocketAddress.resolve("127.0.0.1:0", defaultPort: 0, passive: true).first)
        let host = try UDPSocket(bindingTo: any, loop: loop)
        let client = try UDPSocket(bindingTo: any, loop: loop)
        let backlog = 200
        for index in 0..<backlog { #expect(client.send([UInt8(index & 0xFF)], to: host.localAddress)) }
        var received = 0
        var receivedWhenTheTimerFired: Int?
        let timer = loop.makeTimer {
            receivedWhenTheTimerFired = received
            if received == backlog { loop.stop() }
        }
        host.onDatagram = { _, _ in
            received += 1
            // Due from the first datagram's wake-up on: it fires once the batch it came in is over.
            if received == 1 { timer.schedule(at: loop.now) }
            if received == backlog, receivedWhenTheTimerFired != nil { loop.stop() }
        }
        #expect(try loop.run(forAtMost: 5), "what the test waits for came")
        timer.close()
        #expect(received == backlog)
        let fired = try #require(receivedWhenTheTimerFired)
        #expect(fired <= UDPSocket.datagramsPerWake, "the timer waited for \(fired) of the \(backlog) datagrams")
        host.close()
        client.close()
    }

    /// What waits is read a batch at a time (one recvmmsg each), in order; a turn says whether it found the queue
    /// empty; a datagram longer than a slot is dropped and counted, not cut, and the rest of its batch still comes.
    @Test func waitingDatagramsAreReadInBatchesInOrder() throws {
        let loop = try DeviceEventLoop()
        let any = try #require(try SocketAddress.resolve("127.0.0.1:0", defaultPort: 0, passive: true).first)
        let host = try UDPSocket(bindingTo: any, loop: loop)
        let client = try UDPSocket(bindingTo: any, loop: loop)
        for index in 0..<20 {
            let payload = index == 5 ? [UInt8](repeating: 5, count: 3_000) : [UInt8](repeating: UInt8(index), count: index)
            #expect(client.send(payload, to: host.localAddress))
        }
        var received: [[UInt8]] = []
        var turns: [(read: UInt64, drained: Bool)] = []
        host.onDatagram = { bytes, from in
            #expect(from.remote == client.localAddress && from.local != nil)
            received.append(Array(bytes))
        }
        host.onTurnEnded = { drained in
            turns.append((host.datagramsRead, drained))
            if drained { loop.stop() }
        }
        #expect(try loop.run(forAtMost: 5), "what the test waits for came")
        #expect(received == (0..<20).filter { $0 != 5 }.map { [UInt8](repeating: UInt8($0), count: $0) })
        #expect(host.truncatedDatagrams == 1)
        #expect(turns.map(\.read) == [UInt64(UDPSocket.datagramsPerWake), 20])
        #expect(turns.map(\.drained) == [false, true])
        host.close()
        client.close()
    }

    @Test func aPortInUseSaysWhatToDo() throws {
        let loop = try DeviceEventLoop()
        let any = try #require(try SocketAddress.resolve("127.0.0.1:0", defaultPort: 0, passive: true).first)
        let first = try UDPSocket(bindingTo: any, loop: loop)
        let taken = try #require(try SocketAddress.resolve("127.0.0.1:\(first.localAddress.port)", defaultPort: 0).first)
        let error = #expect(throws: LinkSocketError.self) { try UDPSocket(bindingTo: taken, loop: loop) }
        #expect(error?.description.contains("--listen") == true)
    }
}
