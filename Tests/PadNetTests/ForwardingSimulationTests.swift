import PadCore
import PadNet
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
}
