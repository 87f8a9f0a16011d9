import Crypto
import Glibc
import Logging
import PadCore
import PadLinux
import PadNet
import PadNetLinux

/// A forwarding host and client driven together on one fake clock, joined by a simulated network whose two
/// directions can each be delayed or cut: every timing rule of the link (keepalives, loss, linger, resends,
/// rekeying) is tested without sockets, devices or waiting. Datagrams are real (sealed, opened, decoded).
final class LinkSimulation {
    /// The shared clock, µs.
    private(set) var now: UInt64 = 1_000_000_000
    /// The wall clock the client's handshakes carry, µs (a test may step it back).
    var wallClockOffset: Int64 = 1_700_000_000_000_000 - 1_000_000_000
    var oneWayDelayMicroseconds: UInt64 = 500
    /// The client -> host delay of each datagram, when set (instead of `oneWayDelayMicroseconds`): jitter, which
    /// reorders what it lets overtake (as netem does).
    var clientToHostDelayMicroseconds: (() -> UInt64)?
    /// Whether a datagram sent now in that direction is lost.
    var cutClientToHost = false
    var cutHostToClient = false

    let hostAddress = try! SocketAddress.resolve("127.0.0.1:48100", defaultPort: 0)[0]

    enum End: Equatable { case host, client(Int) }

    /// A datagram a test wants lost (besides the cut directions), decided when it is sent.
    var drops: ((_ from: End, _ bytes: [UInt8]) -> Bool)?
    /// While set, the host's timer does not fire (its datagrams are still delivered): a host whose loop is busy
    /// reading a backlog, which runs its timers only between batches.
    var hostTimerHeld = false
    /// The same for every client's timer (a client's loop busy with its pad's frames).
    var clientTimersHeld = false
    /// While set, the host cannot make a virtual pad: making one throws this (no /dev/uinput access, ...).
    var virtualPadError: VirtualPadCreationFailure?

    private struct InFlight {
        var arrives: UInt64
        var order: Int
        var to: End
        var bytes: [UInt8]
        var path: DatagramPath
    }

    private var inFlight: [InFlight] = []
    private var sentCount = 0
    /// Every datagram sent, in order: who sent it, when, and its bytes (cut ones included).
    private(set) var sent: [(from: End, at: UInt64, bytes: [UInt8], delivered: Bool)] = []

    let hostTimer = SimulatedTimer()
    let hostKey = Curve25519.KeyAgreement.PrivateKey()
    let clientKey = Curve25519.KeyAgreement.PrivateKey()
    var hostEvents: [ForwardingHost.Event] = []
    /// The events of every client started, in order (each client's own in `clients`).
    var clientEvents: [ForwardingClient.Event] = []
    /// Every virtual pad the host made, in order.
    private(set) var virtualPads: [RecordingVirtualPad] = []
    /// Every source a client opened, by pad ID (the latest for an ID).
    private(set) var sources: [Fingerprint: ScriptedSource] = [:]
    private(set) var host: ForwardingHost!
    /// Every client started (a `padbridge connect` each), with its address and timer.
    private(set) var clients: [SimulatedClient] = []
    /// The newest client.
    var client: ForwardingClient? { clients.last?.client }

    /// Paired clients as the host reads them, in memory (no file); `unreadable`: reading them throws this.
    final class PairedClientsInMemory: PairedClientList {
        var clients: [PairedClient]
        var unreadable: (any Error)?
        init(_ clients: [PairedClient]) { self.clients = clients }
        func pairedClients() throws -> [PairedClient] {
            if let unreadable { throw unreadable }
            return clients
        }
    }

    /// The host's paired clients: the simulation's client as "laptop" to start with.
    let paired: PairedClientsInMemory

    /// `pairedClients`: where the host reads its paired clients from, when not `paired` (a test of the file itself).
    init(
        hostOptions: ForwardingHost.Options = .init(virtualKind: nil, maximumPads: 8, lingerMilliseconds: 60_000),
        pairedClients: (any PairedClientList)? = nil
    ) throws {
        paired = PairedClientsInMemory([
            PairedClient(key: LinkPublicKey(bytes: clientKey.publicKey.rawRepresentation)!, name: "laptop")
        ])
        host = ForwardingHost(
            sender: Sender(simulation: self, from: .host, address: hostAddress), timer: hostTimer, clocks: clocks, identity: hostKey,
            pairedClients: pairedClients ?? paired, options: hostOptions, logger: Logger(label: "simulated host"),
            onEvent: { [unowned self] in hostEvents.append($0) },
            makePad: { [unowned self] kind, _, onFeedback, onReady throws(VirtualPadCreationFailure) in
                if let virtualPadError { throw virtualPadError }
                let pad = RecordingVirtualPad(kind: kind, onFeedback: onFeedback)
                virtualPads.append(pad)
                onReady(VirtualPadNodes(eventNodes: ["/dev/input/simulated\(virtualPads.count)"], hidrawNode: nil, sysfsPath: "/sys/simulated"))
                return pad
            })
    }

    var clocks: LinkClocks {
        LinkClocks(
            monotonicMicroseconds: { [unowned self] in now },
            wallClockMicroseconds: { [unowned self] in UInt64(Int64(now) + wallClockOffset) })
    }

    /// Starts a client forwarding `pads` (a new `padbridge connect`, from a new port). Unless `alongside`, the
    /// previous client is closed first without a word to the host (as a killed process). `key`: another identity.
    @discardableResult
    func connect(
        _ pads: [Controller], options: ForwardingClient.Options = .init(virtualKind: nil, grab: true, profile: .identity),
        alongside: Bool = false, key: Curve25519.KeyAgreement.PrivateKey? = nil, host: SocketAddress? = nil
    ) throws -> ForwardingClient {
        if !alongside, let previous = clients.last, !previous.closed {
            previous.client.close()
            previous.closed = true
        }
        let index = clients.count
        let address = try SocketAddress.resolve("127.0.0.1:\(40001 + index)", defaultPort: 0)[0]
        let timer = SimulatedTimer()
        var events: (ForwardingClient.Event) -> Void = { _ in }
        let client = try ForwardingClient(
            controllers: pads, host: host ?? hostAddress, hostKey: LinkPublicKey(bytes: hostKey.publicKey.rawRepresentation)!,
            identity: key ?? clientKey, sender: Sender(simulation: self, from: .client(index), address: address), timer: timer, clocks: clocks,
            options: options, logger: Logger(label: "simulated client \(index)"),
            onEvent: { events($0) },
            makeSource: { [unowned self] controller, output in
                let source = ScriptedSource(output: output)
                sources[controller.fingerprint] = source
                return source
            })
        let simulated = SimulatedClient(client: client, address: address, timer: timer)
        events = { [unowned self, unowned simulated] event in
            simulated.events.append(event)
            clientEvents.append(event)
        }
        clients.append(simulated)
        return client
    }

    /// Revokes every client, as an edit of paired-clients does (the host reads them again, as `serve` does when
    /// the file changes).
    func revokeEveryClient() {
        paired.clients = []
        host.reloadPairedClients()
    }

    /// Pairs another client key with the host (which reads paired-clients again, as `serve` does when it changes).
    func pairAnotherClient(name: String) throws -> Curve25519.KeyAgreement.PrivateKey {
        let key = Curve25519.KeyAgreement.PrivateKey()
        paired.clients.append(PairedClient(key: LinkPublicKey(bytes: key.publicKey.rawRepresentation)!, name: name))
        host.reloadPairedClients()
        return key
    }

    /// Advances the clock by `microseconds`, delivering datagrams and firing timers in time order.
    func run(forMicroseconds microseconds: UInt64) {
        let end = now + microseconds
        while true {
            var next: (time: UInt64, action: () -> Void)?
            func consider(_ time: UInt64?, _ action: @escaping () -> Void) {
                guard let time, time <= end, next.map({ time < $0.time }) ?? true else { return }
                next = (time, action)
            }
            if let first = inFlight.indices.min(by: { (inFlight[$0].arrives, inFlight[$0].order) < (inFlight[$1].arrives, inFlight[$1].order) }) {
                consider(inFlight[first].arrives) { [unowned self] in deliver(at: first) }
            }
            consider(hostTimerHeld ? nil : hostTimer.deadline) { [unowned self] in
                hostTimer.deadline = nil
                host.tick()
            }
            for simulated in clients where !simulated.closed && !clientTimersHeld {
                consider(simulated.timer.deadline) {
                    simulated.timer.deadline = nil
                    simulated.client.tick()
                }
            }
            guard let chosen = next else { break }
            now = max(now, chosen.time)
            chosen.action()
        }
        now = end
    }

    func run(forMilliseconds milliseconds: UInt64) { run(forMicroseconds: milliseconds * 1000) }

    private func deliver(at index: Int) {
        let datagram = inFlight.remove(at: index)
        datagram.bytes.withUnsafeBytes { bytes in
            switch datagram.to {
            case .host: host.receive(bytes, along: datagram.path)
            case let .client(index): if !clients[index].closed { clients[index].client.receive(bytes, along: datagram.path) }
            }
        }
    }

    fileprivate func send(_ bytes: [UInt8], along path: DatagramPath, from end: End, address: SocketAddress) {
        let cut = (end == .host ? cutHostToClient : cutClientToHost) || drops?(end, bytes) == true
        sent.append((end, now, bytes, !cut))
        guard !cut else { return }
        sentCount += 1
        let to: End
        let arrivingPath: DatagramPath
        switch end {
        case .host:
            guard let index = clients.firstIndex(where: { $0.address == path.remote }) else { return }
            to = .client(index)
            arrivingPath = DatagramPath(remote: hostAddress)
        case .client:
            to = .host
            arrivingPath = DatagramPath(remote: address)
        }
        let delay = end == .host ? oneWayDelayMicroseconds : clientToHostDelayMicroseconds?() ?? oneWayDelayMicroseconds
        inFlight.append(InFlight(arrives: now + delay, order: sentCount, to: to, bytes: bytes, path: arrivingPath))
    }

    /// Bytes sent by `end` (nil: by any client) from `time` on.
    func datagrams(from end: End?, since time: UInt64 = 0) -> [[UInt8]] {
        sent.filter { entry in
            entry.at >= time && (end.map { entry.from == $0 } ?? (entry.from != .host))
        }.map(\.bytes)
    }

    private final class Sender: LinkDatagramSender {
        unowned let simulation: LinkSimulation
        let from: End
        let address: SocketAddress
        init(simulation: LinkSimulation, from: End, address: SocketAddress) {
            self.simulation = simulation
            self.from = from
            self.address = address
        }
        func send(_ datagram: [UInt8], along path: DatagramPath) {
            simulation.send(datagram, along: path, from: from, address: address)
        }
    }
}

/// One `padbridge connect` in the simulation.
final class SimulatedClient {
    let client: ForwardingClient
    let address: SocketAddress
    let timer: SimulatedTimer
    var events: [ForwardingClient.Event] = []
    var closed = false
    init(client: ForwardingClient, address: SocketAddress, timer: SimulatedTimer) {
        self.client = client
        self.address = address
        self.timer = timer
    }
}

final class SimulatedTimer: LinkWakeTimer {
    var deadline: UInt64?
    private(set) var closed = false
    func schedule(atMicroseconds microseconds: UInt64) { deadline = closed ? nil : microseconds }
    func cancel() { deadline = nil }
    func close() {
        closed = true
        deadline = nil
    }
}

/// A host's virtual pad that records what it was asked to show.
final class RecordingVirtualPad: HostedVirtualPad {
    let kind: VirtualPadKind
    let feedback: (FeedbackEvent) -> Void
    /// What readers see now (nil once destroyed).
    private(set) var shown: PadSnapshot? = .neutral
    private(set) var history: [PadSnapshot] = []
    var mac: String? { kind == .dualSense ? "c6:00:00:00:00:01" : nil }
    var isOpen: Bool { shown != nil }

    init(kind: VirtualPadKind, onFeedback: @escaping (FeedbackEvent) -> Void) {
        self.kind = kind
        feedback = onFeedback
    }

    func apply(_ snapshot: PadSnapshot) {
        guard shown != nil else { return }
        shown = snapshot
        history.append(snapshot)
    }

    func goNeutral() {
        guard let current = shown else { return }
        apply(current.released)
    }

    func close() {
        if shown != nil { history.append(.neutral) }
        shown = nil
    }
}

/// A client's pad whose frames the test makes, recording the feedback that reaches it.
final class ScriptedSource: ForwardedPadSource {
    let output: (PadSnapshot) -> Void
    var onDetached: (() -> Void)?
    var onReattached: (() -> Void)?
    private(set) var submitted: [Feedback] = []
    private(set) var closed = false
    /// The feedback state the pad is left in (every part last submitted).
    var feedbackState: Feedback {
        var state = Feedback()
        for part in submitted { state.merge(part) }
        return state
    }

    init(output: @escaping (PadSnapshot) -> Void) { self.output = output }

    func send(_ snapshot: PadSnapshot) { output(snapshot) }
    func submit(_ feedback: Feedback) { submitted.append(feedback) }
    func resume(from controllers: [Controller]) -> Bool { false }
    func close() { closed = true }

    /// The pad is unplugged, then plugged in again.
    func unplug() { onDetached?() }
    func replug() { onReattached?() }
}

extension Controller {
    /// A pad as discovery would list it, for a simulated client.
    static func simulated(_ id: String, kind: ControllerKind = .xbox360, name: String = "simulated pad") -> Controller {
        Controller(
            fingerprint: Fingerprint(rawValue: id), name: name, kind: kind, bus: .usb, vendorID: 0x045E, productID: 0x028E,
            version: 0x114, serial: nil, portPath: nil, capabilities: Capabilities(rumble: true),
            nodes: ControllerNodes(evdev: [], hidraw: nil), groupSyspath: "/sys/simulated/\(id)", driver: nil)
    }
}
