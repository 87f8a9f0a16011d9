public import Crypto
import Glibc
public import Logging
public import PadCore
public import PadLinux
import PadNoise
public import PadSessions

/// `padbridge connect`: reads the chosen pads (grabbed, through the profile) and forwards every frame to the host
/// at once; applies the host's feedback to the pads; keeps the link alive, notices its loss (rumble stops: it is a
/// lease) and reconnects by itself, the same virtual pads resuming. Loop-confined.
public final class ForwardingClient {
    public struct Options: Sendable {
        public var virtualKind: VirtualPadKind?
        public var grab: Bool
        public var profile: RemapProfile

        public init(virtualKind: VirtualPadKind?, grab: Bool, profile: RemapProfile) {
            self.virtualKind = virtualKind
            self.grab = grab
            self.profile = profile
        }
    }

    public enum Event {
        case connected
        case linkLost
        case reconnecting(afterMilliseconds: UInt64)
        case padDetached(Fingerprint)
        case padBack(Fingerprint)
        /// `--all`: a pad plugged in after the start is forwarded too.
        case padAdded(Fingerprint, name: String)
        /// No answer to the handshake for `noAnswerWarningMicroseconds`: the host is down, unreachable, or its key
        /// changed (a host with another key cannot read the handshake, so it cannot say so).
        case noAnswer
    }

    public static let noAnswerWarningMicroseconds: UInt64 = 5_000_000

    /// Counters for `--stats`.
    public struct Statistics: Sendable {
        public var framesSent = 0
        public var datagramsSent: UInt32 = 0
        public var datagramsReceived: UInt32 = 0
        /// At the host's last pong: how many of ours it had received, and how many it had sent (this session).
        public var hostReceived: UInt32 = 0
        public var hostSent: UInt32 = 0
        /// Ours sent, and theirs received, this session, when that pong came.
        public var sentWhenHostCounted: UInt32 = 0
        public var receivedWhenHostCounted: UInt32 = 0
        /// This session's counts.
        public var sessionSent: UInt32 = 0
        public var sessionReceived: UInt32 = 0
        public var roundTripMicroseconds: UInt64?
    }

    private final class ForwardedPad {
        let slot: UInt8
        let controller: Controller
        var source: (any ForwardedPadSource)?
        var sender = InputRedundancySender()
        var feedback = FeedbackStateReceiver()
        var feedbackToAcknowledge: UInt32?
        var attached = true
        init(slot: UInt8, controller: Controller) {
            self.slot = slot
            self.controller = controller
        }
    }

    private enum State {
        case handshaking(LinkClientHandshake)
        case established(LinkSessionKeys)
        case waiting
    }

    private let sender: any LinkDatagramSender
    private let clocks: LinkClocks
    private let makeSource: ForwardedPadSourceMaker
    private let host: SocketAddress
    private let hostKey: LinkPublicKey
    private let identity: Curve25519.KeyAgreement.PrivateKey
    private let options: Options
    private let logger: Logger
    private let onEvent: (Event) -> Void
    private var pads: [ForwardedPad] = []
    /// Called with the changes of feedback the host relayed for a pad (what a game sent its virtual pad), before
    /// they go to the pad.
    public var onFeedbackReceived: ((Fingerprint, Feedback) -> Void)?
    private var state = State.waiting
    private var liveness: LinkLiveness
    private var backoff = ReconnectBackoff()
    private var nextAttemptMicroseconds: UInt64 = 0
    /// When the client started trying to reach the host (at start, or when the link was lost); nil while connected.
    private var tryingSinceMicroseconds: UInt64?
    private var warnedNoAnswer = false
    private var padTableVersion: UInt32 = 1
    private var padTableAcknowledged: UInt32 = 0
    private var timer: (any LinkWakeTimer)?
    private var generator = SystemRandomNumberGenerator()
    /// The last ping sent: its clock, and how many datagrams this session had sent with it (for the loss figure).
    private var lastPing: (microseconds: UInt64, sentCount: UInt32)?
    public private(set) var statistics = Statistics()

    /// The source reading the pad with this ID (for a recorder: its events and the feedback written to it).
    public func source(for fingerprint: Fingerprint) -> (any ForwardedPadSource)? {
        pads.first { $0.controller.fingerprint == fingerprint }?.source
    }

    /// A client forwarding `controllers` from `socket`, reading them as physical pads on `loop`.
    public convenience init(
        controllers: [Controller], host: SocketAddress, hostKey: LinkPublicKey,
        identity: Curve25519.KeyAgreement.PrivateKey, socket: UDPSocket, options: Options, loop: DeviceEventLoop,
        logger: Logger, onEvent: @escaping (Event) -> Void
    ) throws {
        var tick: (() -> Void)?
        let timer = try LoopWakeTimer(loop: loop, logger: logger) { tick?() }
        try self.init(
            controllers: controllers, host: host, hostKey: hostKey, identity: identity, sender: socket, timer: timer,
            clocks: .system, options: options, logger: logger, onEvent: onEvent,
            makeSource: { controller, output in
                let target = (options.virtualKind ?? VirtualPadKind.defaultKind(for: controller.kind)).capabilities
                return try PhysicalPadSession(
                    controller: controller, profile: options.profile, target: target, grab: options.grab, loop: loop,
                    logger: logger, output: output)
            })
        tick = { [weak self] in self?.tick() }
        socket.onDatagram = { [weak self] bytes, path in self?.receive(bytes, along: path) }
    }

    /// A client over the given ports: datagrams go to `sender` and arrive through `receive(_:along:)`; `timer`
    /// calls `tick()`; `makeSource` opens each pad.
    public init(
        controllers: [Controller], host: SocketAddress, hostKey: LinkPublicKey,
        identity: Curve25519.KeyAgreement.PrivateKey, sender: any LinkDatagramSender, timer: any LinkWakeTimer,
        clocks: LinkClocks, options: Options, logger: Logger, onEvent: @escaping (Event) -> Void,
        makeSource: @escaping ForwardedPadSourceMaker
    ) throws {
        self.sender = sender
        self.timer = timer
        self.clocks = clocks
        self.makeSource = makeSource
        self.host = host
        self.hostKey = hostKey
        self.identity = identity
        self.options = options
        self.logger = logger
        self.onEvent = onEvent
        let start = clocks.monotonicMicroseconds()
        liveness = LinkLiveness(startingAtMicroseconds: start)
        tryingSinceMicroseconds = start
        for (index, controller) in controllers.enumerated() {
            try add(controller, slot: UInt8(index))
        }
        connect()
    }

    /// Starts reading `controller` and announces it to the host in the next pad table.
    private func add(_ controller: Controller, slot: UInt8) throws {
        let pad = ForwardedPad(slot: slot, controller: controller)
        // unowned(unsafe): no reference counting per frame. Sound because the source belongs to the pad, which
        // this client keeps until close(), which closes the source first.
        let source = try makeSource(controller) { [unowned(unsafe) self, unowned(unsafe) pad] snapshot in
            self.forward(snapshot, of: pad)
        }
        source.onDetached = { [weak self, weak pad] in
            guard let self, let pad else { return }
            pad.attached = false
            self.padTableVersion &+= 1
            self.onEvent(.padDetached(controller.fingerprint))
            self.sendNow()
        }
        source.onReattached = { [weak self, weak pad] in
            guard let self, let pad else { return }
            pad.attached = true
            self.padTableVersion &+= 1
            self.onEvent(.padBack(controller.fingerprint))
            self.sendNow()
        }
        pad.source = source
        pads.append(pad)
    }

    /// For `--all`, after a hotplug burst: forwards every pad in `controllers` not forwarded yet (a pad plugged in
    /// after the start; never a bridge's own virtual pad), each in the next free slot; the host makes its virtual pad when the new pad table
    /// arrives. A pad that cannot be opened is logged and left out (it is tried again at the next burst).
    public func addNewPads(from controllers: [Controller]) {
        var added = false
        for controller in controllers.sorted(by: { $0.fingerprint < $1.fingerprint })
        where !controller.isBridgeOutput && !pads.contains(where: { $0.controller.fingerprint == controller.fingerprint }) {
            guard let slot = (0...UInt8.max).first(where: { slot in !pads.contains { $0.slot == slot } }) else {
                logger.warning("not forwarding \(controller.name): every pad slot is in use")
                return
            }
            do {
                try add(controller, slot: slot)
            } catch {
                logger.warning("cannot forward \(controller.name) [\(controller.fingerprint)]: \(error)")
                continue
            }
            added = true
            onEvent(.padAdded(controller.fingerprint, name: controller.name))
        }
        guard added else { return }
        padTableVersion &+= 1
        sendNow()
    }

    /// Whether a pad waits to come back (for the hotplug handler).
    public var isWaitingForAPad: Bool { pads.contains { !$0.attached } }

    /// After a hotplug burst: reads again the pads that came back.
    public func resume(from controllers: [Controller]) {
        for pad in pads where !pad.attached { pad.source?.resume(from: controllers) }
    }

    /// Stops forwarding and leaves the pads quiet and ungrabbed; the host sees the link end (its pads go neutral).
    public func close() {
        timer?.close()
        timer = nil
        for pad in pads {
            pad.source?.close()
            pad.source = nil
        }
    }

    private var now: UInt64 { clocks.monotonicMicroseconds() }

    private func connect() {
        let wallClock = clocks.wallClockMicroseconds()
        guard let handshake = try? LinkClientHandshake(identity: identity, hostKey: hostKey, wallClockMicroseconds: wallClock)
        else { return }
        state = .handshaking(handshake)
        sender.send(handshake.initiation, along: DatagramPath(remote: host))
        statistics.datagramsSent &+= 1
        let delay = backoff.nextDelayMicroseconds(jitter: Double.random(in: 0...1, using: &generator))
        nextAttemptMicroseconds = now + delay
        armTimer()
    }

    private func forward(_ snapshot: PadSnapshot, of pad: ForwardedPad) {
        pad.sender.record(snapshot)
        statistics.framesSent += 1
        guard case .established = state else { return }
        var message = LinkClientMessage()
        message.inputs = [(pad.slot, pad.sender.framesToSend)]
        liveness.sentNewInput()
        send(message)
    }

    /// A message with everything unacknowledged (all pads' frames, the pad table, feedback acknowledgements).
    /// `resending`: the newest frames went unacknowledged for the retransmission interval; the host is asked to
    /// acknowledge them (it does not for a stream of analog frames, which would double the traffic).
    private func sendNow(ping: Bool = false, resending: Bool = false) {
        guard case .established = state else { return }
        var message = LinkClientMessage()
        message.inputs = pads.filter { $0.sender.newest != nil }.map { ($0.slot, $0.sender.framesToSend) }
        if ping {
            let clock = now
            message.pingMicroseconds = clock
            lastPing = (clock, statistics.sessionSent &+ 1)
        }
        message.wantsAcknowledgement = resending
        send(message)
    }

    private func send(_ base: LinkClientMessage) {
        guard case var .established(session) = state else { return }
        var message = base
        if padTableAcknowledged != padTableVersion {
            message.padTable = (padTableVersion, pads.map { pad in
                LinkPadDescription(
                    slot: pad.slot, fingerprint: pad.controller.fingerprint, kind: pad.controller.kind.rawValue,
                    requestedVirtualKind: options.virtualKind, attached: pad.attached, name: pad.controller.name)
            })
        }
        message.wantsAcknowledgement = message.wantsAcknowledgement || pads.contains { !$0.sender.unacknowledged.isEmpty }
        message.feedbackAcknowledgements = pads.compactMap { pad in pad.feedbackToAcknowledge.map { (pad.slot, $0) } }
        for pad in pads { pad.feedbackToAcknowledge = nil }
        guard let datagram = try? session.seal(message.encoded) else { return }
        state = .established(session)
        sender.send(datagram, along: DatagramPath(remote: host))
        statistics.datagramsSent &+= 1
        statistics.sessionSent &+= 1
        liveness.sent(atMicroseconds: now)
        armTimer()
    }

    /// One datagram that arrived along `path` (anything not from the host is ignored).
    public func receive(_ bytes: UnsafeRawBufferPointer, along path: DatagramPath) {
        guard path.remote == host, let datagram = LinkDatagram(bytes) else { return }
        switch (state, datagram) {
        case (.handshaking(var handshake), .response):
            guard let session = handshake.complete(with: datagram) else { return }
            state = .established(session)
            statistics.datagramsReceived &+= 1
            statistics.sessionSent = 0
            statistics.sessionReceived = 0
            liveness = LinkLiveness(startingAtMicroseconds: now)
            backoff.reset()
            padTableAcknowledged = 0
            tryingSinceMicroseconds = nil
            warnedNoAnswer = false
            onEvent(.connected)
            sendNow(ping: true)
        case (.established(var session), let .transport(_, counter, ciphertext)):
            guard let plaintext = session.open(counter: counter, ciphertext: ciphertext),
                let message = try? LinkHostMessage(decoding: plaintext)
            else { return }
            state = .established(session)
            statistics.datagramsReceived &+= 1
            statistics.sessionReceived &+= 1
            liveness.heard(atMicroseconds: now)
            handle(message)
        default:
            return
        }
        armTimer()
    }

    private func handle(_ message: LinkHostMessage) {
        if let version = message.padTableAcknowledgement, version == padTableVersion { padTableAcknowledged = version }
        if let pong = message.pong {
            let sample = now > pong.echoedMicroseconds ? now - pong.echoedMicroseconds : 0
            liveness.roundTrip(sample)
            statistics.roundTripMicroseconds = liveness.smoothedRoundTripMicroseconds
            statistics.hostReceived = pong.receivedDatagrams
            statistics.hostSent = pong.sentDatagrams
            // Compared with what had been sent up to that ping (not since), and received up to this pong.
            if let lastPing, lastPing.microseconds == pong.echoedMicroseconds {
                statistics.sentWhenHostCounted = lastPing.sentCount
                statistics.receivedWhenHostCounted = statistics.sessionReceived
            }
        }
        for acknowledgement in message.inputAcknowledgements {
            pads.first { $0.slot == acknowledgement.slot }?.sender.acknowledge(acknowledgement.applied)
        }
        var acknowledge = false
        for item in message.feedback {
            guard let pad = pads.first(where: { $0.slot == item.slot }) else { continue }
            if let changes = pad.feedback.receive(version: item.version, state: item.state) {
                onFeedbackReceived?(pad.controller.fingerprint, changes)
                pad.source?.submit(changes)
            }
            pad.feedbackToAcknowledge = item.version
            acknowledge = true
        }
        if acknowledge || padTableAcknowledged != padTableVersion { sendNow() }
    }

    /// What is due now: a keepalive, a resend, a quick copy, the link-lost check, a reconnection attempt.
    public func tick() {
        let time = now
        switch state {
        case .established:
            if liveness.isLost(atMicroseconds: time) {
                onEvent(.linkLost)
                for pad in pads { if let stop = pad.feedback.linkLost() { pad.source?.submit(stop) } }
                state = .waiting
                tryingSinceMicroseconds = time
                let delay = backoff.nextDelayMicroseconds(jitter: Double.random(in: 0...1, using: &generator))
                nextAttemptMicroseconds = time + delay
                onEvent(.reconnecting(afterMilliseconds: delay / 1000))
            } else if liveness.isKeepaliveDue(atMicroseconds: time) {
                sendNow(ping: true)
            } else if liveness.isQuickCopyDue(atMicroseconds: time, hasUnacknowledged: hasUnacknowledgedInput) {
                sendNow(resending: true)
                liveness.sentQuickCopy()
            } else if hasUnacknowledgedInput
                && time >= liveness.lastSentMicroseconds + liveness.retransmitIntervalMicroseconds
            {
                // Also for an analog change alone: a lost datagram with a stick's return to centre must not
                // leave the host's stick deflected until the next keepalive.
                sendNow(resending: true)
            }
        case .handshaking, .waiting:
            if let since = tryingSinceMicroseconds, !warnedNoAnswer, time >= since + Self.noAnswerWarningMicroseconds {
                warnedNoAnswer = true
                onEvent(.noAnswer)
            }
            if time >= nextAttemptMicroseconds { connect() }
        }
        armTimer()
    }

    /// Whether the host has yet to acknowledge a pad's newest frame (or a press, release or touch before it).
    private var hasUnacknowledgedInput: Bool { pads.contains { $0.sender.hasUnacknowledged } }

    private func armTimer() {
        let wake: UInt64
        switch state {
        case .established:
            wake = liveness.nextWakeMicroseconds(hasUnacknowledged: hasUnacknowledgedInput)
        case .handshaking, .waiting:
            wake = nextAttemptMicroseconds
        }
        timer?.schedule(atMicroseconds: max(wake, now + 1))
    }
}
