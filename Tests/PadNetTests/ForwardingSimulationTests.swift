import Crypto
import Glibc
import PadCore
import PadLinux
@testable import PadNet
import PadNetLinux
import PadTestSupport
import Testing

/// The forwarding host and client together on a fake clock (`LinkSimulation`): what the link does over time.
@Suite struct ForwardingSimulationTests {
    @Test func aPadIsForwardedAndFeedbackComesBack() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        #expect(link.hostEvents.contains { if case .clientConnected = $0 { true } else { false } })
        let pad = try #require(link.virtualPads.first)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        source.send(.holding(.a, leftX: 1000))
        link.run(forMilliseconds: 5)
        #expect(pad.shown == .holding(.a, leftX: 1000))
        pad.feedback(.rumble(Rumble(strong: 1, weak: 0)))
        link.run(forMilliseconds: 5)
        #expect(source.feedbackState.rumble == Rumble(strong: 1, weak: 0))
    }

    /// `connect` finding a paired host at another address (announced with its key): the client is pointed there
    /// while nothing answers at the stored address, and the handshake goes there at once; an established session
    /// is never moved.
    @Test func aClientRetargetedToWhereTheHostAnswersConnectsAtOnce() throws {
        let link = try LinkSimulation()
        let stale = try SocketAddress.resolve("127.0.0.2:48100", defaultPort: 0)[0]
        let client = try link.connect([.simulated("aaaaaaaaaaaa")], host: stale)
        link.run(forMilliseconds: 1_000)
        #expect(!link.clientEvents.contains { if case .connected = $0 { true } else { false } },
                "answers from another address than the one tried are ignored")
        #expect(client.retarget(to: link.hostAddress))
        link.run(forMilliseconds: 3)
        #expect(link.clientEvents.contains { if case .connected = $0 { true } else { false } })
        #expect(!client.retarget(to: stale), "an established session is not moved")
        #expect(client.hostAddress == link.hostAddress)
    }

    /// Finding 1 of the link review: the client -> host direction drops for 550 ms while host -> client works (the
    /// host had feedback to resend, so the client kept hearing it). The host gives the client up after 400 ms;
    /// when the client's datagrams arrive again the pads must show what is held at once, stay past --linger, and
    /// the pad's rumble must end up as the game left it.
    @Test func aOneSidedOutageEndsInTheHeldStateAndThePadStays() throws {
        let link = try LinkSimulation(hostOptions: .init(virtualKind: nil, maximumPads: 8, lingerMilliseconds: 2_000))
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        source.send(.holding(.a, leftX: 20_000))
        pad.feedback(.rumble(Rumble(strong: 1, weak: 0)))
        link.run(forMilliseconds: 20)
        #expect(pad.shown == .holding(.a, leftX: 20_000) && source.feedbackState.rumble == Rumble(strong: 1, weak: 0))

        // The uplink drops; the game keeps updating its rumble (so the host has feedback to resend).
        link.cutClientToHost = true
        for step in 1...11 {
            pad.feedback(.rumble(Rumble(strong: step % 2 == 0 ? 1 : 0.5, weak: 0)))
            link.run(forMilliseconds: 50)
        }
        #expect(pad.shown == PadSnapshot.holding(.a, leftX: 20_000).released, "the host gave the client up: neutral")
        #expect(link.hostEvents.contains { if case .linkLost = $0 { true } else { false } })
        #expect(!link.clientEvents.contains { if case .linkLost = $0 { true } else { false } },
                "the client kept hearing the host: the window this test is about")
        pad.feedback(.rumble(.off))
        link.cutClientToHost = false
        link.run(forMilliseconds: 30)
        #expect(link.hostEvents.contains { if case .resumed = $0 { true } else { false } })
        #expect(pad.shown == .holding(.a, leftX: 20_000), "what is held is shown again once the client is heard")
        #expect(source.feedbackState.rumble == .off, "the game's last rumble reached the pad")

        link.run(forMilliseconds: 3_000)
        #expect(pad.isOpen, "a working link's pad is not destroyed when --linger runs out")
        #expect(pad.shown == .holding(.a, leftX: 20_000))
        #expect(!link.hostEvents.contains { if case .padDestroyed = $0 { true } else { false } })
        source.send(.holding(.b))
        link.run(forMilliseconds: 5)
        #expect(pad.shown == .holding(.b), "later input is forwarded")
    }

    /// Presses the host applied but could not acknowledge (the downlink was cut) are not applied again when the
    /// client, having lost the link, makes a new session and sends them once more: a game would see a press twice.
    /// Seen in the flood kernel test: 18 old edges at once after the client reconnected.
    @Test func pressesAppliedBeforeALostLinkAreNotAppliedAgainInTheNextSession() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        link.cutHostToClient = true
        for tap in 0..<6 {
            source.send(tap % 2 == 0 ? .holding(.a) : .neutral)
            link.run(forMilliseconds: 5)
        }
        link.run(forMilliseconds: 1_000)
        #expect(link.clientEvents.contains { $0.kind == .linkLost }, "the client gave the link up")
        link.cutHostToClient = false
        link.run(forMilliseconds: 3_000)
        #expect(link.clientEvents.filter { $0.kind == .connected }.count == 2, "and made a new session")
        let history = [PadSnapshot.neutral] + pad.history
        let presses = zip(history.dropFirst(), history).filter { $0[.a] && !$1[.a] }.count
        #expect(presses == 3, "3 taps, each shown once (shown: \(pad.history.map { $0[.a] ? "A" : "-" }.joined()))")
    }

    /// A new `connect` (numbering from 1) whose pad was read before its first session: the host starts that pad
    /// afresh, not where the `connect` before it had got to (it would drop the new one's frames as old). Found by the
    /// many-pads kernel test: a client that came back showed none of its values.
    @Test func aNewConnectsFramesReadBeforeItsFirstSessionAreShown() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        for tap in 0..<20 {
            try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")]).send(tap % 2 == 0 ? .holding(.a) : .neutral)
            link.run(forMilliseconds: 5)
        }
        try link.connect([.simulated("aaaaaaaaaaaa")])  // the first is killed
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        source.send(.holding(.b))  // read before the new connect's handshake is answered
        link.run(forMilliseconds: 1_500)
        #expect(link.virtualPads.count == 1 && pad.shown == .holding(.b))
        source.send(.holding(.x))
        link.run(forMilliseconds: 5)
        #expect(pad.shown == .holding(.x))
    }

    /// The same at the session renewal every two minutes: frames in flight when the client switches sessions are
    /// shown once.
    @Test func pressesInFlightAtARenewalAreShownOnce() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        link.run(forMilliseconds: 119_800)
        // Taps every 4 ms across the renewal at two minutes, the host's transport datagrams lost for 300 ms around it
        // (no acknowledgement reaches the client, the handshake does: the new session's first datagrams carry frames
        // the host already showed).
        var taps = 0
        var cut = false
        link.drops = { end, bytes in cut && end == .host && bytes.first == 0x03 }  // transport: the handshake passes
        for millisecond in stride(from: 119_800, to: 120_300, by: 2) {
            cut = (119_900..<120_200).contains(millisecond)
            if millisecond % 4 == 0 { taps += 1 }
            source.send(millisecond % 4 == 0 ? .holding(.a) : .neutral)
            link.run(forMilliseconds: 2)
        }
        cut = false
        link.run(forMilliseconds: 100)
        #expect(link.clientEvents.filter { $0.kind == .linkLost }.isEmpty)
        let history = [PadSnapshot.neutral] + pad.history
        let presses = zip(history.dropFirst(), history).filter { $0[.a] && !$1[.a] }.count
        #expect(presses == taps)
    }

    /// What `serve` gives a socket of its own (`ConnectedClientSockets`): the path of each client that confirmed a
    /// session, told when a client comes, moves (a new `connect` from another port takes over) or is revoked, and never
    /// for a handshake nobody confirmed.
    @Test func theHostTellsTheConfirmedClientsPathsAsTheyChange() throws {
        let link = try LinkSimulation()
        var told: [Set<DatagramPath>] = []
        link.host.onClientPathsChanged = { told.append($0) }
        link.cutClientToHost = true
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        #expect(told.isEmpty, "nothing reached the host")
        link.cutClientToHost = false
        link.run(forMilliseconds: 200)
        #expect(told.map { $0.map(\.remote) } == [[link.clients[0].address]], "its path, told once")

        try link.connect([.simulated("aaaaaaaaaaaa")])  // the first is killed; a new connect from another port
        link.run(forMilliseconds: 1_500)
        #expect(told.last.map { $0.map(\.remote) } == [link.clients[1].address], "the path moved to the new port")

        link.revokeEveryClient()
        #expect(told.last == [], "a revoked client has no path")
        #expect(told.count == 3, "told only when the set changed, not with every datagram")
    }

    /// Issue 19's motion kernel test, on the fake clock: a gyro stream at 250 Hz over an uplink with 5 ms ± 4 ms of
    /// jitter (uniform 1...9 ms: every datagram overtaken by some later ones, as netem reorders) for 10 s. Neither
    /// side may count the link lost, and every sample reaches the virtual pad in order (none skipped for good).
    @Test func aGyroStreamOverAJitteryUplinkKeepsTheLink() throws {
        let link = try LinkSimulation()
        var random = SplitMix64(seed: 19)
        link.clientToHostDelayMicroseconds = { UInt64.random(in: 1_000...9_000, using: &random) }
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        var frame = PadSnapshot.neutral
        frame.motion.gyroRadiansPerSecond = Vector3(x: 0, y: 1.5, z: 0)
        for sample in 0..<2_500 {
            frame.motion.timestampMicroseconds = UInt64(sample) * 4_000
            frame.motion.accelMetersPerSecondSquared = Vector3(x: Double(sample + 1), y: 0, z: 0)
            source.send(frame)
            link.run(forMilliseconds: 4)
        }
        link.run(forMilliseconds: 20)
        #expect(!link.hostEvents.contains { $0.kind == .linkLost }, "\(link.hostEvents)")
        #expect(!link.clientEvents.contains { $0.kind == .linkLost }, "\(link.clientEvents)")
        let shown = pad.history.map(\.motion.accelMetersPerSecondSquared.x).filter { $0 > 0 }
        #expect(shown == shown.sorted(), "a frame showed an older sample than the one before it")
        #expect(shown.last == 2_500, "the last sample is shown")
        #expect(pad.history.allSatisfy { $0.motion.gyroRadiansPerSecond.y == 1.5 || $0.motion.accelMetersPerSecondSquared.x == 0 },
                "no neutral frame in the middle of the stream")
    }

    /// The host reports each way's loss of the current session: towards it from the gaps in the client's counters,
    /// towards the client from what the client's pings say of the host's datagrams up to the pong before. A quarter
    /// of the client's transport datagrams and a tenth of the host's are lost, over a stick stream (no keepalive
    /// falls due: pings ride along every second) and then an idle link (keepalives).
    @Test func theHostReportsTheLossEachWay() throws {
        let link = try LinkSimulation()
        #expect(link.host.clientStatuses().first.map { [$0.lossToHostPercent, $0.lossToClientPercent] } == [nil, nil])
        var clientTransports = 0
        var hostTransports = 0
        link.drops = { from, bytes in
            guard bytes.first == 0x03 else { return false }  // handshakes go through
            if from == .host {
                hostTransports += 1
                return hostTransports % 10 == 0
            }
            clientTransports += 1
            return clientTransports % 4 == 0
        }
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        for step in 0..<1_000 {  // 4 s of a stick moving every 4 ms
            source.send(.holding(leftX: Int16(step % 2_000)))
            link.run(forMilliseconds: 4)
        }
        let streaming = try #require(link.host.clientStatuses().first)
        let lossToHost = try #require(streaming.lossToHostPercent)
        let lossToClient = try #require(streaming.lossToClientPercent, "a ping rode along the stream")
        #expect(abs(lossToHost - 25) < 1, "\(lossToHost)")
        #expect(abs(lossToClient - 10) < 2, "\(lossToClient)")
        link.run(forMilliseconds: 3_000)  // idle: keepalives and their pongs
        let idle = try #require(link.host.clientStatuses().first)
        #expect(idle.connected)
        #expect(abs((idle.lossToHostPercent ?? 0) - 25) < 1, "\(String(describing: idle.lossToHostPercent))")
        #expect(abs((idle.lossToClientPercent ?? 0) - 10) < 2, "\(String(describing: idle.lossToClientPercent))")

        // A clean link: no loss either way.
        let clean = try LinkSimulation()
        try clean.connect([.simulated("aaaaaaaaaaaa")])
        clean.run(forMilliseconds: 1_000)
        let status = try #require(clean.host.clientStatuses().first)
        #expect(status.lossToHostPercent == 0 && status.lossToClientPercent == 0)
        // The round trip the host shows is the client's, from its pings: twice the 500 µs one-way delay.
        let roundTrip = try #require(status.roundTripMicroseconds, "the client's pings carry its round trip")
        #expect((900...1_100).contains(roundTrip), "\(roundTrip) µs")
    }


    /// Finding 3: deleting a client's line in paired-clients revokes it at once, not at its next handshake (which
    /// a connected client never made).
    @Test func deletingAPairedClientsLineEndsItsSessionAtOnce() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        source.send(.holding(.a))
        link.run(forMilliseconds: 5)
        #expect(pad.shown == .holding(.a))

        link.revokeEveryClient()
        #expect(pad.shown == .neutral, "the revoked client's pad released at once")
        #expect(pad.isOpen, "and shown released for a moment, so readers see it")
        #expect(link.hostEvents.contains { $0.kind == .revoked })
        link.run(forMicroseconds: ForwardingHost.releaseShownMicroseconds - 1)
        #expect(pad.isOpen)
        link.run(forMicroseconds: 1)
        #expect(!pad.isOpen, "then gone, \(ForwardingHost.releaseShownMicroseconds / 1000) ms after the revocation")
        source.send(.holding(.b))
        link.run(forMilliseconds: 2_000)
        #expect(!(pad.history.contains { $0[.b] }), "nothing the revoked client sends reaches a pad")
        #expect(link.virtualPads.count == 1, "and it makes no new pad")
        #expect(link.clients[0].events.filter { $0.kind == .connected }.count == 1, "nor a new session")
        #expect(link.clients[0].events.contains { $0.kind == .revoked }, "the client is told: \(link.clients[0].events)")
        #expect(!link.clients[0].events.contains { $0.kind == .linkLost || $0.kind == .reconnecting })
    }

    /// Issue 42, item 1: a game's feedback to a revoked client's pad in the moment it is still shown released
    /// (`releaseShownMicroseconds`) reached a client object already freed (a use after free that crashed serve).
    /// Now it reaches nobody: nothing is sealed or sent for it, and the host goes on serving.
    @Test func feedbackToARevokedClientsReleasedPadReachesNobody() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa", kind: .dualSense)])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        pad.feedback(.rumble(Rumble(strong: 1, weak: 0)))
        link.run(forMilliseconds: 5)

        link.revokeEveryClient()
        // Nothing more from the client: whatever the host sends from now on, the feedback made it send.
        link.cutClientToHost = true
        link.run(forMicroseconds: 1)
        let afterNotice = link.now
        #expect(pad.isOpen, "the revoked client's pad is still shown released")
        for step in 0..<20 {
            pad.feedback(.rumble(Rumble(strong: step % 2 == 0 ? 1 : 0.25, weak: 0.5)))
            pad.feedback(.lightbar(LightbarColor(red: UInt8(step), green: 0, blue: 0)))
        }
        link.run(forMicroseconds: ForwardingHost.releaseShownMicroseconds)
        #expect(!pad.isOpen)
        #expect(link.datagrams(from: .host, since: afterNotice).isEmpty, "the host sent something for a revoked client's pad")

        // The host still serves: a client paired again connects and is forwarded.
        link.cutClientToHost = false
        let other = try link.pairAnotherClient(name: "desk")
        try link.connect([.simulated("bbbbbbbbbbbb")], alongside: true, key: other)
        link.run(forMilliseconds: 100)
        #expect(link.virtualPads.count == 2 && link.virtualPads[1].isOpen)
    }

    /// Issue 42, item 4: one paired client sending table after table of new pads (each a new `connect` with 12 new
    /// IDs) made thousands of virtual pads, destroyed as many lingering ones, and grew the host's memory. Now it
    /// gets `ChurnBudget.creationBurst` virtual pads at once and `creationsPerSecond` after, and what the host keeps
    /// of the pads it did not forward is bounded by the current table.
    @Test func aClientNamingEverNewPadsMakesFewVirtualPadsAndGrowsNothing() throws {
        let link = try LinkSimulation()
        let connects = 150, padsEach = 12, everyMilliseconds: UInt64 = 40
        var reasonsKept: [Int] = []
        for round in 0..<connects {
            let pads = (0..<padsEach).map { index in
                Controller.simulated("r\(round)p\(index)")
            }
            try link.connect(pads)
            link.run(forMilliseconds: everyMilliseconds)
            reasonsKept.append(link.host.notForwardedReasonsKept)
        }
        let seconds = Double(UInt64(connects) * everyMilliseconds) / 1_000
        let allowed = Int(ForwardingHost.ChurnBudget.creationBurst + ForwardingHost.ChurnBudget.creationsPerSecond * seconds) + 1
        #expect(link.virtualPads.count <= allowed, "\(link.virtualPads.count) virtual pads made for \(connects * padsEach) asked in \(seconds) s")
        #expect(link.virtualPads.count >= Int(ForwardingHost.ChurnBudget.creationBurst), "the first pads are made at once")
        #expect(reasonsKept.max()! <= 3 * padsEach, "reasons kept for pads no table names any more: \(reasonsKept.max()!)")
        let notForwardedSaid = link.hostEvents.filter { if case .padNotForwarded = $0 { true } else { false } }.count
        #expect(notForwardedSaid <= connects * padsEach)
        // The host still forwards a person's pad once the flood stops and a token has come back.
        try link.connect([.simulated("eeeeeeeeeeee")])
        link.run(forMilliseconds: 3_000)
        let last = try #require(link.virtualPads.last)
        #expect(last.isOpen)
        #expect(link.sources[Fingerprint(rawValue: "eeeeeeeeeeee")] != nil)
    }

    /// Issue 42, item 4: new table versions (a pad unplugged and plugged in again, over and over) are applied at
    /// most `ChurnBudget.tablesPerSecond` after a burst; the last one still arrives, and the pad ends attached. The
    /// datagrams stay in proportion to the changes.
    @Test func tablesFasterThanTheLimitWaitAndTheLastStillArrives() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        let detachedBefore = link.hostEvents.filter { if case .padDetached = $0 { true } else { false } }.count
        let churnStarted = link.now
        for _ in 0..<1_000 {
            source.unplug()
            link.run(forMicroseconds: 500)
            source.replug()
            link.run(forMicroseconds: 500)
        }
        // No ping-pong while the limit holds: at most two datagrams a table change, the client's and an answer. (The
        // client answered every host message with its unacknowledged table, and the host every datagram while its
        // feedback waited: 400,000 datagrams in this second, where now 1,721; the test took 105 s, now 0.08.)
        let fromClient = link.datagrams(from: nil, since: churnStarted).count
        let fromHost = link.datagrams(from: .host, since: churnStarted).count
        #expect(fromClient + fromHost <= 2 * 2_000, "\(fromClient) datagrams from the client, \(fromHost) from the host")
        let detached = link.hostEvents.filter { if case .padDetached = $0 { true } else { false } }.count - detachedBefore
        let allowed = Int(ForwardingHost.ChurnBudget.tableBurst + ForwardingHost.ChurnBudget.tablesPerSecond * 1.0) + 1
        #expect(detached <= allowed, "\(detached) tables applied in a second")
        #expect(detached >= 2)
        link.run(forMilliseconds: 2_000)
        let pad = try #require(link.virtualPads.first)
        source.send(.holding(.a))
        link.run(forMilliseconds: 50)
        #expect(pad.shown == .holding(.a), "the last table (attached) was applied")
    }

    /// A revoked client whose notice was lost is told again at its next datagram of that session, and stops: no
    /// endless reconnection to a host that answers none of its handshakes.
    @Test func aRevokedClientLearnsItEvenWhenTheFirstNoticeIsLost() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        var noticesDropped = 0
        link.drops = { from, _ in
            guard from == .host, noticesDropped == 0 else { return false }
            noticesDropped += 1
            return true
        }
        link.revokeEveryClient()
        #expect(noticesDropped == 1)
        #expect(pad.shown == .neutral)
        link.run(forMicroseconds: ForwardingHost.releaseShownMicroseconds)
        #expect(!pad.isOpen, "its pads neutral, then gone within \(ForwardingHost.releaseShownMicroseconds / 1000) ms")
        link.run(forMilliseconds: 400)
        #expect(link.clients[0].events.contains { $0.kind == .revoked }, "\(link.clients[0].events)")
        let afterNotice = link.datagrams(from: .client(0), since: link.now - 100_000)
        #expect(afterNotice.isEmpty, "a revoked client sends nothing more: \(afterNotice.count)")
        #expect(!link.clients[0].events.contains { $0.kind == .linkLost || $0.kind == .reconnecting })
    }

    /// A pad the host gives no virtual pad is reported to the client, in the client's words, once per pad and
    /// reason: no room (--max-pads), and no access to /dev/uinput there.
    @Test func theClientIsToldWhyAPadHasNoVirtualPadOncePerReason() throws {
        let link = try LinkSimulation(hostOptions: .init(virtualKind: nil, maximumPads: 1, lingerMilliseconds: 60_000))
        try link.connect([.simulated("aaaaaaaaaaaa"), .simulated("bbbbbbbbbbbb")])
        link.run(forMilliseconds: 50)
        let source = try #require(link.sources[Fingerprint(rawValue: "bbbbbbbbbbbb")])
        for step in 0..<20 {  // many host messages, each listing the pad
            source.send(.holding(leftX: Int16(step * 100)))
            link.run(forMilliseconds: 20)
        }
        func told(_ client: Int) -> [String] {
            link.clients[client].events.compactMap { event -> String? in
                if case let .padNotForwarded(id, reason) = event { "\(id): \(reason)" } else { nil }
            }
        }
        #expect(told(0) == ["bbbbbbbbbbbb: the host's --max-pads 1 is reached; it gets a virtual pad when one goes"])
        let status = try #require(link.host.clientStatuses().first)
        #expect(status.pads.map(\.state) == [.live, .notForwarded])

        let denied = try LinkSimulation()
        denied.virtualPadError = VirtualPadCreationFailure(DeviceAccessError(
            code: .permissionDenied, path: "/dev/uinput", operation: "open", cause: .permissionDenied))
        try denied.connect([.simulated("aaaaaaaaaaaa")])
        denied.run(forMilliseconds: 1_000)
        let deniedTold = denied.clients[0].events.compactMap { event -> String? in
            if case let .padNotForwarded(_, reason) = event { reason } else { nil }
        }
        #expect(deniedTold == ["the host may not open /dev/uinput (`padbridge doctor` there says how)"])
        #expect(denied.host.clientStatuses().first?.pads.first?.problem?.contains("permission denied") == true)
    }

    /// Finding 3, second part: a session lives at most a few minutes; the client makes a new one every two, without
    /// a gap in forwarding or a lost link.
    @Test func sessionsAreRekeyedEveryTwoMinutesWithoutAGap() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        var late = 0
        for second in 0..<400 {
            source.send(second % 2 == 0 ? .holding(.a) : .neutral)
            link.run(forMilliseconds: 5)
            if pad.shown?[.a] != (second % 2 == 0) { late += 1 }
            link.run(forMilliseconds: 995)
        }
        let initiations = link.datagrams(from: nil).filter { $0.first == 0x01 }.count
        #expect(initiations >= 3, "\(initiations) handshakes in 400 s: sessions are not renewed")
        #expect(late == 0, "\(late) of 400 changes not shown within 5 ms")
        #expect(!link.hostEvents.contains { $0.kind == .linkLost })
        #expect(!link.clientEvents.contains { $0.kind == .linkLost })
    }

    /// A session that is not renewed (every new handshake lost) ends: the host accepts its datagrams for three
    /// minutes at most.
    @Test func aSessionThatIsNeverRenewedEnds() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        link.drops = { from, bytes in from != .host && bytes.first == 0x01 }
        link.run(forMilliseconds: 170_000)
        #expect(!link.clientEvents.contains { $0.kind == .linkLost })
        link.run(forMilliseconds: 15_000)
        #expect(link.clientEvents.contains { $0.kind == .linkLost }, "a session older than 3 minutes still works")
    }

    /// Finding 4: `connect host padA`, Ctrl-C, `connect host padB` within --linger: B gets its own virtual pad,
    /// drives only that one, and A's feedback never reaches B.
    @Test func aNewConnectionsPadsSupersedeTheOldSlots() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let padA = try #require(link.virtualPads.first)
        let sourceA = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        sourceA.send(.holding(.x))
        padA.feedback(.rumble(Rumble(strong: 1, weak: 0)))
        link.run(forMilliseconds: 20)
        #expect(sourceA.feedbackState.rumble == Rumble(strong: 1, weak: 0))

        try link.connect([.simulated("bbbbbbbbbbbb")])
        link.run(forMilliseconds: 100)
        let sourceB = try #require(link.sources[Fingerprint(rawValue: "bbbbbbbbbbbb")])
        #expect(link.virtualPads.count == 2)
        let padB = link.virtualPads[1]
        sourceB.send(.holding(.y))
        link.run(forMilliseconds: 20)
        #expect(padB.shown == .holding(.y))
        #expect(!padA.history.contains { $0[.y] }, "B's input drove A's virtual pad")
        #expect(padA.shown == .neutral, "A's pad (its client gone) is neutral")
        padA.feedback(.lightbar(LightbarColor(red: 1, green: 2, blue: 3)))
        link.run(forMilliseconds: 50)
        #expect(sourceB.submitted.isEmpty, "A's feedback reached B: \(sourceB.submitted)")
    }

    /// Finding 4, second part: two `connect` with one identity do not take the link from each other every half
    /// second in silence: the one taken over is told and stops.
    @Test func twoConnectsWithOneIdentityDoNotFightInSilence() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 100)
        try link.connect([.simulated("bbbbbbbbbbbb")], alongside: true)
        link.run(forMilliseconds: 3_000)
        let first = link.clients[0]
        #expect(first.events.contains { $0.kind == .takenOver }, "the first connect is not told: \(first.events)")
        #expect(link.hostEvents.contains { $0.kind == .takenOver })
        let initiations = link.sent.filter { $0.from == .client(0) && $0.bytes.first == 0x01 }.count
        #expect(initiations == 1, "the first connect handshook \(initiations) times")
        #expect(link.clients[1].events.filter { $0.kind == .connected }.count == 1)
    }

    /// Finding 6: a backlog of presses longer than one datagram (a DualSense's frames with touch and motion, the
    /// link cut for 300 ms) arrives whole and in order, in datagrams within one MTU.
    @Test func aBacklogLongerThanOneDatagramArrivesWhole() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa", kind: .dualSense)])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        link.cutClientToHost = true
        for index in 0..<60 {
            var frame = PadSnapshot.holding()
            frame[.a] = index % 2 == 0
            frame.touches[0] = TouchContact(trackingID: UInt8(index / 2), active: index % 4 < 2, x: 0.5, y: 0.25)
            frame.motion = MotionSample(
                gyroRadiansPerSecond: Vector3(x: 1, y: 2, z: 3), accelMetersPerSecondSquared: Vector3(x: 0, y: 9.8, z: 0),
                timestampMicroseconds: UInt64(index) * 5_000)
            source.send(frame)
            link.run(forMilliseconds: 5)
        }
        link.cutClientToHost = false
        link.run(forMilliseconds: 300)
        var edges: [Bool] = []
        for snapshot in pad.history where edges.last != snapshot[.a] { edges.append(snapshot[.a]) }
        #expect(edges == Array(repeating: [true, false], count: 30).flatMap { $0 }, "\(edges.count) edges")
        let largest = link.sent.map(\.bytes.count).max() ?? 0
        #expect(largest <= LinkDatagram.maximumSize, "a \(largest)-byte datagram")
    }

    /// Two pads streaming sticks at 1 kHz each, half a millisecond apart (one client: the host hears a frame every
    /// 0.5 ms): the host's delayed acknowledgement, put off by each frame that comes within 1 ms, must still come
    /// often enough for the client to hear the host. Before it was bounded, a stream with no gap of 1 ms was never
    /// acknowledged, and the client took the link for lost every 400 ms and handshook again.
    @Test func aStreamWithoutPausesIsStillAcknowledgedAndTheLinkHolds() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa"), .simulated("bbbbbbbbbbbb")])
        link.run(forMilliseconds: 50)
        let sources = try ["aaaaaaaaaaaa", "bbbbbbbbbbbb"].map { try #require(link.sources[Fingerprint(rawValue: $0)]) }
        let start = link.now
        for frame in 0..<4_000 {  // 2 s
            sources[frame % 2].send(.holding(leftX: Int16(frame % 2_000) * 16 + 1))
            link.run(forMicroseconds: 500)
        }
        #expect(!link.clientEvents.contains { $0.kind == .linkLost }, "the client took the link for lost")
        let answers = link.sent.filter { $0.from == .host && $0.at >= start }.map(\.at)
        let longestGap = zip([start] + answers, answers + [link.now]).map { $1 - $0 }.max() ?? 0
        #expect(longestGap <= LinkLiveness.longestAcknowledgementDelayMicroseconds + 1_000,
                "the host was silent for \(longestGap / 1000) ms of the stream (\(answers.count) datagrams)")
        #expect(answers.count <= 2 * 2_000_000 / Int(LinkLiveness.longestAcknowledgementDelayMicroseconds),
                "one acknowledgement a frame is not what a stream gets: \(answers.count) in 2 s")
    }

    /// A host working through a backlog runs its timer only between batches of datagrams, against the clock read
    /// when the batch began. A datagram read meanwhile must not put an overdue timer off to "now + 1 µs": that is
    /// after the batch's clock, so the timer waited for the next batch, which pushed it again, and so on for as
    /// long as datagrams kept coming (in the guest: no acknowledgement for 400 ms, every client took the link for
    /// lost). Once an acknowledgement is overdue, the timer is due now.
    @Test func anOverdueAcknowledgementIsNotPutOffByTheNextDatagram() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        link.hostTimerHeld = true
        let start = link.now
        var overdueAndPutOff: [UInt64] = []
        for frame in 0..<200 {  // 100 ms, a frame every 0.5 ms, the host's timer held meanwhile
            source.send(.holding(leftX: Int16(frame) * 16 + 1))
            link.run(forMicroseconds: 500)
            let late = link.now - start > LinkLiveness.longestAcknowledgementDelayMicroseconds + 1_000
            if late, let deadline = link.hostTimer.deadline, deadline > link.now { overdueAndPutOff.append(deadline - link.now) }
        }
        #expect(overdueAndPutOff.isEmpty, "an overdue timer was put off \(overdueAndPutOff.count) times")
        let before = link.sent.filter { $0.from == .host }.count
        link.hostTimerHeld = false
        link.run(forMicroseconds: 1)
        #expect(link.sent.filter { $0.from == .host }.count > before, "the overdue acknowledgement went out at once")
        #expect(!link.clientEvents.contains { $0.kind == .linkLost })
    }

    /// A press asks for an acknowledgement: it goes from the host's timer at the end of the wake the press came in
    /// (after every datagram of that wake, which share it), not a wake of its own later; so it is back before the
    /// client's first quick copy is due, and none is sent.
    @Test func aPressIsAcknowledgedAtTheEndOfTheWakeItCameIn() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 200)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        let pressedAt = link.now
        source.send(.holding(.a))
        link.run(forMilliseconds: 20)
        let fromClient = link.sent.filter { $0.from != .host && $0.at >= pressedAt }
        let fromHost = link.sent.filter { $0.from == .host && $0.at >= pressedAt }
        #expect(fromHost.first?.at == pressedAt + link.oneWayDelayMicroseconds, "acknowledged as the press arrived")
        #expect(fromClient.count == 1, "no quick copy once the acknowledgement came: \(fromClient.map(\.at))")
        #expect(fromHost.count == 1)
    }

    /// A stick moved once, after a quiet while, is an isolated change: acknowledged at the end of the wake it came
    /// in, not 1 ms later in a wake of its own; a stream that follows is acknowledged once it pauses, not per frame.
    @Test func anIsolatedStickChangeIsAcknowledgedAtOnceAndAStreamIsNot() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 200)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        let movedAt = link.now
        source.send(.holding(leftX: 5_000))
        link.run(forMilliseconds: 20)
        let answers = link.sent.filter { $0.from == .host && $0.at >= movedAt }
        #expect(answers.first?.at == movedAt + link.oneWayDelayMicroseconds, "acknowledged as it arrived")
        #expect(answers.count == 1)

        let streamFrom = link.now
        for frame in 0..<20 {  // 20 frames 1 ms apart, then a pause
            source.send(.holding(leftX: Int16(6_000 + frame * 16)))
            link.run(forMilliseconds: 1)
        }
        link.run(forMilliseconds: 20)
        let streamAnswers = link.sent.filter { $0.from == .host && $0.at >= streamFrom }
        #expect(streamAnswers.count <= 2, "a stream is not acknowledged frame by frame: \(streamAnswers.count) answers")
    }

    /// The client's side of the same: a client whose loop is busy with its pad's frames runs its timer only between
    /// them, against the clock read when the batch began. An overdue deadline (here: the host gone silent, the
    /// link to be counted lost) must not be put off to "now + 1 µs" by each frame sent meanwhile.
    @Test func anOverdueClientDeadlineIsNotPutOffByTheNextFrame() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        let timer = try #require(link.clients.last?.timer)
        link.cutHostToClient = true
        link.clientTimersHeld = true
        let start = link.now
        var overdueAndPutOff: [UInt64] = []
        for frame in 0..<1_000 {  // 500 ms, a frame every 0.5 ms, the client's timer held meanwhile
            link.run(forMicroseconds: 500)
            source.send(.holding(leftX: Int16(frame) * 16 + 1))  // read and sent at the loop's clock
            let late = link.now - start > LinkLiveness.timeoutMicroseconds + 1_000
            if late, let deadline = timer.deadline, deadline > link.now { overdueAndPutOff.append(deadline - link.now) }
        }
        #expect(overdueAndPutOff.isEmpty, "an overdue timer was put off \(overdueAndPutOff.count) times")
        #expect(!link.clientEvents.contains { $0.kind == .linkLost })
        link.clientTimersHeld = false
        link.run(forMicroseconds: 1)
        #expect(link.clientEvents.contains { $0.kind == .linkLost }, "the overdue check ran at once")
    }

    /// Finding 8: a client whose wall clock stepped back (NTP, a dual boot) and that connects again is not refused.
    @Test func aClientWhoseClockSteppedBackConnectsAgain() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 100)
        link.wallClockOffset -= 3_600_000_000
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 2_000)
        #expect(link.clients[1].events.contains { $0.kind == .connected }, "\(link.clients[1].events)")
    }

    /// Finding 9: a paired-clients file padbridge cannot read is reported, naming the file and the line, instead of
    /// refusing every client in silence.
    @Test func aBrokenPairedClientsFileIsReportedNamingItsLine() throws {
        var template = Array("/tmp/padbridge-simulation-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let path = directory + "/paired-clients"
        defer {
            unlink(path)
            rmdir(directory)
        }
        let store = TrustStore(directory: directory)
        let clientKey = Curve25519.KeyAgreement.PrivateKey()
        try store.accept(PairedClient(key: LinkPublicKey(bytes: clientKey.publicKey.rawRepresentation)!, name: "laptop"))
        let link = try LinkSimulation(pairedClients: store)
        let file = try #require(fopen(path, "a"))
        fputs("not-a-key laptop\n", file)
        fclose(file)
        link.host.reloadPairedClients()
        let problems = link.hostEvents.compactMap { event -> String? in
            if case let .pairedClientsUnreadable(message) = event { message } else { nil }
        }
        #expect(problems.count == 1 && problems[0].contains(path) && problems[0].contains("line 3"), "\(problems)")
    }

    /// Finding 11: feedback a game set (lightbar, rumble) is applied again to a pad unplugged and plugged in again
    /// on the client.
    @Test func feedbackIsAppliedAgainToAReplugedPad() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa", kind: .dualSense)])
        link.run(forMilliseconds: 50)
        let pad = try #require(link.virtualPads.first)
        let source = try #require(link.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        pad.feedback(.lightbar(LightbarColor(red: 9, green: 8, blue: 7)))
        pad.feedback(.playerLeds(mask: 4))
        link.run(forMilliseconds: 20)
        source.unplug()
        link.run(forMilliseconds: 20)
        let before = source.submitted.count
        source.replug()
        link.run(forMilliseconds: 20)
        var again = Feedback()
        for part in source.submitted.dropFirst(before) { again.merge(part) }
        #expect(again.lightbar == LightbarColor(red: 9, green: 8, blue: 7) && again.playerLeds == 4, "\(again)")
    }

    /// Finding 11: lingering pads make room under --max-pads for a client's live pads, and a pad refused for want
    /// of room gets its virtual pad once there is room.
    @Test func lingeringPadsMakeRoomAndARefusedPadIsRetried() throws {
        let link = try LinkSimulation(hostOptions: .init(virtualKind: nil, maximumPads: 1, lingerMilliseconds: 60_000))
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 50)
        try link.connect([.simulated("bbbbbbbbbbbb")])
        link.run(forMilliseconds: 100)
        #expect(link.virtualPads.count == 2 && link.virtualPads[1].isOpen && !link.virtualPads[0].isOpen,
                "the new connection's pad waits for a lingering one")

        let other = try link.pairAnotherClient(name: "desk")
        try link.connect([.simulated("cccccccccccc")], alongside: true, key: other)
        link.run(forMilliseconds: 100)
        #expect(link.clients[2].events.contains { $0.kind == .connected })
        #expect(link.virtualPads.count == 2, "no room while B's client is connected")
        #expect(link.hostEvents.contains { $0.kind == .padNotForwarded })
        link.clients[1].client.close()
        link.clients[1].closed = true
        link.run(forMilliseconds: 1_000)
        #expect(link.virtualPads.count == 3 && link.virtualPads[2].isOpen, "C never got a pad once B's client left")
    }

    /// Finding 11: a paired client's pad names reach the host's status lines as printable text.
    @Test func padNamesFromAClientArePrintable() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa", name: "pad\u{1B}]0;owned\u{07}\u{9B}31m red")])
        link.run(forMilliseconds: 50)
        let names = link.hostEvents.compactMap { event -> String? in
            if case let .padAttached(_, pad, _, _, _) = event { pad.name } else { nil }
        }
        #expect(names.count == 1)
        #expect(names.allSatisfy { name in name.unicodeScalars.allSatisfy { $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) } }, "\(names)")
    }
}
