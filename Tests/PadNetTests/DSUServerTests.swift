import Glibc
import Logging
import PadCore
import PadLinux
import PadLinuxTestSupport
import PadNet
import PadNetLinux
import Testing

/// The DSU server on 127.0.0.1 with a client written from the protocol's description (PadCore's request encoder,
/// whose bytes DSUCodecTests checks against zlib-built ones).
@Suite("DSU server on 127.0.0.1", .serialized)
struct DSUServerTests {
    final class Client {
        let socket: UDPSocket
        let id: UInt32
        var replies: [[UInt8]] = []
        var onReply: (([UInt8]) -> Void)?

        init(id: UInt32, loop: DeviceEventLoop) throws {
            let any = try #require(try SocketAddress.resolve("127.0.0.1:0", defaultPort: 0, passive: true).first)
            socket = try UDPSocket(bindingTo: any, loop: loop)
            self.id = id
            socket.onDatagram = { [unowned self] bytes, _ in
                self.replies.append(Array(bytes))
                self.onReply?(Array(bytes))
            }
        }

        func ask(_ message: DSURequest.Message, of server: DSUServer) {
            socket.send(DSURequest(clientID: id, message: message).encoded(), to: server.localAddress)
        }

        var padData: [[UInt8]] { replies.filter { $0.count == 100 && Self.type($0) == 0x10_0002 } }
        static func type(_ bytes: [UInt8]) -> UInt32 {
            UInt32(bytes[16]) | UInt32(bytes[17]) << 8 | UInt32(bytes[18]) << 16 | UInt32(bytes[19]) << 24
        }
    }

    static func pad(yawRight degreesPerSecond: Double, at microseconds: UInt64, pressing: Button? = nil) -> DSUPadState {
        var snapshot = PadSnapshot.neutral
        snapshot.motion = MotionSample(
            gyroRadiansPerSecond: Vector3(x: 0, y: -degreesPerSecond * .pi / 180, z: 0), timestampMicroseconds: microseconds)
        if let pressing { snapshot[pressing] = true }
        return DSUPadState(
            snapshot: snapshot, mac: DSUMACAddress(parsing: "aa:bb:cc:dd:ee:ff")!, connection: .usb, motion: .fullGyro)
    }

    static func float(_ bytes: [UInt8], at offset: Int) -> Float {
        Float(bitPattern: UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24)
    }

    func makeServer(_ loop: DeviceEventLoop, events: @escaping (DSUServer.Event) -> Void = { _ in }) throws -> DSUServer {
        let address = try #require(try SocketAddress.resolve("127.0.0.1:0", defaultPort: 0, passive: true).first)
        return try DSUServer(listeningOn: address, loop: loop, logger: Logger(label: "dsu test"), onEvent: events)
    }

    @Test func versionAndPortInfoAreAnsweredAtOnce() throws {
        let loop = try DeviceEventLoop()
        let server = try makeServer(loop)
        server.update(slot: 0, pad: Self.pad(yawRight: 0, at: 1))
        let client = try Client(id: 1, loop: loop)
        client.onReply = { _ in if client.replies.count == 5 { loop.stop() } }
        client.ask(.version, of: server)
        client.ask(.portInfo(.all), of: server)
        #expect(try loop.run(forAtMost: 5))
        let version = try #require(client.replies.first { $0.count == 22 })
        #expect(Array(version[0..<4]) == Array("DSUS".utf8) && version[20] == 0xE9 && version[21] == 0x03)
        let ports = client.replies.filter { $0.count == 32 }
        #expect(ports.map { $0[20] } == [0, 1, 2, 3])
        // Slot 0: connected, full gyro, USB, its MAC; the others empty.
        #expect(Array(ports[0][21..<30]) == [2, 2, 1, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        #expect(ports[1][21] == 0)
        server.close()
    }

    @Test func aSubscriberGetsTheStateAtOnceThenEveryChangeNumbered() throws {
        let loop = try DeviceEventLoop()
        var subscribed: [DSUSlotSet] = []
        let server = try makeServer(loop) { event in
            if case let .clientSubscribed(_, _, slots) = event { subscribed.append(slots) }
        }
        server.update(slot: 0, pad: Self.pad(yawRight: 90, at: 1_000))
        let client = try Client(id: 2, loop: loop)
        client.onReply = { _ in
            switch client.padData.count {
            case 1:
                server.update(slot: 0, pad: Self.pad(yawRight: 90, at: 1_000))  // unchanged: not sent
                server.update(slot: 0, pad: Self.pad(yawRight: 90, at: 5_000))
            case 2: server.update(slot: 0, pad: Self.pad(yawRight: 90, at: 5_000, pressing: .a))
            case 3: loop.stop()
            default: break
            }
        }
        client.ask(.padData(DSUPadSelection(slot: 0)), of: server)
        #expect(try loop.run(forAtMost: 5))
        let data = client.padData
        #expect(subscribed == [DSUSlotSet([0])])
        #expect(data.map { $0[32] } == [0, 1, 2], "packet numbers")
        #expect(data.map { Self.float($0, at: 92) } == [90, 90, 90], "yaw, deg/s")
        let stamps = data.map { bytes in (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[68 + $1]) << (8 * $1) } }
        #expect(stamps == [1_000, 5_000, 5_000], "the sensor's own clock")
        #expect(data.map { $0[37] & 0x20 } == [0, 0, 0x20], "A")
        server.close()
    }

    /// 2,000 requests in a burst from one socket: most are dropped unanswered, and the other client's subscription
    /// and data go on.
    @Test func aFloodFromOneSourceDoesNotStopAnotherClientsData() throws {
        let loop = try DeviceEventLoop()
        var limited: UInt64 = 0
        let server = try makeServer(loop) { event in
            if case let .requestsLimited(_, dropped) = event { limited += dropped }
        }
        server.update(slot: 0, pad: Self.pad(yawRight: 0, at: 1))
        let flood = try Client(id: 66, loop: loop)
        let client = try Client(id: 3, loop: loop)
        var frame: UInt64 = 1
        client.onReply = { _ in
            if client.padData.count == 1 {
                for _ in 0..<2_000 { flood.ask(.portInfo(.all), of: server) }
            }
            if client.padData.count == 50 { return loop.stop() }
            frame += 4_000
            server.update(slot: 0, pad: Self.pad(yawRight: 10, at: frame))
        }
        client.ask(.padData(.everyPad), of: server)
        #expect(try loop.run(forAtMost: 10))
        #expect(client.padData.count == 50)
        #expect(server.limitedRequests > 0)
        // At most the source's burst (40) and what it earned meanwhile were answered, four replies each.
        #expect(flood.replies.count <= 4 * 60, "\(flood.replies.count) replies to the flood")
        server.close()
    }

    @Test func aPortInUseSaysWhatToDo() throws {
        let loop = try DeviceEventLoop()
        let server = try makeServer(loop)
        let taken = try #require(try SocketAddress.resolve(server.localAddress.description, defaultPort: 0).first)
        #expect {
            _ = try DSUServer(listeningOn: taken, loop: loop, logger: Logger(label: "second"), onEvent: { _ in })
        } throws: { error in
            "\(error)".contains("the port is in use") && "\(error)".contains("--listen")
        }
        server.close()
    }

    /// The per-frame path (`update` with one subscriber: compare, encode, restamp, send) allocates nothing. Counted
    /// when a malloc counter is preloaded that exports `padbridge_malloc_calls()` (every malloc, calloc, realloc and
    /// posix_memalign of the process), e.g. `LD_PRELOAD=libcount.so .build/debug/padbridgePackageTests.xctest
    /// --testing-library swift-testing --filter manyFramesToOneSubscriber`; without one, only the frames are checked.
    @Test func manyFramesToOneSubscriber() throws {
        let loop = try DeviceEventLoop()
        let server = try makeServer(loop)
        server.update(slot: 0, pad: Self.pad(yawRight: 0, at: 1))
        let client = try Client(id: 4, loop: loop)
        client.onReply = { _ in loop.stop() }
        client.ask(.padData(.everyPad), of: server)
        #expect(try loop.run(forAtMost: 5))
        typealias Counter = @convention(c) () -> UInt
        let counter = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "padbridge_malloc_calls").map {
            unsafeBitCast($0, to: Counter.self)
        }
        let frames = 2_000
        let pads = (0..<frames).map { Self.pad(yawRight: 45, at: UInt64(2 + $0) * 4_000) }
        let before = counter?() ?? 0
        // An index loop: a debug build's unspecialized for-in over these large values allocates an iterator buffer.
        for index in 0..<frames { server.update(slot: 0, pad: pads[index]) }
        let allocations = (counter?() ?? 0) - before
        #expect(server.padDataSent == UInt64(frames + 1))
        if counter != nil {
            print("DSUServer.update: \(allocations) allocations in \(frames) frames to one subscriber")
            #expect(allocations == 0, "\(allocations) allocations in \(frames) frames")
        }
        server.close()
    }
}
