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
}
