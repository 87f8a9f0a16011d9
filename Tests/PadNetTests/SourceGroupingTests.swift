@testable import PadNet
import PadNetLinux
import Testing

/// Which addresses share one per-source handshake limit (issue 31, finding 3): every link-local address is in
/// fe80::/64 and the neighbours of one LAN share their SLAAC prefix, so a /64 there would let one neighbour use up
/// another's share.
@Suite struct SourceGroupingTests {
    static func address(_ text: String) -> SocketAddress { try! SocketAddress.resolve(text, defaultPort: 1)[0] }
    static let lan: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01, 0x00, 0x02]

    @Test func linkLocalAndOnLinkAddressesCountAlone() {
        var grouping = SourceGrouping(onLinkPrefixes: { [Self.lan] })
        let attacker = grouping.source(of: Self.address("[fe80::bad]:5"), atMicroseconds: 0)
        let victim = grouping.source(of: Self.address("[fe80::1234]:5"), atMicroseconds: 0)
        #expect(attacker != victim)
        let neighbour = grouping.source(of: Self.address("[2001:db8:1:2::bad]:5"), atMicroseconds: 0)
        let other = grouping.source(of: Self.address("[2001:db8:1:2::1234]:5"), atMicroseconds: 0)
        #expect(neighbour != other)
        // Beyond the host's links a /64 is what one machine may hold: counted together.
        let far = grouping.source(of: Self.address("[2001:db8:9:9::1]:5"), atMicroseconds: 0)
        let farToo = grouping.source(of: Self.address("[2001:db8:9:9::2]:7"), atMicroseconds: 0)
        #expect(far == farToo)
        // IPv4, also as an IPv6 socket sees it.
        #expect(grouping.source(of: Self.address("127.0.0.1:5"), atMicroseconds: 0)
            == grouping.source(of: Self.address("[::ffff:127.0.0.1]:9"), atMicroseconds: 0))
    }

    @Test func theHostsPrefixesAreReadAgainAfterAWhile() {
        final class Reads: @unchecked Sendable { var count = 0 }  // read only by this test's one thread
        let reads = Reads()
        var grouping = SourceGrouping(onLinkPrefixes: {
            reads.count += 1
            return []
        })
        _ = grouping.source(of: Self.address("[2001:db8:1:2::1]:5"), atMicroseconds: 0)
        _ = grouping.source(of: Self.address("[2001:db8:1:2::1]:5"), atMicroseconds: 1_000_000)
        #expect(reads.count == 1)
        _ = grouping.source(of: Self.address("[2001:db8:1:2::1]:5"), atMicroseconds: SourceGrouping.prefixesLifetimeMicroseconds)
        #expect(reads.count == 2)
    }

    @Test func underLoadALinkLocalNeighbourFloodingLeavesAnotherItsShare() {
        var admission = HandshakeAdmission(
            .init(burst: 1, perSecond: 0.001, burstPerSource: 5, perSecondPerSource: 0.001), atMicroseconds: 0,
            onLinkPrefixes: { [] })
        _ = admission.admitsWithoutCookie(atMicroseconds: 0)  // the load threshold is passed
        for _ in 0..<20 { _ = admission.admitsProvenSource(Self.address("[fe80::bad]:5"), atMicroseconds: 0) }
        let attackerAgain = admission.admitsProvenSource(Self.address("[fe80::bad]:5"), atMicroseconds: 0)
        let victim = admission.admitsProvenSource(Self.address("[fe80::1234]:5"), atMicroseconds: 0)
        #expect(!attackerAgain)
        #expect(victim, "a neighbour at another link-local address keeps its own share")
    }
}
