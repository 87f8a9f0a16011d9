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
        let virtual: any HostedVirtualPad
        var receiver = InputRedundancyReceiver()
        var feedback = FeedbackStateSender()
        var attached = true
        /// While lingering: when the pad is destroyed unless its source comes back.
        var lingerEndsMicroseconds: UInt64?
        /// The last snapshot applied from the client (shown again when a lost client is heard again).
        var lastApplied: PadSnapshot?
        init(fingerprint: Fingerprint, slot: UInt8, virtual: any HostedVirtualPad) {
            self.fingerprint = fingerprint
            self.slot = slot
            self.virtual = virtual
        }
    }

    private final class HostedClient {
        let key: LinkPublicKey
        let name: String
        var path: DatagramPath
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
        init(key: LinkPublicKey, name: String, path: DatagramPath, session: LinkSessionKeys, now: UInt64, clock: UInt64) {
            self.key = key
            self.name = name
            self.path = path
            self.session = session
            liveness = LinkLiveness(startingAtMicroseconds: now)
            lastInitiationClock = clock
        }
        func pad(inSlot slot: UInt8) -> HostedPad? { pads.values.first { $0.slot == slot } }
    }

    private let sender: any LinkDatagramSender
    private let identity: Curve25519.KeyAgreement.PrivateKey
    private let store: TrustStore
    private let options: Options
    private let clocks: LinkClocks
    private let makePad: HostedVirtualPadMaker
    private let logger: Logger
    private let onEvent: (Event) -> Void
    private var clients: [LinkPublicKey: HostedClient] = [:]
    /// Sessions by their index, each pointing at its client.
    private var sessions: [UInt32: LinkPublicKey] = [:]
    private var timer: (any LinkWakeTimer)?
    private var refusals = RateLimitedCount(intervalMicroseconds: 1_000_000)
    /// Handles datagrams that are not the link's (pairing), when set.
    public var onOtherDatagram: ((UnsafeRawBufferPointer, DatagramPath) -> Void)?

    /// A host on `socket`'s datagrams, making real virtual pads on `loop`.
    public convenience init(
        socket: UDPSocket, identity: Curve25519.KeyAgreement.PrivateKey, store: TrustStore, options: Options,
        loop: DeviceEventLoop, logger: Logger, onEvent: @escaping (Event) -> Void
    ) throws(DeviceAccessError) {
        var tick: (() -> Void)?
        let timer = try LoopWakeTimer(loop: loop, logger: logger) { tick?() }
        self.init(
            sender: socket, timer: timer, clocks: .system, identity: identity, store: store, options: options,
            logger: logger, onEvent: onEvent,
            makePad: { kind, seed, onFeedback, onReady in
                try VirtualPadSession(
                    kind: kind, seed: seed, loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
            })
        tick = { [weak self] in self?.tick() }
        socket.onDatagram = { [weak self] bytes, path in self?.receive(bytes, along: path) }
    }

    /// A host over the given ports: datagrams go to `sender`, arrive through `receive(_:along:)`; `timer` calls
    /// `tick()` when it fires.
    public init(
        sender: any LinkDatagramSender, timer: any LinkWakeTimer, clocks: LinkClocks,
        identity: Curve25519.KeyAgreement.PrivateKey, store: TrustStore, options: Options, logger: Logger,
        onEvent: @escaping (Event) -> Void, makePad: @escaping HostedVirtualPadMaker
    ) {
        self.sender = sender
        self.timer = timer
        self.clocks = clocks
        self.identity = identity
        self.store = store
        self.options = options
        self.logger = logger
        self.onEvent = onEvent
        self.makePad = makePad
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

    private var now: UInt64 { clocks.monotonicMicroseconds() }

    private func drop(_ reason: String) {
        if let count = refusals.note(atMicroseconds: now) { onEvent(.dropped(count: count, reason: reason)) }
    }

    /// One datagram that arrived along `path`.
    public func receive(_ bytes: UnsafeRawBufferPointer, along path: DatagramPath) {
        guard let datagram = LinkDatagram(bytes) else {
            if let first = bytes.first, PairingDatagram.firstByte.contains(first), let other = onOtherDatagram {
                other(bytes, path)
            } else {
                drop("not padbridge's")
            }
            return
        }
        switch datagram {
        case .initiation:
            handshake(datagram, along: path)
        case let .transport(index, counter, ciphertext):
            guard let key = sessions[index], let client = clients[key], client.session.localIndex == index,
                let plaintext = client.session.open(counter: counter, ciphertext: ciphertext)
            else { return drop("unauthenticated, replayed or for no session") }
            guard let message = try? LinkClientMessage(decoding: plaintext) else { return drop("malformed") }
            client.path = path
            client.receivedDatagrams &+= 1
            client.liveness.heard(atMicroseconds: now)
            if client.lost { resume(client) }
            handle(message, from: client)
        case .response:
            drop("a response sent to the host")
        }
        armTimer()
    }

    private func handshake(_ datagram: LinkDatagram, along path: DatagramPath) {
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
        sender.send(response, along: path)
        let name = paired.first { $0.key == key }?.name ?? key.fingerprint
        if let client = clients[key] {
            sessions[client.session.localIndex] = nil
            client.session = session
            client.path = path
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
            clients[key] = HostedClient(key: key, name: name, path: path, session: session, now: now, clock: clock)
            onEvent(.clientConnected(name: name, address: path.remote))
        }
        sessions[session.localIndex] = key
    }

    /// A client given up for lost is heard again: its pads end their linger and show at once what they last showed
    /// (the client sends a frame only when something changes: a button held through the outage sends none).
    private func resume(_ client: HostedClient) {
        client.lost = false
        onEvent(.resumed(client: client.name))
        for pad in client.pads.values where pad.attached {
            pad.lingerEndsMicroseconds = nil
            if let last = pad.lastApplied { pad.virtual.apply(last) }
        }
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
            for snapshot in pad.receiver.receive(input.frames) {
                pad.lingerEndsMicroseconds = nil
                pad.lastApplied = snapshot
                pad.virtual.apply(snapshot)
            }
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
        sender.send(datagram, along: client.path)
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
                let virtual = try makePad(
                    kind, seed,
                    { [weak self, weak client] event in
                        guard let self, let client, let pad = created else { return }
                        pad.feedback.update(event)
                        if !client.lost { self.send(LinkHostMessage(), to: client) }
                        self.armTimer()
                    },
                    { [weak self, weak client] nodes in
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

    /// What is due now: pads whose linger ran out, lost links, feedback to send again, delayed acknowledgements.
    public func tick() {
        let time = now
        for client in Array(clients.values) {
            for pad in Array(client.pads.values) {
                guard let ends = pad.lingerEndsMicroseconds, time >= ends else { continue }
                pad.virtual.close()
                client.pads[pad.fingerprint] = nil
                onEvent(.padDestroyed(client: client.name, fingerprint: pad.fingerprint))
                if client.pads.isEmpty {
                    sessions[client.session.localIndex] = nil
                    clients[client.key] = nil
                    onEvent(.clientGone(client: client.name))
                }
            }
            guard clients[client.key] != nil else { continue }
            if !client.lost && client.liveness.isLost(atMicroseconds: time) {
                client.lost = true
                onEvent(.linkLost(client: client.name))
                for pad in client.pads.values {
                    pad.virtual.goNeutral()
                    pad.lingerEndsMicroseconds = time + options.lingerMilliseconds * 1000
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
        var wake: UInt64?
        for client in clients.values {
            for pad in client.pads.values { if let ends = pad.lingerEndsMicroseconds { wake = min(wake ?? ends, ends) } }
            guard !client.lost else { continue }
            var due = client.liveness.lastHeardMicroseconds + LinkLiveness.timeoutMicroseconds
            if client.pads.values.contains(where: { $0.feedback.pending != nil }) {
                due = min(due, client.liveness.lastSentMicroseconds + client.liveness.retransmitIntervalMicroseconds)
            }
            if let acknowledgement = client.acknowledgementDueMicroseconds { due = min(due, acknowledgement) }
            wake = min(wake ?? due, due)
        }
        guard let wake else { timer?.cancel(); return }
        timer?.schedule(atMicroseconds: max(wake, now + 1))
    }
}
