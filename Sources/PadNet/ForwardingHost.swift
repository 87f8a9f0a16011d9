public import Crypto
import Glibc
public import Logging
public import PadCore
public import PadLinux
import PadNoise
import PadSessions

/// `padbridge serve`: virtual pads for the pads paired clients forward. One per (client, pad ID), kept across link
/// losses (neutral, for `lingerMilliseconds`) so games keep the player slot. Loop-confined.
public final class ForwardingHost {
    public struct Options: Sendable {
        public var virtualKind: VirtualPadKind?
        public var maximumPads: Int
        public var lingerMilliseconds: UInt64

        public init(virtualKind: VirtualPadKind?, maximumPads: Int, lingerMilliseconds: UInt64) {
            self.virtualKind = virtualKind
            self.maximumPads = maximumPads
            self.lingerMilliseconds = lingerMilliseconds
        }
    }

    /// What happened, for the status lines.
    public enum Event {
        case clientConnected(name: String, address: SocketAddress)
        case padAttached(client: String, pad: LinkPadDescription, kind: VirtualPadKind, nodes: VirtualPadNodes, mac: String?)
        case padDetached(client: String, pad: LinkPadDescription)
        case linkLost(client: String)
        case resumed(client: String)
        case clientGone(client: String)
        case padDestroyed(client: String, fingerprint: Fingerprint)
        case dropped(count: Int, reason: String)
    }

    private final class HostedPad {
        let fingerprint: Fingerprint
        var slot: UInt8
        let virtual: VirtualPadSession
        var receiver = InputRedundancyReceiver()
        var feedback = FeedbackStateSender()
        var attached = true
        init(fingerprint: Fingerprint, slot: UInt8, virtual: VirtualPadSession) {
            self.fingerprint = fingerprint
            self.slot = slot
            self.virtual = virtual
        }
    }

    private final class HostedClient {
        let key: LinkPublicKey
        let name: String
        var address: SocketAddress
        var session: LinkSessionKeys
        var liveness: LinkLiveness
        var lastInitiationClock: UInt64
        var pads: [Fingerprint: HostedPad] = [:]
        var padTableVersion: UInt32?
        var receivedDatagrams: UInt32 = 0
        var sentDatagrams: UInt32 = 0
        var lost = false
        /// When input received without a request to acknowledge it gets its (delayed) acknowledgement.
        var acknowledgementDueMicroseconds: UInt64?
        init(key: LinkPublicKey, name: String, address: SocketAddress, session: LinkSessionKeys, now: UInt64, clock: UInt64) {
            self.key = key
            self.name = name
            self.address = address
            self.session = session
            liveness = LinkLiveness(startingAtMicroseconds: now)
            lastInitiationClock = clock
        }
        func pad(inSlot slot: UInt8) -> HostedPad? { pads.values.first { $0.slot == slot } }
    }

    private let socket: UDPSocket
    private let identity: Curve25519.KeyAgreement.PrivateKey
    private let store: TrustStore
    private let options: Options
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let onEvent: (Event) -> Void
    private var clients: [LinkPublicKey: HostedClient] = [:]
    /// Sessions by their index, each pointing at its client.
    private var sessions: [UInt32: LinkPublicKey] = [:]
    private var timer: LoopTimer?
    private var refusals = RateLimitedCount(intervalMicroseconds: 1_000_000)
    /// Handles datagrams that are not the link's (pairing), when set.
    public var onOtherDatagram: ((UnsafeRawBufferPointer, SocketAddress) -> Void)?

    public init(
        socket: UDPSocket, identity: Curve25519.KeyAgreement.PrivateKey, store: TrustStore, options: Options,
        loop: DeviceEventLoop, logger: Logger, onEvent: @escaping (Event) -> Void
    ) throws(DeviceAccessError) {
        self.socket = socket
        self.identity = identity
        self.store = store
        self.options = options
        self.loop = loop
        self.logger = logger
        self.onEvent = onEvent
        timer = try loop.makeTimer { [weak self] in self?.tick() }
        socket.onDatagram = { [weak self] bytes, from in self?.receive(bytes, from: from) }
    }

    /// Every virtual pad shows the released state (the first step of a clean exit).
    public func releaseAll() {
        for client in clients.values { for pad in client.pads.values { pad.virtual.goNeutral() } }
    }

    /// Destroys every virtual pad. Idempotent.
    public func close() {
        timer?.close()
        timer = nil
        for client in clients.values { for pad in client.pads.values { pad.virtual.close() } }
        clients.removeAll()
        sessions.removeAll()
    }

    private var now: UInt64 { MonotonicInstant.now().microseconds }

    private func drop(_ reason: String) {
        if let count = refusals.note(atMicroseconds: now) { onEvent(.dropped(count: count, reason: reason)) }
    }

    private func receive(_ bytes: UnsafeRawBufferPointer, from address: SocketAddress) {
        guard let datagram = LinkDatagram(bytes) else {
            if let first = bytes.first, PairingDatagram.firstByte.contains(first), let other = onOtherDatagram {
                other(bytes, address)
            } else {
                drop("not padbridge's")
            }
            return
        }
        switch datagram {
        case .initiation:
            handshake(datagram, from: address)
        case let .transport(index, counter, ciphertext):
            guard let key = sessions[index], let client = clients[key], client.session.localIndex == index,
                let plaintext = client.session.open(counter: counter, ciphertext: ciphertext)
            else { return drop("unauthenticated, replayed or for no session") }
            guard let message = try? LinkClientMessage(decoding: plaintext) else { return drop("malformed") }
            client.address = address
            client.receivedDatagrams &+= 1
            client.liveness.heard(atMicroseconds: now)
            if client.lost {
                client.lost = false
                onEvent(.resumed(client: client.name))
            }
            handle(message, from: client)
        case .response:
            drop("a response sent to the host")
        }
        armTimer()
    }

    private func handshake(_ datagram: LinkDatagram, from address: SocketAddress) {
        // Read at every handshake: a line deleted from paired-clients revokes the client's next session.
        let paired = (try? store.pairedClients()) ?? []
        var clock: UInt64 = 0
        guard
            let (response, key, session) = LinkHostHandshake.respond(to: datagram, identity: identity, accepts: { key, sent in
                guard paired.contains(where: { $0.key == key }) else { return false }
                clock = sent
                return clients[key].map { sent > $0.lastInitiationClock } ?? true
            })
        else { return drop("handshake from an unpaired client, replayed, or forged") }
        socket.send(response, to: address)
        let name = paired.first { $0.key == key }?.name ?? key.fingerprint
        if let client = clients[key] {
            sessions[client.session.localIndex] = nil
            client.session = session
            client.address = address
            client.lastInitiationClock = clock
            client.liveness.heard(atMicroseconds: now)
            for pad in client.pads.values {
                pad.receiver.restart()
                pad.feedback.restartSession()
            }
            client.padTableVersion = nil
            client.receivedDatagrams = 0
            client.sentDatagrams = 0
            if client.lost {
                client.lost = false
                onEvent(.resumed(client: name))
            }
        } else {
            clients[key] = HostedClient(key: key, name: name, address: address, session: session, now: now, clock: clock)
            onEvent(.clientConnected(name: name, address: address))
        }
        sessions[session.localIndex] = key
    }

    private func handle(_ message: LinkClientMessage, from client: HostedClient) {
        var reply = LinkHostMessage()
        var mustReply = message.wantsAcknowledgement
        if let ping = message.pingMicroseconds {
            reply.pong = (ping, client.receivedDatagrams, client.sentDatagrams &+ 1)
            mustReply = true
        }
        if let table = message.padTable {
            apply(table.pads, for: client)
            client.padTableVersion = table.version
            reply.padTableAcknowledgement = table.version
            mustReply = true
        }
        for input in message.inputs {
            guard let pad = client.pad(inSlot: input.slot), pad.attached else {
                // A pad this host does not forward (--max-pads reached, or its virtual pad could not be made):
                // acknowledged as received, so the client does not send it again and again.
                if let newest = input.frames.last?.sequence { reply.inputAcknowledgements.append((input.slot, newest)) }
                continue
            }
            for snapshot in pad.receiver.receive(input.frames) { pad.virtual.apply(snapshot) }
        }
        for acknowledgement in message.feedbackAcknowledgements {
            client.pad(inSlot: acknowledgement.slot)?.feedback.acknowledge(acknowledgement.version)
        }
        if mustReply || client.pads.values.contains(where: { $0.feedback.pending != nil }) {
            send(reply, to: client)
        } else if !message.inputs.isEmpty {
            client.acknowledgementDueMicroseconds = now + LinkLiveness.delayedAcknowledgementMicroseconds
        }
    }

    /// Fills in acknowledgements and pending feedback, seals and sends.
    private func send(_ base: LinkHostMessage, to client: HostedClient) {
        client.acknowledgementDueMicroseconds = nil
        var message = base
        message.inputAcknowledgements += client.pads.values.filter { $0.attached }.map { ($0.slot, $0.receiver.applied) }
        message.feedback = client.pads.values.compactMap { pad in pad.feedback.pending.map { (pad.slot, $0.version, $0.state) } }
        if message.padTableAcknowledgement == nil { message.padTableAcknowledgement = client.padTableVersion }
        guard let datagram = try? client.session.seal(message.encoded) else { return }
        socket.send(datagram, to: client.address)
        client.sentDatagrams &+= 1
        client.liveness.sent(atMicroseconds: now)
    }

    private func apply(_ pads: [LinkPadDescription], for client: HostedClient) {
        for description in pads {
            if let pad = client.pads[description.fingerprint] {
                pad.slot = description.slot
                if pad.attached && !description.attached {
                    pad.virtual.goNeutral()
                    onEvent(.padDetached(client: client.name, pad: description))
                }
                pad.attached = description.attached
                continue
            }
            guard description.attached else { continue }
            guard clients.values.reduce(0, { $0 + $1.pads.count }) < options.maximumPads else {
                logger.warning("\(client.name): not forwarding \(description.name): --max-pads \(options.maximumPads) reached")
                continue
            }
            let kind =
                options.virtualKind ?? description.requestedVirtualKind
                ?? VirtualPadKind.defaultKind(for: ControllerKind(rawValue: description.kind) ?? .generic)
            // The same client's same pad gets the same virtual pad (MAC) every time it comes.
            let seed = "padbridge-forward-\(client.key.hex.prefix(16))-\(description.fingerprint)"
            var created: HostedPad?
            do {
                let virtual = try VirtualPadSession(
                    kind: kind, seed: seed, loop: loop, logger: logger,
                    onFeedback: { [weak self, weak client] event in
                        guard let self, let client, let pad = created else { return }
                        pad.feedback.update(event)
                        if !client.lost { self.send(LinkHostMessage(), to: client) }
                        self.armTimer()
                    },
                    onReady: { [weak self, weak client] nodes in
                        guard let self, let client, let pad = created else { return }
                        self.onEvent(.padAttached(client: client.name, pad: description, kind: kind, nodes: nodes, mac: pad.virtual.mac))
                    })
                let pad = HostedPad(fingerprint: description.fingerprint, slot: description.slot, virtual: virtual)
                created = pad
                client.pads[description.fingerprint] = pad
            } catch {
                logger.error("\(client.name): cannot create a virtual \(kind.rawValue) pad for \(description.name): \(error)")
            }
        }
    }

    private func tick() {
        let time = now
        for client in clients.values {
            if !client.lost && client.liveness.isLost(atMicroseconds: time) {
                client.lost = true
                onEvent(.linkLost(client: client.name))
                for pad in client.pads.values {
                    pad.virtual.linger(forMilliseconds: options.lingerMilliseconds) { [weak self, weak client] in
                        guard let self, let client else { return }
                        client.pads[pad.fingerprint] = nil
                        self.onEvent(.padDestroyed(client: client.name, fingerprint: pad.fingerprint))
                        if client.pads.isEmpty {
                            self.sessions[client.session.localIndex] = nil
                            self.clients[client.key] = nil
                            self.onEvent(.clientGone(client: client.name))
                        }
                    }
                }
            } else if !client.lost && client.pads.values.contains(where: { $0.feedback.pending != nil })
                && time >= client.liveness.lastSentMicroseconds + client.liveness.retransmitIntervalMicroseconds
            {
                send(LinkHostMessage(), to: client)
            } else if !client.lost, let due = client.acknowledgementDueMicroseconds, time >= due {
                send(LinkHostMessage(), to: client)
            }
        }
        armTimer()
    }

    /// One timer for every client: the next link-lost check, feedback to send again, or a delayed acknowledgement.
    /// (The host sends no keepalives of its own: it answers the client's.)
    private func armTimer() {
        let wakes = clients.values.filter { !$0.lost }.map { client in
            var wake = client.liveness.lastHeardMicroseconds + LinkLiveness.timeoutMicroseconds
            if client.pads.values.contains(where: { $0.feedback.pending != nil }) {
                wake = min(wake, client.liveness.lastSentMicroseconds + client.liveness.retransmitIntervalMicroseconds)
            }
            if let due = client.acknowledgementDueMicroseconds { wake = min(wake, due) }
            return wake
        }
        guard let wake = wakes.min() else { timer?.cancel(); return }
        try? timer?.schedule(at: MonotonicInstant(microseconds: max(wake, now + 1)))
    }
}
