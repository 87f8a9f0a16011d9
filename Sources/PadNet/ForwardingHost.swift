public import Crypto
public import Logging
public import PadCore

/// `padbridge serve`: virtual pads for the pads paired clients forward. One per (client, pad ID), kept across link
/// losses (neutral, for `lingerMilliseconds`) so games keep the player slot. Loop-confined.
///
/// Sessions: a client's handshake is answered at once but its session counts only from its first authenticated
/// datagram (a replayed handshake opens nothing); the session before it keeps opening late datagrams; a session
/// older than `LinkSessionLifetime.rejectAfterMicroseconds` opens nothing (the client makes a new one every
/// `rekeyAfterMicroseconds`). A client whose line leaves paired-clients is cut off at once (`reloadPairedClients`).
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
        /// A pad the client forwards gets no virtual pad for now (`reason`); it gets one when there is room.
        case padNotForwarded(client: String, pad: LinkPadDescription, reason: String)
        case linkLost(client: String)
        case resumed(client: String)
        case clientGone(client: String)
        case padDestroyed(client: String, fingerprint: Fingerprint)
        /// The client's line left paired-clients: its session ended, its pads destroyed.
        case revoked(client: String)
        /// A second `connect` with the client's identity (from `by`) took the link from the one at `previous`, which
        /// is told.
        case takenOver(client: String, previous: SocketAddress, by: SocketAddress)
        /// A paired client's handshake was not answered, and why.
        case handshakeRefused(client: String, reason: String)
        /// paired-clients cannot be read: what is wrong (file and line); every client is refused until it is fixed.
        case pairedClientsUnreadable(String)
        case dropped(count: Int, reason: LinkDropReason)
        /// More handshakes than usual came (a flood?): `cookieReplies` of them were asked to prove their address
        /// before any public-key work (paired clients do so by themselves).
        case underLoad(cookieReplies: Int)

        /// Which event, without what it carries (what tests and structured output match on, never its text).
        public enum Kind: String, Sendable, CaseIterable {
            case clientConnected, padAttached, padDetached, padNotForwarded, linkLost, resumed, clientGone, padDestroyed, revoked, takenOver, handshakeRefused, pairedClientsUnreadable, dropped, underLoad
        }

        public var kind: Kind {
            switch self {
            case .clientConnected: .clientConnected
            case .padAttached: .padAttached
            case .padDetached: .padDetached
            case .padNotForwarded: .padNotForwarded
            case .linkLost: .linkLost
            case .resumed: .resumed
            case .clientGone: .clientGone
            case .padDestroyed: .padDestroyed
            case .revoked: .revoked
            case .takenOver: .takenOver
            case .handshakeRefused: .handshakeRefused
            case .pairedClientsUnreadable: .pairedClientsUnreadable
            case .dropped: .dropped
            case .underLoad: .underLoad
            }
        }
    }

    private let sender: any LinkDatagramSender
    private let identity: Curve25519.KeyAgreement.PrivateKey
    private let pairedClientList: any PairedClientList
    private let options: Options
    private let clocks: LinkClocks
    private let makePad: HostedVirtualPadMaker
    private let logger: Logger
    private let onEvent: (Event) -> Void
    /// The paired clients' names by key, as paired-clients last read (`reloadPairedClients`).
    private var paired: [LinkPublicKey: String] = [:]
    /// paired-clients' lines as last read, in the file's order (status: names, dates), so that a status, up to 60
    /// a second while a console is open, reads no file.
    private var pairedLines: [PairedClient] = []
    private var clients = HostedClients()
    /// Sessions (current, previous and pending) by their index, each pointing at its client: looked up for every
    /// datagram, so by a 32-bit index, not by the client's 32-byte key (hashing it cost ~900 instructions a frame).
    /// Every client here is in `clients`: `remove(_:)` and `close()` forget a client's sessions with it.
    private var sessions = SessionsByIndex()
    private var timer: (any LinkWakeTimer)?
    /// What an initiation must pass before the host does any public-key work for it.
    private var initiationGate: LinkInitiationGate
    /// Per paired client (by key, so a new `connect` starts from what the last one left): how fast its new pad
    /// tables are applied, and how fast it can have new virtual pads made. Kept for paired keys only
    /// (`reloadPairedClients` prunes them), so as many as paired-clients has lines.
    private var churnBudgets: [LinkPublicKey: ChurnBudget] = [:]
    private var refusals = RateLimitedCount(intervalMicroseconds: 1_000_000)
    private var cookieReplies = RateLimitedCount(intervalMicroseconds: 10_000_000)
    private var handshakeRefusals = RateLimitedCount(intervalMicroseconds: 10_000_000)
    /// Whether a pad went or began to linger since unforwarded pads were last tried.
    private var roomMayHaveChanged = false
    /// Virtual pads of revoked clients: released at once, destroyed at `destroyAtMicroseconds`, so that readers see
    /// the release before the nodes go (an event read after its node went is lost to the reader).
    private var retiring: [(pads: [HostedPad], destroyAtMicroseconds: UInt64)] = []
    /// How long a revoked client's released pads stay before they go (as a bridge's exit shows its release).
    public static let releaseShownMicroseconds: UInt64 = 100_000
    /// Sessions of revoked clients, kept only to answer their datagrams with the revoked notice for a while: the
    /// client takes the link for lost after `LinkLiveness.timeoutMicroseconds` and sends nothing more in it.
    private var revokedSessions: [(keys: LinkSessionKeys, path: DatagramPath, untilMicroseconds: UInt64)] = []
    static let revokedSessionAnsweredMicroseconds: UInt64 = 2 * LinkLiveness.timeoutMicroseconds
    /// Buffers of the per-datagram path, kept so that it allocates nothing: a datagram's plaintext, a reply's
    /// plaintext encoder, a sealed reply.
    private var plaintext: [UInt8] = {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(2_048)
        return buffer
    }()
    private var replyEncoder = LinkHostMessageEncoder()
    private var sealed: [UInt8] = {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(2_048)
        return buffer
    }()
    /// Handles datagrams that are not the link's (pairing), when set.
    public var onOtherDatagram: ((UnsafeRawBufferPointer, DatagramPath) -> Void)?
    /// Told the paths of the clients whose session is confirmed (they proved their key), whenever that set changes:
    /// `ConnectedClientSockets` gives each a socket of its own.
    public var onClientPathsChanged: ((Set<DatagramPath>) -> Void)?
    /// Told once when a forwarded pad's state or its feedback changed since `livePads()` was last read (the control
    /// socket's `live` event): one test of a flag per applied frame, nothing more, while nobody listens.
    public var onLivePadsChanged: (() -> Void)?
    private var livePadsChangeSignalled = false
    private var clientPaths: Set<DatagramPath> = []
    /// Called by `close()` once the timer stopped (production: the per-client sockets close).
    public var onClose: (() -> Void)?
    /// What the closures this host hands out call it through (no weak reference: see `OwnerReference`).
    /// Called when this host goes (production: its socket stops handing datagrams here).
    public var onDeinit: (() -> Void)?

    /// What a datagram source calls for each datagram: `receive(_:along:)` through this host's owner reference,
    /// nothing once the host is gone (and no weak reference loaded per datagram).
    public var datagramHandler: (UnsafeRawBufferPointer, DatagramPath) -> Void {
        { [owner] bytes, path in owner.target?.receive(bytes, along: path) }
    }

    /// What the wake-up timer calls: `tick()`, nothing once the host is gone.
    public var tickHandler: () -> Void { { [owner] in owner.target?.tick() } }
    private let owner = OwnerReference<ForwardingHost>()

    /// A host over the given ports: datagrams go to `sender`, arrive through `receive(_:along:)`; `timer` calls
    /// `tick()` when it fires. Reads paired-clients once now (`reloadPairedClients` again when it changes).
    public init(
        sender: any LinkDatagramSender, timer: any LinkWakeTimer, clocks: LinkClocks,
        identity: Curve25519.KeyAgreement.PrivateKey, pairedClients: any PairedClientList, options: Options, logger: Logger,
        onEvent: @escaping (Event) -> Void, makePad: @escaping HostedVirtualPadMaker
    ) {
        self.sender = sender
        self.timer = timer
        self.clocks = clocks
        self.identity = identity
        initiationGate = LinkInitiationGate(
            hostKey: LinkPublicKey(identity.publicKey),
            atMicroseconds: clocks.monotonicMicroseconds())
        pairedClientList = pairedClients
        self.options = options
        self.logger = logger
        self.onEvent = onEvent
        self.makePad = makePad
        owner.target = self
        reloadPairedClients()
    }

    /// The socket (`sender`, in production) stops handing its datagrams here; `owner` is nil for any closure
    /// that runs while the rest of this host is destroyed.
    deinit {
        owner.target = nil
        onDeinit?()
    }

    /// Reads paired-clients again (it changed): a client whose line is gone is cut off now (its datagrams dropped,
    /// its pads released and destroyed). A file that cannot be read is reported, and refuses every client until it
    /// is fixed.
    public func reloadPairedClients() {
        do {
            pairedLines = try pairedClientList.pairedClients()
            paired = Dictionary(pairedLines.map { ($0.key, $0.name) }, uniquingKeysWith: { _, last in last })
        } catch {
            pairedLines = []
            paired = [:]
            onEvent(.pairedClientsUnreadable("\(error); every client is refused until it is fixed"))
        }
        for client in Array(clients.values) where paired[client.key] == nil {
            // The session ends now, and its client is told so (or it would try to reconnect for ever, unanswered);
            // its pads show the released state now and go shortly after.
            if let session = client.sessions.current { tellRevoked(client, session: session) }
            let pads = client.pads.removeAll()
            for pad in pads { pad.virtual.goNeutral() }
            if !pads.isEmpty { retiring.append((pads, now + Self.releaseShownMicroseconds)) }
            remove(client)
            onEvent(.revoked(client: client.name))
        }
        for client in clients.values { if let name = paired[client.key] { client.name = name } }
        churnBudgets = churnBudgets.filter { paired[$0.key] != nil }
        armTimer()
    }

    /// Tells a revoked client so, with its session in use, and keeps that session's keys for
    /// `revokedSessionAnsweredMicroseconds` to tell it again for each of its datagrams that authenticates (the
    /// first notice may be lost).
    private func tellRevoked(_ client: HostedClient, session: LinkSession) {
        var notice = LinkHostMessage()
        notice.revoked = true
        if (try? session.keys.seal(notice.encoded, into: &sealed)) != nil { sender.send(sealed, along: client.path) }
        revokedSessions.removeAll { now >= $0.untilMicroseconds }
        revokedSessions.append((session.keys, client.path, now + Self.revokedSessionAnsweredMicroseconds))
    }

    /// A datagram for no session: if it is from a session revoked lately and authenticates, the notice again.
    private func answerRevoked(_ datagram: UnsafeRawBufferPointer, index: UInt32) -> Bool {
        guard !revokedSessions.isEmpty else { return false }
        let time = now
        revokedSessions.removeAll { time >= $0.untilMicroseconds }
        guard let position = revokedSessions.firstIndex(where: { $0.keys.localIndex == index }),
            revokedSessions[position].keys.open(datagram: datagram, into: &plaintext)
        else { return false }
        var notice = LinkHostMessage()
        notice.revoked = true
        if (try? revokedSessions[position].keys.seal(notice.encoded, into: &sealed)) != nil {
            sender.send(sealed, along: revokedSessions[position].path)
        }
        return true
    }

    /// Every paired client (as paired-clients last read) with what the host knows of it now: connected or not,
    /// its link's figures, its pads. In paired-clients' order.
    public func clientStatuses() -> [HostClientStatus] {
        HostStatusView(pairedLines: pairedLines, paired: paired, clients: clients).clientStatuses(atMicroseconds: now)
    }

    /// Each pad with a virtual pad now, as its virtual pad shows it (the control socket's `live` event): the last
    /// snapshot applied, and the feedback games set.
    public func livePads() -> [HostLivePad] {
        livePadsChangeSignalled = false
        return HostStatusView(pairedLines: pairedLines, paired: paired, clients: clients).livePads()
    }

    private func noteLivePadsChanged() {
        guard let onLivePadsChanged else { return }
        livePadsChangeSignalled = true
        onLivePadsChanged()
    }

    /// Every virtual pad shows the released state (the first step of a clean exit).
    public func releaseAll() {
        for client in clients.values { for pad in client.pads.all { pad.virtual.goNeutral() } }
    }

    /// Destroys every virtual pad. Idempotent.
    public func close() {
        timer?.close()
        timer = nil
        onClose?()
        onClose = nil
        for client in clients.values { for pad in client.pads.all { pad.virtual.close() } }
        for entry in retiring { for pad in entry.pads { pad.virtual.close() } }
        retiring.removeAll()
        revokedSessions.removeAll()
        clients.removeAll()
        sessions.removeAll()
    }

    private var now: UInt64 { clocks.monotonicMicroseconds() }

    private func drop(_ reason: LinkDropReason) {
        if let count = refusals.note(atMicroseconds: now) { onEvent(.dropped(count: count, reason: reason)) }
    }

    /// One datagram that arrived along `path`.
    public func receive(_ bytes: UnsafeRawBufferPointer, along path: DatagramPath) {
        switch bytes.first.flatMap(LinkDatagram.MessageType.init(rawValue:)) {
        case .transport:
            if let (index, counter) = LinkDatagram.transportHeader(of: bytes) {
                transport(bytes, index: index, counter: counter, along: path)
            } else {
                drop(.notPadbridges)
            }
        case .initiation:
            initiation(bytes, along: path)
        case .response, .cookieReply:
            drop(.answerSentToHost)
        case nil:
            if let first = bytes.first, PairingDatagram.firstByte.contains(first), let other = onOtherDatagram {
                other(bytes, path)
            } else {
                drop(.notPadbridges)
            }
        }
        armTimer()
    }

    /// An initiation: its length and MACs, then the load, before any public-key work (`LinkInitiationGate`).
    private func initiation(_ bytes: UnsafeRawBufferPointer, along path: DatagramPath) {
        guard bytes.count == LinkDatagram.initiationSize else { return drop(.malformed) }
        let initiation = Array(bytes)
        let time = now
        switch initiationGate.check(initiation, from: path.remote, atMicroseconds: time) {
        case .answer:
            guard let datagram = LinkDatagram(initiation) else { return drop(.malformed) }
            let answer = handshake(datagram, along: path)
            initiationGate.remember(initiation, from: path.remote, answer: answer, atMicroseconds: time)
        case let .answerAgain(answer):
            sender.send(answer, along: path)
        case let .askForCookie(reply):
            sender.send(reply, along: path)
            if let count = cookieReplies.note(atMicroseconds: time) { onEvent(.underLoad(cookieReplies: count)) }
        case let .drop(reason):
            drop(reason)
        }
    }

    private func transport(_ datagram: UnsafeRawBufferPointer, index: UInt32, counter: UInt64, along path: DatagramPath) {
        let time = now
        guard let client = sessions[index] else {
            if answerRevoked(datagram, index: index) { return }
            return drop(.unauthenticated)
        }
        let session: LinkSession
        let confirming: Bool
        switch client.sessions.lookUp(index: index, atMicroseconds: time) {
        case let .current(found), let .previous(found):
            session = found
            confirming = false
        case let .next(found):
            session = found
            confirming = true
        case .currentTooOld:
            return drop(.sessionTooOld)
        case .ended:
            return drop(.sessionEnded)
        }
        guard session.keys.open(datagram: datagram, into: &plaintext) else {
            return drop(.unauthenticated)
        }
        guard let message = try? LinkClientMessageView(plaintext) else { return drop(.malformed) }
        if confirming { confirmNextSession(of: client, at: time) }
        if session === client.sessions.current {
            session.noteReceived(counter: counter)
            if client.path != path {
                client.path = path
                clientPathsMayHaveChanged()
            }
        }
        client.receivedDatagrams &+= 1
        client.liveness.heard(atMicroseconds: time)
        if client.lost { resume(client) }
        handle(message, from: client)
    }

    /// Answers a paired client's initiation (public-key work); returns the answer sent, nil when refused.
    private func handshake(_ datagram: LinkDatagram, along path: DatagramPath) -> [UInt8]? {
        var clock: UInt64 = 0
        var refusal: (key: LinkPublicKey, reason: String)?
        let time = now
        guard
            let (response, key, keys) = LinkHostHandshake.respond(to: datagram, identity: identity, accepts: { key, sent in
                guard paired[key] != nil else { return false }
                // Replay protection without trusting the client's clock for good: an initiation must be later than
                // the one that made the client's live session; once that session is quiet, any clock is accepted
                // (a replayed initiation then makes a session nobody can confirm).
                if let client = clients[key], let current = client.sessions.current, !client.lost,
                    !client.liveness.isLost(atMicroseconds: time), sent <= current.initiationClock
                {
                    refusal = (
                        key,
                        "its handshake's clock is not later than its live session's: a replayed handshake, or its "
                            + "clock stepped back (a new `connect` is accepted once the old session has been quiet "
                            + "\(LinkLiveness.timeoutMicroseconds / 1000) ms)"
                    )
                    return false
                }
                clock = sent
                return true
            })
        else {
            if let refusal, handshakeRefusals.note(atMicroseconds: time) != nil {
                onEvent(.handshakeRefused(client: paired[refusal.key] ?? refusal.key.fingerprint, reason: refusal.reason))
            }
            drop(.unpairedOrReplayedHandshake)
            return nil
        }
        sender.send(response, along: path)
        let client: HostedClient
        if let known = clients[key] {
            client = known
        } else {
            client = HostedClient(key: key, name: paired[key] ?? key.fingerprint, path: path, now: time)
            clients[key] = client
        }
        let answered = LinkSession(keys: keys, startedMicroseconds: time, initiationClock: clock, path: path)
        sessions.remove(client.sessions.answered(answered))
        sessions.add(answered, of: client)
        return response
    }

    /// The first datagram of a session answered earlier: it becomes the session in use. The session it replaces
    /// keeps opening late datagrams, unless it was another `connect` with the same identity, which is told it was
    /// taken over and dropped.
    private func confirmNextSession(of client: HostedClient, at time: UInt64) {
        let wasLive = !client.lost && !client.liveness.isLost(atMicroseconds: time)
        guard let (confirmed, replaced, dropped) = client.sessions.confirmNext() else { return }
        sessions.remove(dropped)
        if let old = replaced {
            if wasLive && old.path.remote != confirmed.path.remote {
                var notice = LinkHostMessage()
                notice.takenOver = true
                if (try? old.keys.seal(notice.encoded, into: &sealed)) != nil { sender.send(sealed, along: old.path) }
                sessions.remove(client.sessions.dropPrevious())
                onEvent(.takenOver(client: client.name, previous: old.path.remote, by: confirmed.path.remote))
            }
        } else {
            onEvent(.clientConnected(name: client.name, address: confirmed.path.remote))
        }
        client.path = confirmed.path
        clientPathsMayHaveChanged()
        client.sessionRestarted()
    }

    /// A client given up for lost is heard again: its pads end their linger and show at once what they last showed
    /// (the client sends a frame only when something changes: a button held through the outage sends none).
    private func resume(_ client: HostedClient) {
        client.lost = false
        onEvent(.resumed(client: client.name))
        for (_, pad) in client.pads.slots where pad.attached {
            pad.lingerEndsMicroseconds = nil
            if let last = pad.lastApplied { pad.virtual.apply(last) }
        }
    }

    /// One message from the client, read where it lies: its pad table, its frames applied, its acknowledgements
    /// taken. Answered at once only what needs it now (a ping, a pad table, feedback to send); frames are
    /// acknowledged from the timer, a moment later, so acknowledging costs nothing on a frame's own path and one
    /// acknowledgement covers a burst.
    private func handle(_ message: LinkClientMessageView<[UInt8]>, from client: HostedClient) {
        var mustReply = false
        var pong: (echoedMicroseconds: UInt64, receivedDatagrams: UInt32, sentDatagrams: UInt32)?
        if let ping = message.ping {
            pong = (ping.clockMicroseconds, client.receivedDatagrams, client.sentDatagrams &+ 1)
            if let loss = ping.lossToClientPercent { client.lossToClientPercent = loss }
            if ping.roundTripMicroseconds > 0 { client.reportedRoundTripMicroseconds = UInt64(ping.roundTripMicroseconds) }
            mustReply = true
        }
        if let table = message.padTable {
            if client.padTableVersion == table.version {
                mustReply = true  // (its acknowledgement was lost)
            } else if takeChurnToken(\.tables, for: client) {
                apply(table.pads, for: client)
                client.padTableVersion = table.version
                mustReply = true
            }
            // A table over the limit is neither applied nor answered: the client sends it in its next datagram (a
            // frame, a keepalive) until a token has come back. Answered, it would be sent again at once, a round
            // trip's ping-pong for as long as the limit holds.
        }
        var framesCame = false
        message.forEachBlock { slot, base, continues, frames in
            framesCame = true
            guard let pad = client.pads.slots[slot], pad.isForwarded else {
                // A pad this host does not forward (no room, its virtual pad could not be made, or not in the table):
                // acknowledged as received, so the client does not send it again and again.
                var newest: UInt32?
                for frame in frames { newest = frame.sequence }
                if let newest { client.pads.unforwardedAcknowledgements[slot] = newest }
                return
            }
            pad.receiver.receive(base: base, continues: continues, frames: frames) { snapshot in
                pad.lingerEndsMicroseconds = nil
                pad.lastApplied = snapshot
                pad.virtual.apply(snapshot)
                if !livePadsChangeSignalled { noteLivePadsChanged() }
            }
        }
        message.forEachFeedbackAcknowledgement { slot, version in client.pads.slots[slot]?.feedback.acknowledge(version) }
        if mustReply || client.pads.hasPendingFeedback {
            send(pong: pong, to: client)
        } else if framesCame {
            // Acknowledged from the timer (`AcknowledgementSchedule` says when).
            client.acknowledgements.framesCame(
                atMicroseconds: now, wantsAcknowledgement: message.wantsAcknowledgement,
                lastSentMicroseconds: client.liveness.lastSentMicroseconds)
        }
    }

    /// Seals and sends a message with every acknowledgement and the pending feedback (and `pong`, `takenOver`),
    /// with the session in use.
    private func send(pong: (echoedMicroseconds: UInt64, receivedDatagrams: UInt32, sentDatagrams: UInt32)? = nil, to client: HostedClient) {
        guard let session = client.sessions.current else { return }
        client.acknowledgements.sent()
        replyEncoder.begin(padTableAcknowledgement: client.padTableVersion, pong: pong, takenOver: false)
        for (slot, pad) in client.pads.slots where pad.isForwarded {
            if let applied = pad.receiver.applied { replyEncoder.acknowledgeInput(slot: slot, applied: applied) }
        }
        if !client.pads.unforwardedAcknowledgements.isEmpty {  // (an empty dictionary's iteration cost ~80 instructions a reply)
            for (slot, applied) in client.pads.unforwardedAcknowledgements {
                replyEncoder.acknowledgeInput(slot: slot, applied: applied)
            }
        }
        for (slot, pad) in client.pads.slots where pad.isForwarded && pad.feedback.hasPending {
            if let pending = pad.feedback.pending {
                replyEncoder.appendFeedback(slot: slot, version: pending.version, state: pending.state)
            }
        }
        if !client.pads.unforwarded.isEmpty {
            // Only pads plugged in are listed (protocol.md 8.3): an unplugged pad whose virtual pad once could not be
            // made is not news until it is back. A refused description is listed whatever it says of itself.
            for (slot, description) in client.pads.unforwarded where description.attached || description.refusal != nil {
                if let reason = client.pads.clientReason(of: description) {
                    replyEncoder.reportNotForwarded(slot: slot, reason: reason)
                }
            }
        }
        guard (try? session.keys.seal(replyEncoder.end(), into: &sealed)) != nil else { return }
        sender.send(sealed, along: client.path)
        client.sentDatagrams &+= 1
        client.liveness.sent(atMicroseconds: now)
    }

    /// A new pad table supersedes the last exactly: its pads take its slots (made when new); a pad no longer in it
    /// goes neutral and lingers (it may come back in a later table: the same virtual pad resumes).
    private func apply(_ table: [LinkPadDescription], for client: HostedClient) {
        let time = now
        let listed = Set(table.map(\.fingerprint))
        for pad in client.pads.all where !listed.contains(pad.fingerprint) && pad.slot != nil {
            pad.slot = nil
            pad.linger(untilMicroseconds: time + options.lingerMilliseconds * 1000)
            roomMayHaveChanged = true
            onEvent(.padDetached(client: client.name, pad: pad.description))
        }
        client.pads.beginTable(listing: listed)
        for description in table {
            guard client.pads.slots[description.slot] == nil else { continue }  // a slot twice: the first stands
            if let pad = client.pads[description.fingerprint] {
                if pad.attached && !description.attached {
                    pad.virtual.goNeutral()
                    onEvent(.padDetached(client: client.name, pad: description))
                }
                if description.continuesNumbering { pad.receiver.continueNumbering() }
                pad.slot = description.slot
                pad.description = description
                pad.attached = description.attached
                pad.lingerEndsMicroseconds = nil
                client.pads.forward(pad, inSlot: description.slot)
            } else if let refusal = description.refusal {
                // Texts that break the rules (section 8.1): no virtual pad, and the client is told why.
                client.pads.unforwarded[description.slot] = description
                onEvent(.padNotForwarded(client: client.name, pad: description, reason: refusal))
            } else if !description.attached || !create(description, for: client) {
                client.pads.unforwarded[description.slot] = description
            }
        }
    }

    /// Makes the virtual pad for `description`; false when there is no room (and no lingering pad to make room)
    /// or it could not be made.
    private func create(_ description: LinkPadDescription, for client: HostedClient) -> Bool {
        // The creation limit first (a lingering pad is never evicted for a pad that could not be made anyway); its
        // token is taken only once the pad fits.
        let tokenDue = churnBudgets[client.key]?.creations.nextTokenMicroseconds(atMicroseconds: now) ?? now
        guard tokenDue <= now else {
            let wait = tokenDue - now
            client.creationRetryMicroseconds = now + wait
            notForward(description, of: client, because: .creationLimit(waitSeconds: max(1, (wait + 999_999) / 1_000_000)))
            return false
        }
        if clients.padCount >= options.maximumPads && !evictALingeringPad() {
            notForward(description, of: client, because: .padLimit(maximumPads: options.maximumPads))
            return false
        }
        _ = takeChurnToken(\.creations, for: client)
        client.pads.clearReason(of: description.fingerprint)
        let kind =
            options.virtualKind ?? description.requestedVirtualKind
            ?? VirtualPadKind.defaultKind(for: ControllerKind(rawValue: description.kind) ?? .generic)
        // The same client's same pad gets the same virtual pad (MAC) every time it comes.
        let seed = "padbridge-forward-\(client.key.hex.prefix(16))-\(description.fingerprint)"
        var created: HostedPad?
        var readyEarly: VirtualPadNodes?
        // The closures hold the client's key, never the client: a pad outlives its client for a moment when the
        // client is revoked (`retiring`: its released state shown before it goes), and a game may write feedback to
        // it then. The client is looked up by key, and must still own this very pad (a client paired again under
        // the same key has pads of its own); `owner` is nil while this host is destroyed. (Feedback is rare next to
        // frames: one dictionary look-up per game write.)
        let key = client.key
        let announce = { [owner] (nodes: VirtualPadNodes) in
            guard let self = owner.target, let pad = created else { return }
            pad.virtualKind = kind
            pad.nodes = nodes
            guard let client = self.owningClient(of: pad, key: key) else { return }
            self.onEvent(.padAttached(client: client.name, pad: pad.description, kind: kind, nodes: nodes, mac: pad.virtual.mac))
        }
        do {
            let virtual = try makePad(
                kind, seed,
                { [owner] event in
                    guard let self = owner.target, let pad = created,
                        let client = self.owningClient(of: pad, key: key)
                    else { return }
                    pad.feedback.update(event)
                    if !self.livePadsChangeSignalled { self.noteLivePadsChanged() }
                    if !client.lost && pad.isForwarded { self.send(to: client) }
                    self.armTimer()
                },
                { nodes in if created == nil { readyEarly = nodes } else { announce(nodes) } })
            let pad = HostedPad(description: description, virtual: virtual)
            created = pad
            client.pads.forward(pad, inSlot: description.slot)
            if let readyEarly { announce(readyEarly) }
            return true
        } catch {
            logger.error("\(client.name): cannot create a virtual \(kind.rawValue) pad for \(description.name): \(error)")
            notForward(description, of: client, because: .cannotCreate(kind, error))
            return false
        }
    }

    /// Keeps why `description`'s pad got no virtual pad, and says so once (`NotForwardedCause.isAnnounced`).
    private func notForward(_ description: LinkPadDescription, of client: HostedClient, because cause: NotForwardedCause) {
        if client.pads.note(cause, for: description.fingerprint) {
            onEvent(.padNotForwarded(client: client.name, pad: description, reason: cause.hostText))
        }
    }

    /// Takes a token of `client`'s budget (`ChurnBudget`); false when there is none now.
    private func takeChurnToken(_ kind: WritableKeyPath<ChurnBudget, TokenBucket>, for client: HostedClient) -> Bool {
        let time = now
        var budget = churnBudgets[client.key] ?? ChurnBudget(atMicroseconds: time)
        defer { churnBudgets[client.key] = budget }
        return budget[keyPath: kind].take(atMicroseconds: time)
    }

    /// How many not-forwarded reasons the host keeps, over every client (for the tests of its bounds).
    var notForwardedReasonsKept: Int {
        clients.values.reduce(0) { $0 + $1.pads.reasonsKept }
    }

    /// The client that owns `pad` now: nil once the client is gone (revoked, removed) or no longer has this pad.
    private func owningClient(of pad: HostedPad, key: LinkPublicKey) -> HostedClient? {
        guard let client = clients[key], client.pads[pad.fingerprint] === pad else { return nil }
        return client
    }

    /// Destroys the lingering pad nearest its end to make room; false when none lingers.
    private func evictALingeringPad() -> Bool {
        var chosen: (client: HostedClient, pad: HostedPad, ends: UInt64)?
        for client in clients.values {
            guard let lingering = client.pads.lingeringPadEndingFirst,
                chosen.map({ lingering.endsMicroseconds < $0.ends }) ?? true
            else { continue }
            chosen = (client, lingering.pad, lingering.endsMicroseconds)
        }
        guard let chosen else { return false }
        destroy(chosen.pad, of: chosen.client)
        return true
    }

    private func destroy(_ pad: HostedPad, of client: HostedClient) {
        pad.virtual.close()
        client.pads.remove(pad)
        roomMayHaveChanged = true
        onEvent(.padDestroyed(client: client.name, fingerprint: pad.fingerprint))
    }

    /// Ends a client: its pads released and destroyed, its sessions forgotten.
    private func remove(_ client: HostedClient) {
        for pad in client.pads.removeAll() { pad.virtual.close() }
        for session in client.sessions.removeAll() { sessions.remove(session) }
        clients[client.key] = nil
        roomMayHaveChanged = true
        clientPathsMayHaveChanged()
    }

    /// Tells `onClientPathsChanged` the confirmed clients' paths if they are not what it was told last (a client
    /// confirmed, moved or removed: never on a frame's own path).
    private func clientPathsMayHaveChanged() {
        guard let onClientPathsChanged else { return }
        let paths = Set(clients.values.filter { $0.sessions.current != nil }.map(\.path))
        guard paths != clientPaths else { return }
        clientPaths = paths
        onClientPathsChanged(paths)
    }

    /// What is due now: pads whose linger ran out, sessions that ended, lost links, feedback to send again, delayed
    /// acknowledgements, pads waiting for room.
    public func tick() {
        let time = now
        // Nothing is copied on a tick where nothing ends (every frame's acknowledgement comes from here): what
        // ends is collected first (an empty array allocates nothing), then removed.
        var lingerEnded: [(pad: HostedPad, client: HostedClient)] = []
        for client in clients.values {
            for pad in client.pads.all {
                if let ends = pad.lingerEndsMicroseconds, time >= ends { lingerEnded.append((pad, client)) }
            }
        }
        for (pad, client) in lingerEnded { destroy(pad, of: client) }
        if !retiring.isEmpty {
            for entry in retiring where time >= entry.destroyAtMicroseconds { for pad in entry.pads { pad.virtual.close() } }
            retiring.removeAll { time >= $0.destroyAtMicroseconds }
        }
        var gone: [HostedClient] = []
        for client in clients.values {
            sessions.remove(
                client.sessions.expireNext(
                    atMicroseconds: time, timeoutMicroseconds: LinkSessionLifetime.rekeyTimeoutMicroseconds * 2))
            if client.pads.isEmpty && !client.isLive && client.sessions.next == nil {
                gone.append(client)
                continue
            }
            guard client.isLive else { continue }
            if client.liveness.isLost(atMicroseconds: time) {
                client.lost = true
                onEvent(.linkLost(client: client.name))
                for pad in client.pads.all { pad.linger(untilMicroseconds: time + options.lingerMilliseconds * 1000) }
                roomMayHaveChanged = true
            } else if client.pads.hasPendingFeedback
                && time >= client.liveness.lastSentMicroseconds + client.liveness.retransmitIntervalMicroseconds
            {
                send(to: client)
            } else if client.acknowledgements.isDue(atMicroseconds: time) {
                send(to: client)
            }
        }
        for client in clients.values {
            if let retry = client.creationRetryMicroseconds, time >= retry {
                client.creationRetryMicroseconds = nil
                roomMayHaveChanged = true
            }
        }
        for client in gone {
            let wasConnected = client.sessions.current != nil
            remove(client)
            if wasConnected { onEvent(.clientGone(client: client.name)) }
        }
        if roomMayHaveChanged { forwardWaitingPads() }
        armTimer(afterTick: true)
    }

    /// Pads that got no virtual pad for want of room try again (there may be room now).
    private func forwardWaitingPads() {
        roomMayHaveChanged = false
        for client in clients.values where !client.lost {
            for (slot, description) in client.pads.unforwarded.sorted(by: { $0.key < $1.key })
            where description.attached && description.refusal == nil {
                if create(description, for: client) { client.pads.unforwarded[slot] = nil } else { return }
            }
        }
    }

    /// One timer for every client: the next linger to end, link-lost check, feedback to send again, or delayed
    /// acknowledgement. (The host sends no keepalives of its own: it answers the client's.)
    ///
    /// What is already due stays due now: the loop runs its timers between batches of datagrams, against the
    /// clock read when the batch began, so a deadline put off to "now + 1 µs" by each datagram read would wait for
    /// as long as a backlog lasts. Only a tick, which has just done what was due, waits at least 1 µs more.
    private func armTimer(afterTick: Bool = false) {
        if roomMayHaveChanged { forwardWaitingPads() }
        var wake: UInt64? = retiring.map(\.destroyAtMicroseconds).min()
        for client in clients.values {
            for pad in client.pads.all { if let ends = pad.lingerEndsMicroseconds { wake = min(wake ?? ends, ends) } }
            if let retry = client.creationRetryMicroseconds { wake = min(wake ?? retry, retry) }
            if let pending = client.sessions.next {
                let ends = pending.startedMicroseconds + LinkSessionLifetime.rekeyTimeoutMicroseconds * 2
                wake = min(wake ?? ends, ends)
            }
            guard client.isLive else { continue }
            var due = client.liveness.lastHeardMicroseconds + LinkLiveness.timeoutMicroseconds
            if client.pads.hasPendingFeedback {
                due = min(due, client.liveness.lastSentMicroseconds + client.liveness.retransmitIntervalMicroseconds)
            }
            if let acknowledgement = client.acknowledgements.dueMicroseconds { due = min(due, acknowledgement) }
            wake = min(wake ?? due, due)
        }
        guard let wake else { timer?.cancel(); return }
        timer?.schedule(atMicroseconds: max(wake, afterTick ? now + 1 : now))
    }
}
