/// Forwarding's two ends joined in memory, for the benchmarks (shared by LinkHotPath and link-frame-count).
public import Crypto
import Glibc
import Logging
public import PadCore
public import PadNet
import PadNoise

/// A client and a host joined directly: each datagram is copied into one of a few buffers kept for the purpose and
/// delivered by `pump()`, so nothing here allocates once the session is up.
public final class DirectLink {
    public private(set) var client: ForwardingClient!
    public private(set) var host: ForwardingHost!
    public let source = QuietSource()
    public let pad = QuietPad()
    public var deliverToHost = true
    public private(set) var sentByClient = 0
    private var clock: UInt64 = 1_000_000
    private var queue: [(toHost: Bool, bytes: [UInt8])]
    private var queued = 0

    public init() throws {
        queue = (0..<16).map { _ in (false, [UInt8](repeating: 0, count: 2_048)) }
        for index in queue.indices { queue[index].bytes.removeAll(keepingCapacity: true) }
        let hostKey = Curve25519.KeyAgreement.PrivateKey(), clientKey = Curve25519.KeyAgreement.PrivateKey()
        let paired = PairedClients(
            clients: [PairedClient(key: LinkPublicKey(bytes: clientKey.publicKey.rawRepresentation)!, name: "bench")])
        let clocks = LinkClocks(
            monotonicMicroseconds: { [unowned self] in clock }, wallClockMicroseconds: { [unowned self] in clock })
        host = ForwardingHost(
            sender: Endpoint(link: self, toHost: false), timer: IdleTimer(), clocks: clocks, identity: hostKey,
            pairedClients: paired, options: .init(virtualKind: .xbox360, maximumPads: 8, lingerMilliseconds: 60_000),
            logger: Logger(label: "bench host"), onEvent: { _ in },
            makePad: { [pad] _, _, _, _ in pad })
        client = try ForwardingClient(
            controllers: [Self.controller], host: try SocketAddress.resolve("127.0.0.1:48100", defaultPort: 0)[0],
            hostKey: LinkPublicKey(bytes: hostKey.publicKey.rawRepresentation)!, identity: clientKey,
            sender: Endpoint(link: self, toHost: true), timer: IdleTimer(), clocks: clocks,
            options: .init(virtualKind: .xbox360, grab: false, profile: .identity), logger: Logger(label: "bench client"),
            onEvent: { _ in }, makeSource: { [source] _, output in
                source.output = output
                return source
            })
        for _ in 0..<10 {  // handshake, pad table, first frame: until the link is quiet
            pump()
            host.tick()
            clock += 2_000
        }
        source.output(PadSnapshot(leftX: 1))
        pump()
        host.tick()
        pump()
    }

    fileprivate func enqueue(_ datagram: [UInt8], toHost: Bool) {
        if toHost { sentByClient &+= 1 }
        guard !toHost || deliverToHost, queued < queue.count else { return }
        queue[queued].toHost = toHost
        queue[queued].bytes.removeAll(keepingCapacity: true)
        queue[queued].bytes.append(contentsOf: datagram)
        queued += 1
    }

    /// Moves both ends' clock on (a frame's interval: timers come due as they would between frames).
    public func advanceClock(byMicroseconds microseconds: UInt64) { clock += microseconds }

    /// Delivers every queued datagram (and what answering them queues), in order.
    public func pump() {
        var index = 0
        while index < queued {
            let toHost = queue[index].toHost
            queue[index].bytes.withUnsafeBytes { bytes in
                if toHost {
                    host.receive(bytes, along: Self.clientPath)
                } else {
                    client.receive(bytes, along: Self.hostPath)
                }
            }
            index += 1
        }
        queued = 0
    }

    static let hostPath = DatagramPath(remote: try! SocketAddress.resolve("127.0.0.1:48100", defaultPort: 0)[0])
    static let clientPath = DatagramPath(remote: try! SocketAddress.resolve("127.0.0.1:40000", defaultPort: 0)[0])

    static let controller = Controller(
        fingerprint: Fingerprint(rawValue: "aaaaaaaaaaaa"), name: "bench pad", kind: .xbox360, bus: .usb,
        vendorID: 0x045E, productID: 0x028E, version: 0x114, serial: nil, portPath: nil,
        capabilities: Capabilities(rumble: true), nodes: ControllerNodes(evdev: [], hidraw: nil),
        groupSyspath: "/sys/bench", driver: nil)

    private final class Endpoint: LinkDatagramSender {
        unowned let link: DirectLink
        let toHost: Bool
        init(link: DirectLink, toHost: Bool) {
            self.link = link
            self.toHost = toHost
        }
        func send(_ datagram: [UInt8], along path: DatagramPath) { link.enqueue(datagram, toHost: toHost) }
    }
}

public final class IdleTimer: LinkWakeTimer {
    public func schedule(atMicroseconds microseconds: UInt64) {}
    public func cancel() {}
    public func close() {}
}

/// A virtual pad that keeps the last snapshot.
public final class QuietPad: HostedVirtualPad {
    public private(set) var shown = PadSnapshot.neutral
    public var mac: String? { nil }
    public func apply(_ snapshot: PadSnapshot) { shown = snapshot }
    public func goNeutral() { shown = shown.released }
    public func close() {}
}

/// A physical pad whose frames the benchmark makes.
public final class QuietSource: ForwardedPadSource {
    public var output: (PadSnapshot) -> Void = { _ in }
    public var onDetached: (() -> Void)?
    public var onReattached: (() -> Void)?
    public func submit(_ feedback: Feedback) {}
    public func resume(from controllers: [Controller]) -> Bool { false }
    public func close() {}
}

/// The one paired client, in memory.
struct PairedClients: PairedClientList {
    let clients: [PairedClient]
    func pairedClients() -> [PairedClient] { clients }
}
