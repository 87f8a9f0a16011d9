public import Crypto
public import Logging
public import PadCore

/// `padbridge connect`: reads the chosen pads (grabbed, through the profile) and forwards every frame to the host
/// at once; applies the host's feedback to the pads; keeps the link alive, notices its loss (rumble stops: it is a
/// lease) and reconnects by itself, the same virtual pads resuming; renews its session every
/// `LinkSessionLifetime.rekeyAfterMicroseconds` without a gap. Loop-confined.
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
        /// `--all`: a pad plugged in is not forwarded: the client forwards `LinkClientMessage.maximumPads` at most.
        case tooManyPads(name: String)
        /// No answer to the handshake for `noAnswerWarningMicroseconds`: the host is down, unreachable, or its key
        /// changed (a host with another key cannot read the handshake, so it cannot say so).
        case noAnswer
        /// Another `connect` with this machine's identity connected to the host, which ended this one's session:
        /// this client stops (it would otherwise take the link back, and the two would take turns).
        case takenOver
        /// The host no longer accepts this client (its pairing was revoked there) and ended its session: this client
        /// stops (the host would answer no handshake of it).
        case revoked
        /// The host gives this pad no virtual pad, and why (its words). Told when a pad's reason changes: the first
        /// time the host lists it, when the reason differs from the one told, and again after the host stopped
        /// listing it (it got a virtual pad, or was unplugged) and lists it once more.
        case padNotForwarded(Fingerprint, reason: String)

        /// Which event, without what it carries (what tests and structured output match on, never its text).
        public enum Kind: String, Sendable, CaseIterable {
            case connected, linkLost, reconnecting, padDetached, padBack, padAdded, tooManyPads, noAnswer, takenOver, revoked, padNotForwarded
        }

        public var kind: Kind {
            switch self {
            case .connected: .connected
            case .linkLost: .linkLost
            case .reconnecting: .reconnecting
            case .padDetached: .padDetached
            case .padBack: .padBack
            case .padAdded: .padAdded
            case .tooManyPads: .tooManyPads
            case .noAnswer: .noAnswer
            case .takenOver: .takenOver
            case .revoked: .revoked
            case .padNotForwarded: .padNotForwarded
            }
        }
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

    /// What went wrong making a client.
    public struct SetupError: Error, CustomStringConvertible {
        public var description: String
    }

    private final class ForwardedPad {
        let slot: UInt8
        let controller: Controller
        var source: (any ForwardedPadSource)?
        var sender = InputRedundancySender()
        var feedback = FeedbackStateReceiver()
        var feedbackToAcknowledge: UInt32?
        var attached = true
        /// Frames of this pad went out in an earlier session (so the host may have applied some of them).
        var continuesNumbering = false
        /// Frames of this pad went out in some session.
        var framesSent = false
        /// The host's reason for giving it no virtual pad, as last told (`Event.padNotForwarded`); nil while the host
        /// lists it not (it has a virtual pad, or is unplugged). One per pad, and pads are the table's: bounded.
        var notForwardedReasonTold: String?
        init(slot: UInt8, controller: Controller) {
            self.slot = slot
            self.controller = controller
        }
    }

    private enum State {
        case waiting
        /// (Boxed: the handshake is large, and every read of the state on a frame's path copied the largest case.)
        indirect case handshaking(LinkClientHandshake)
        /// A session is established: its `current` carries everything sent, its `previous` (the one a renewal
        /// replaced) still opens the host's datagrams sent before the host switched.
        case established(LinkSessionSet)
        /// Another connect took the link over, or the host revoked this client: nothing more is sent.
        case stopped
    }

    private let sender: any LinkDatagramSender
    private let clocks: LinkClocks
    private let makeSource: ForwardedPadSourceMaker
    private var host: SocketAddress
    private var hostPath: DatagramPath
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
    /// A renewal of the established session under way: its handshake, and when its initiation was last sent. Only
    /// while established (every way out of it forgets the renewal).
    private var renewal: (handshake: LinkClientHandshake, sentMicroseconds: UInt64)?
    /// The clock of the last initiation sent: never sent smaller, whatever the wall clock does meanwhile.
    private var lastInitiationClock: UInt64 = 0
    /// The cookie a host under load gave this client for its address, and when: later initiations carry it while
    /// the host still honours it.
    private var cookie: (bytes: [UInt8], receivedMicroseconds: UInt64)?
    private var liveness: LinkLiveness
    private var backoff = ReconnectBackoff()
    private var nextAttemptMicroseconds: UInt64 = 0
    /// When the client started trying to reach the host (at start, or when the link was lost); nil while connected.
    private var tryingSinceMicroseconds: UInt64?
    private var warnedNoAnswer = false
    private var padTableVersion: UInt32 = 1
    private var padTableAcknowledged: UInt32 = 0
    /// The older table version the host's messages acknowledged when this client last sent its table at once in
    /// answer (nil: none since the table was acknowledged or the session began).
    private var olderTableAnswered: UInt32?
    private var timer: (any LinkWakeTimer)?
    /// What the closures this client hands out call it through (no weak reference: see `OwnerReference`).
    /// Called when this client goes (production: its socket stops handing datagrams here).
    public var onDeinit: (() -> Void)?

    /// What a datagram source calls for each datagram: `receive(_:along:)` through this client's owner reference,
    /// nothing once the client is gone (and no weak reference loaded per datagram).
    public var datagramHandler: (UnsafeRawBufferPointer, DatagramPath) -> Void {
        { [owner] bytes, path in owner.target?.receive(bytes, along: path) }
    }

    /// What the wake-up timer calls: `tick()`, nothing once the client is gone.
    public var tickHandler: () -> Void { { [owner] in owner.target?.tick() } }
    private let owner = OwnerReference<ForwardingClient>()
    private var generator = SystemRandomNumberGenerator()
    /// The last ping sent: its clock, and how many datagrams this session had sent with it (for the loss figure).
    private var lastPing: (microseconds: UInt64, sentCount: UInt32)?
    /// At the last pong of the session in use: the host's count of datagrams it sent in it, and how many of them had
    /// arrived here, that pong included (the next ping tells the host). Nil in a session before its first pong.
    private var sessionPongCounts: (hostSent: UInt32, received: UInt32)?
    public private(set) var statistics = Statistics()
    /// Buffers of the per-frame path, kept so that it allocates nothing: the message encoder, a sealed datagram, a
    /// received datagram's plaintext.
    private var encoder = LinkClientMessageEncoder()
    private var sealed: [UInt8] = {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(2_048)
        return buffer
    }()
    private var plaintext: [UInt8] = {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(2_048)
        return buffer
    }()

    /// The socket (`sender`, in production) stops handing its datagrams here; `owner` is nil for any closure
    /// that runs while the rest of this client is destroyed.
    deinit {
        owner.target = nil
        onDeinit?()
    }

    /// A client over the given ports: datagrams go to `sender` and arrive through `receive(_:along:)`; `timer`
    /// calls `tick()`; `makeSource` opens each pad.
    public init(
        controllers: [Controller], host: SocketAddress, hostKey: LinkPublicKey,
        identity: Curve25519.KeyAgreement.PrivateKey, sender: any LinkDatagramSender, timer: any LinkWakeTimer,
        clocks: LinkClocks, options: Options, logger: Logger, onEvent: @escaping (Event) -> Void,
        makeSource: @escaping ForwardedPadSourceMaker
    ) throws {
        guard controllers.count <= LinkClientMessage.maximumPads else {
            throw SetupError(
                description: "one connect forwards at most \(LinkClientMessage.maximumPads) pads (\(controllers.count) given)")
        }
        self.sender = sender
        self.timer = timer
        self.clocks = clocks
        self.makeSource = makeSource
        self.host = host
        hostPath = DatagramPath(remote: host)
        self.hostKey = hostKey
        self.identity = identity
        self.options = options
        self.logger = logger
        self.onEvent = onEvent
        let start = clocks.monotonicMicroseconds()
        liveness = LinkLiveness(startingAtMicroseconds: start, countsSilenceOnlyWhileSending: true)
        tryingSinceMicroseconds = start
        owner.target = self
        for (index, controller) in controllers.enumerated() {
            try add(controller, slot: UInt8(index))
        }
        connect()
    }

    /// Starts reading `controller` and announces it to the host in the next pad table.
    private func add(_ controller: Controller, slot: UInt8) throws {
        // A table with a pad whose ID or kind breaks the rules would have that pad refused by the host: such a pad is
        // not forwarded at all (padbridge's IDs are 12 hex digits and its kinds `ControllerKind`'s, so this is a
        // safeguard for IDs from elsewhere).
        if let refusal = LinkPadDescription.refusal(id: controller.fingerprint.rawValue, kind: controller.kind.rawValue) {
            throw SetupError(description: "cannot forward \(controller.name): \(refusal)")
        }
        let pad = ForwardedPad(slot: slot, controller: controller)
        // unowned(unsafe): no reference counting per frame. Sound because the source belongs to the pad, which
        // this client keeps until close(), which closes the source first.
        let source = try makeSource(controller) { [unowned(unsafe) self, unowned(unsafe) pad] snapshot in
            self.forward(snapshot, of: pad)
        }
        // As above for the pad; the client through `owner` (nil while this client is destroyed).
        source.onDetached = { [owner, unowned(unsafe) pad] in
            guard let self = owner.target else { return }
            pad.attached = false
            self.padTableVersion &+= 1
            self.onEvent(.padDetached(controller.fingerprint))
            self.sendNow()
        }
        source.onReattached = { [owner, unowned(unsafe) pad] in
            guard let self = owner.target else { return }
            pad.attached = true
            // A pad plugged in again starts from nothing: what the game set (lights, LEDs, trigger effects, rumble)
            // goes to it again.
            if !pad.feedback.applied.isEmpty { pad.source?.submit(pad.feedback.applied) }
            self.padTableVersion &+= 1
            self.onEvent(.padBack(controller.fingerprint))
            self.sendNow()
        }
        pad.source = source
        pads.append(pad)
    }

    /// For `--all`, after a hotplug burst: forwards every pad in `controllers` not forwarded yet (a pad plugged in
    /// after the start; never a bridge's own virtual pad), each in the next free slot; the host makes its virtual
    /// pad when the new pad table arrives. A pad that cannot be opened is logged and left out (it is tried again at
    /// the next burst).
    public func addNewPads(from controllers: [Controller]) {
        var added = false
        for controller in controllers.sorted(by: { $0.fingerprint < $1.fingerprint })
        where !controller.isBridgeOutput && !pads.contains(where: { $0.controller.fingerprint == controller.fingerprint }) {
            guard pads.count < LinkClientMessage.maximumPads,
                let slot = (0...UInt8.max).first(where: { slot in !pads.contains { $0.slot == slot } })
            else {
                onEvent(.tooManyPads(name: controller.name))
                break
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

    /// Where the handshake goes now.
    public var hostAddress: SocketAddress { host }

    /// Sends to `address` from now on, while no session is established (the host found at another address: the
    /// announcement of its key's fingerprint names where to try; the handshake with the pinned key decides): a
    /// handshake goes there at once. Returns false, changing nothing, while a session is established or stopped.
    @discardableResult
    public func retarget(to address: SocketAddress) -> Bool {
        switch state {
        case .established, .stopped: return false
        case .waiting, .handshaking: break
        }
        guard address != host else { return true }
        host = address
        hostPath = DatagramPath(remote: address)
        backoff.reset()  // a new address gets the quick first retries
        connect()
        return true
    }

    private var now: UInt64 { clocks.monotonicMicroseconds() }

    /// A handshake initiation with a clock later than any sent before by this client (the host refuses an
    /// initiation not later than its live session's: a wall clock stepping back must not make this client's own
    /// renewal look like a replay).
    private func makeHandshake() -> LinkClientHandshake? {
        let clock = max(clocks.wallClockMicroseconds(), lastInitiationClock &+ 1)
        lastInitiationClock = clock
        let fresh = cookie.flatMap { now < $0.receivedMicroseconds + AddressCookies.secretLifetimeMicroseconds ? $0.bytes : nil }
        return try? LinkClientHandshake(identity: identity, hostKey: hostKey, wallClockMicroseconds: clock, cookie: fresh)
    }

    /// A host under load asked the initiation in flight for a cookie: it goes again at once, carrying it.
    private func resend(withCookieFrom datagram: LinkDatagram, _ handshake: inout LinkClientHandshake) -> Bool {
        guard handshake.takeCookie(from: datagram), let bytes = handshake.cookie else { return false }
        cookie = (bytes, now)
        sender.send(handshake.initiation, along: hostPath)
        statistics.datagramsSent &+= 1
        return true
    }

    private func connect() {
        guard let handshake = makeHandshake() else { return }
        state = .handshaking(handshake)
        sender.send(handshake.initiation, along: hostPath)
        statistics.datagramsSent &+= 1
        let delay = backoff.nextDelayMicroseconds(jitter: Double.random(in: 0...1, using: &generator))
        nextAttemptMicroseconds = now + delay
        armTimer()
    }

    /// Starts (or repeats) the renewal of the session in use.
    private func renewSession(at time: UInt64) {
        let handshake = renewal?.handshake ?? makeHandshake()
        guard let handshake else { return }
        renewal = (handshake, time)
        sender.send(handshake.initiation, along: hostPath)
        statistics.datagramsSent &+= 1
    }

    private func forward(_ snapshot: PadSnapshot, of pad: ForwardedPad) {
        pad.sender.record(snapshot)
        statistics.framesSent += 1
        guard case .established = state else { return }
        // A new press, release or touch gets quick copies while unacknowledged; a stick's or a gyro's stream does
        // not (its next frame comes sooner; its last value is sent again after the retransmission interval).
        if !pad.sender.unacknowledged.isEmpty { liveness.sentNewInput() }
        send(only: pad)
    }

    /// Everything unacknowledged (all pads' frames, the pad table, feedback acknowledgements), in as many datagrams
    /// as it takes. `resending`: the newest frames went unacknowledged for the retransmission interval; the host is
    /// asked to acknowledge them (it does not for a stream of analog frames, which would double the traffic).
    private func sendNow(ping: Bool = false, resending: Bool = false) {
        guard case .established = state else { return }
        send(only: nil, ping: ping ? makePing() : nil, resending: resending)
    }

    /// A ping for the send about to go, remembered to match its pong: this client's clock, what this session's last
    /// pong said the host had sent with how many of those had come (the host's loss towards this client), and this
    /// client's round trip (the host's status shows it).
    private func makePing() -> LinkPing {
        let clock = now
        lastPing = (clock, statistics.sessionSent &+ 1)
        return LinkPing(
            clockMicroseconds: clock, hostSent: sessionPongCounts?.hostSent ?? 0,
            receivedWhenHostCounted: sessionPongCounts?.received ?? 0,
            roundTripMicroseconds: UInt32(clamping: liveness.smoothedRoundTripMicroseconds ?? 0))
    }

    /// One send: the pad table while unacknowledged, a ping, feedback acknowledgements, and `pad`'s frames (every
    /// pad's when nil), written, sealed and sent in place (no allocation once the pad table is acknowledged).
    private func send(only pad: ForwardedPad?, ping: LinkPing? = nil, resending: Bool = false) {
        guard case let .established(sessions) = state, sessions.current != nil else { return }
        var ping = ping
        // A stream never lets a keepalive fall due: its datagrams carry a ping now and then instead.
        if ping == nil, let lastPing, now >= lastPing.microseconds + LinkLiveness.streamPingIntervalMicroseconds {
            ping = makePing()
        }
        let table: (UInt32, [LinkPadDescription])? =
            padTableAcknowledged == padTableVersion
            ? nil
            : (padTableVersion, pads.map { pad in
                LinkPadDescription(
                    slot: pad.slot, fingerprint: pad.controller.fingerprint, kind: pad.controller.kind.rawValue,
                    requestedVirtualKind: options.virtualKind, attached: pad.attached, name: pad.controller.name,
                    continuesNumbering: pad.continuesNumbering)
            })
        encoder.begin(
            padTable: table, ping: ping,
            wantsAcknowledgement: resending || pads.contains { !$0.sender.unacknowledged.isEmpty },
            feedbackAcknowledgements: pads.lazy.compactMap { pad in pad.feedbackToAcknowledge.map { (slot: pad.slot, version: $0) } })
        for pad in pads { pad.feedbackToAcknowledge = nil }
        if let pad {
            append(pad)
        } else {
            for pad in pads where pad.sender.newestSequence != nil { append(pad) }
        }
        encoder.end(emit: transmit)
        liveness.sent(atMicroseconds: now)
        armTimer()
    }

    private func append(_ pad: ForwardedPad) {
        pad.framesSent = true
        encoder.append(
            slot: pad.slot, base: pad.sender.acknowledged, continues: false, frames: pad.sender.framesToSendInPlace,
            emit: transmit)
    }

    /// Seals one message with the session in use and sends it.
    private func transmit(_ message: [UInt8]) {
        guard case let .established(sessions) = state, let session = sessions.current,
            (try? session.keys.seal(message, into: &sealed)) != nil
        else { return }
        sender.send(sealed, along: hostPath)
        statistics.datagramsSent &+= 1
        statistics.sessionSent &+= 1
    }

    /// One datagram that arrived along `path` (anything not from the host is ignored).
    public func receive(_ bytes: UnsafeRawBufferPointer, along path: DatagramPath) {
        guard path.remote == host else { return }
        if LinkDatagram.transportHeader(of: bytes) != nil {
            guard case let .established(sessions) = state else { return }
            var fromCurrentSession = true
            var opened = sessions.current?.keys.open(datagram: bytes, into: &plaintext) ?? false
            if !opened, let previous = sessions.previous {
                opened = previous.keys.open(datagram: bytes, into: &plaintext)
                fromCurrentSession = false
            }
            guard opened, let message = try? LinkHostMessageView(plaintext) else { return }
            statistics.datagramsReceived &+= 1
            // The session's count is of its own datagrams (the host counts its sent ones per session too).
            if fromCurrentSession { statistics.sessionReceived &+= 1 }
            liveness.heard(atMicroseconds: now)
            if message.takenOver || message.revoked {
                if fromCurrentSession { stop(because: message.revoked ? .revoked : .takenOver) }
                return
            }
            handle(message, fromCurrentSession: fromCurrentSession)
        } else if bytes.first == LinkDatagram.MessageType.cookieReply.rawValue, let datagram = LinkDatagram(bytes) {
            // A host under load asks the initiation in flight to prove this client's address (its cookie).
            switch state {
            case .handshaking(var handshake):
                if resend(withCookieFrom: datagram, &handshake) { state = .handshaking(handshake) }
            case .established:
                guard var renewing = renewal, resend(withCookieFrom: datagram, &renewing.handshake) else { return }
                renewal = renewing
            case .waiting, .stopped:
                return
            }
            return
        } else if bytes.first == LinkDatagram.MessageType.response.rawValue, let datagram = LinkDatagram(bytes) {
            switch state {
            case .handshaking(var handshake):
                guard let keys = handshake.complete(with: datagram) else { return }
                established(keys)
                statistics.datagramsReceived &+= 1
                onEvent(.connected)
                sendNow(ping: true)
            case let .established(sessions):
                guard var renewing = renewal?.handshake, let keys = renewing.complete(with: datagram) else { return }
                // The renewed session carries everything from now on (its first datagram, just below, makes it the
                // host's); the old one still opens what the host sent before it switched.
                renewal = nil
                sessions.initiated(LinkSession(keys: keys, startedMicroseconds: now, path: hostPath))
                padTableAcknowledged = 0
                olderTableAnswered = nil
                numberPadsOn()
                statistics.datagramsReceived &+= 1
                statistics.sessionSent = 0
                statistics.sessionReceived = 0
                sessionPongCounts = nil
                sendNow(ping: true)
            case .waiting, .stopped:
                return
            }
        } else {
            return
        }
        armTimer()
    }

    /// A new session: the pads whose frames went out in an earlier one number on, and the table says so (a pad
    /// whose frames were only read, before this `connect`'s first session, numbers from 1 as far as the host knows).
    private func numberPadsOn() {
        for pad in pads { pad.continuesNumbering = pad.framesSent }
    }

    private func established(_ keys: LinkSessionKeys) {
        numberPadsOn()
        let sessions = LinkSessionSet()
        sessions.initiated(LinkSession(keys: keys, startedMicroseconds: now, path: hostPath))
        state = .established(sessions)
        renewal = nil
        statistics.sessionSent = 0
        statistics.sessionReceived = 0
        sessionPongCounts = nil
        // Silence counts only while this client sends: the host only answers, and a client that was not running
        // (stopped, starved) for longer than the timeout must not take that for a lost link when it wakes.
        liveness = LinkLiveness(startingAtMicroseconds: now, countsSilenceOnlyWhileSending: true)
        backoff.reset()
        padTableAcknowledged = 0
        olderTableAnswered = nil
        tryingSinceMicroseconds = nil
        warnedNoAnswer = false
    }

    /// Another connect with this identity has the link, or the host revoked this client: the pads stop rumbling,
    /// nothing more is sent.
    private func stop(because reason: Event) {
        state = .stopped
        renewal = nil
        for pad in pads { if let stop = pad.feedback.linkLost() { pad.source?.submit(stop) } }
        timer?.cancel()
        onEvent(reason)
    }

    private func handle(_ message: LinkHostMessageView<[UInt8]>, fromCurrentSession: Bool) {
        // An acknowledgement of an older table is answered at once with the current one, but once per version the
        // host names: every host message carries the acknowledgement, and a host that answers each datagram (while
        // its feedback waits for acknowledgement) would otherwise ping-pong with this client for as long as its
        // table limit holds (issue 42 item 4), a round trip's worth of datagrams each time. The table still goes
        // with every datagram this client sends until it is acknowledged.
        var tableToAnswer = false
        if let version = message.padTableAcknowledgement {
            if version == padTableVersion {
                padTableAcknowledged = version
                olderTableAnswered = nil
            } else if olderTableAnswered != version {
                olderTableAnswered = version
                tableToAnswer = true
            }
        }
        if let pong = message.pong {
            if fromCurrentSession { sessionPongCounts = (pong.sentDatagrams, statistics.sessionReceived) }
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
        if fromCurrentSession {
            // Each message lists every pad not forwarded while it lasts: a pad it leaves out has its virtual pad (or is
            // unplugged), and its next reason is news.
            var listed: [UInt8] = []
            message.forEachNotForwarded { slot, reason in
                guard let pad = pads.first(where: { $0.slot == slot }), !listed.contains(slot) else { return }
                listed.append(slot)
                guard pad.notForwardedReasonTold != reason else { return }
                pad.notForwardedReasonTold = reason
                onEvent(.padNotForwarded(pad.controller.fingerprint, reason: reason))
            }
            for pad in pads where !listed.contains(pad.slot) { pad.notForwardedReasonTold = nil }
        }
        message.forEachInputAcknowledgement { slot, applied in
            pads.first { $0.slot == slot }?.sender.acknowledge(applied)
        }
        if !pads.contains(where: { !$0.sender.unacknowledged.isEmpty }) { liveness.cancelQuickCopies() }
        var acknowledge = false
        message.forEachFeedback { slot, version, state in
            guard let pad = pads.first(where: { $0.slot == slot }) else { return }
            if let changes = pad.feedback.receive(version: version, state: state) {
                onFeedbackReceived?(pad.controller.fingerprint, changes)
                pad.source?.submit(changes)
            }
            pad.feedbackToAcknowledge = version
            acknowledge = true
        }
        if acknowledge || tableToAnswer { sendNow() }
    }

    /// What is due now: a keepalive, a resend, a quick copy, the link-lost check, a session renewal, a reconnection
    /// attempt.
    public func tick() {
        let time = now
        switch state {
        case let .established(sessions):
            if liveness.isLost(atMicroseconds: time) {
                onEvent(.linkLost)
                for pad in pads { if let stop = pad.feedback.linkLost() { pad.source?.submit(stop) } }
                state = .waiting
                renewal = nil
                tryingSinceMicroseconds = time
                let delay = backoff.nextDelayMicroseconds(jitter: Double.random(in: 0...1, using: &generator))
                nextAttemptMicroseconds = time + delay
                onEvent(.reconnecting(afterMilliseconds: delay / 1000))
            } else {
                // (`renewal?.sentMicroseconds`, not `renewal.map`: that copied the whole handshake, at every tick.)
                if let session = sessions.current,
                    time >= session.startedMicroseconds + LinkSessionLifetime.rekeyAfterMicroseconds,
                    (renewal?.sentMicroseconds).map({ time >= $0 + LinkSessionLifetime.rekeyTimeoutMicroseconds }) ?? true
                {
                    renewSession(at: time)
                }
                if liveness.isKeepaliveDue(atMicroseconds: time) {
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
            }
        case .handshaking, .waiting:
            if let since = tryingSinceMicroseconds, !warnedNoAnswer, time >= since + Self.noAnswerWarningMicroseconds {
                warnedNoAnswer = true
                onEvent(.noAnswer)
            }
            if time >= nextAttemptMicroseconds { connect() }
        case .stopped:
            return
        }
        armTimer(afterTick: true)
    }

    /// Whether the host has yet to acknowledge a pad's newest frame (or a press, release or touch before it).
    private var hasUnacknowledgedInput: Bool { pads.contains { $0.sender.hasUnacknowledged } }

    /// Arms the timer for what is due next. A deadline already passed stays due (armed at the loop's now: the loop
    /// fires it after the handlers of its current wake, whose clock it reads once); only a tick, which just did what
    /// was due, waits 1 µs more. Armed for "now + 1 µs" from a handler, it never came while every wake brought a
    /// frame or a datagram.
    private func armTimer(afterTick: Bool = false) {
        var wake: UInt64
        switch state {
        case let .established(sessions):
            wake = liveness.nextWakeMicroseconds(hasUnacknowledged: hasUnacknowledgedInput)
            if let session = sessions.current {
                let renew = (renewal?.sentMicroseconds).map { $0 + LinkSessionLifetime.rekeyTimeoutMicroseconds }
                    ?? session.startedMicroseconds + LinkSessionLifetime.rekeyAfterMicroseconds
                wake = min(wake, renew)
            }
        case .handshaking, .waiting:
            wake = nextAttemptMicroseconds
        case .stopped:
            return
        }
        timer?.schedule(atMicroseconds: max(wake, afterTick ? now + 1 : now))
    }
}
