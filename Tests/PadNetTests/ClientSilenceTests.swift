import PadCore
import PadNet
import PadNetLinux
import Testing

/// docs/protocol.md section 10: the host only answers, so silence tells the client something only while it sends.
/// A client that was not running (SIGSTOP, a suspended laptop, a starved process) wakes to silence it caused
/// itself; it must not count that as a lost link, and must still find a link that is really gone.
@Suite struct ClientSilenceTests {

    /// A client stopped for 2 s: it neither ticks nor sends meanwhile (the host gives it up and its pads go
    /// neutral). When it runs again, it sends and hears the host, and never says the link was lost.
    @Test func aClientStoppedForLongerThanTheTimeoutDoesNotDeclareTheLinkLostWhenItWakes() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 200)
        #expect(link.clientEvents.contains { $0.kind == .connected })
        link.clientTimersHeld = true  // stopped: its timer does not fire, so it sends nothing
        link.run(forMilliseconds: 2_000)
        #expect(link.hostEvents.contains { $0.kind == .linkLost }, "the host gave it up")
        let woke = link.now
        link.clientTimersHeld = false
        link.run(forMilliseconds: 1_000)
        #expect(!link.clientEvents.contains { $0.kind == .linkLost }, "\(link.clientEvents)")
        #expect(link.datagrams(from: .client(0), since: woke).count >= 5, "it sends again at once")
        #expect(link.datagrams(from: .host, since: woke).count >= 5, "and the host answers")
        #expect(link.hostEvents.contains { $0.kind == .resumed })
    }

    /// A client that wakes to a link that is really gone (the host's answers no longer come) still finds out:
    /// 400 ms after it sent again, not at once and not never.
    @Test func aClientThatWakesToALinkReallyGoneDeclaresItLostFourHundredMillisecondsAfterItSendsAgain() throws {
        let link = try LinkSimulation()
        try link.connect([.simulated("aaaaaaaaaaaa")])
        link.run(forMilliseconds: 200)
        link.clientTimersHeld = true
        link.cutHostToClient = true
        link.run(forMilliseconds: 2_000)
        let woke = link.now
        link.clientTimersHeld = false
        link.run(forMilliseconds: 1)
        #expect(!link.clientEvents.contains { $0.kind == .linkLost }, "declared lost on its first wake")
        var lostAt: UInt64?
        for _ in 0..<1_000 where lostAt == nil {
            link.run(forMilliseconds: 1)
            if link.clientEvents.contains(where: { $0.kind == .linkLost }) { lostAt = link.now }
        }
        let after = try #require(lostAt, "never declared lost") - woke
        #expect(after >= LinkLiveness.timeoutMicroseconds && after <= LinkLiveness.timeoutMicroseconds + 30_000, "\(after) µs")
    }

    /// The rule itself, on LinkLiveness alone: silence counts only while sending, and a pause of sending longer
    /// than `sendingPauseMicroseconds` starts the count again; the host's rule (any silence) is unchanged.
    @Test func silenceCountsOnlyWhileTheClientSends() {
        var client = LinkLiveness(startingAtMicroseconds: 0, countsSilenceOnlyWhileSending: true)
        var host = LinkLiveness(startingAtMicroseconds: 0)
        client.heard(atMicroseconds: 100_000)
        host.heard(atMicroseconds: 100_000)
        client.sent(atMicroseconds: 150_000)
        host.sent(atMicroseconds: 150_000)
        // Not running from 150 ms to 2 s.
        #expect(!client.isLost(atMicroseconds: 2_000_000))
        #expect(host.isLost(atMicroseconds: 2_000_000))
        client.sent(atMicroseconds: 2_000_000)
        #expect(client.sendingSinceMicroseconds == 2_000_000)
        #expect(client.nextWakeMicroseconds(hasUnacknowledged: false) > 2_000_000)
        for time in stride(from: UInt64(2_025_000), to: 2_400_000, by: 25_000) {
            client.sent(atMicroseconds: time)
            #expect(!client.isLost(atMicroseconds: time))
        }
        client.sent(atMicroseconds: 2_400_000)
        #expect(client.isLost(atMicroseconds: 2_400_000))
        // Sending all along (every 100 ms at most), the client counts from the last datagram heard, as before.
        var running = LinkLiveness(startingAtMicroseconds: 0, countsSilenceOnlyWhileSending: true)
        for time in stride(from: UInt64(100_000), through: 400_000, by: 100_000) { running.sent(atMicroseconds: time) }
        #expect(running.isLost(atMicroseconds: 400_000))
        #expect(!running.isLost(atMicroseconds: 399_999))
    }
}
