import Crypto
import PadCore
import PadNet
import PadNoise
import PadTestSupport
import Testing

/// What someone on the network costs a host that serves: every X25519 operation the host performs is counted
/// (`NoisePublicKeyOperations`), so each test shows where public-key work happens and where it must not.
@Suite struct LinkFloodTests {
    static func address(_ text: String) -> SocketAddress { try! SocketAddress.resolve(text, defaultPort: 1)[0] }

    /// The public-key operations the host performs handling `datagrams`, each from its address, in order.
    static func hostOperations(_ simulation: LinkSimulation, _ datagrams: [(bytes: [UInt8], from: SocketAddress)]) -> Int {
        let operations = NoisePublicKeyOperations()
        NoisePublicKeyOperations.$current.withValue(operations) {
            for datagram in datagrams {
                datagram.bytes.withUnsafeBytes { simulation.host.receive($0, along: DatagramPath(remote: datagram.from)) }
            }
        }
        return operations.performed
    }

    /// The first datagram of a `connect` with `identity` to a host with `hostKey`.
    static func initiation(
        _ simulation: LinkSimulation, identity: Curve25519.KeyAgreement.PrivateKey? = nil,
        hostKey: Curve25519.KeyAgreement.PrivateKey? = nil, clock: UInt64 = 1_700_000_000_000_000
    ) throws -> [UInt8] {
        try LinkClientHandshake(
            identity: identity ?? simulation.clientKey,
            hostKey: LinkPublicKey(bytes: (hostKey ?? simulation.hostKey).publicKey.rawRepresentation)!,
            wallClockMicroseconds: clock
        ).initiation
    }

    /// The control for every test below: a paired client's initiation costs the host its public-key work (5
    /// operations: es, ss, its ephemeral key, ee, se) and is answered.
    @Test func aPairedClientsInitiationIsAnswered() throws {
        let simulation = try LinkSimulation()
        let client = Self.address("192.0.2.1:40000")
        #expect(Self.hostOperations(simulation, [(try Self.initiation(simulation), client)]) == 5)
        #expect(simulation.datagrams(from: .host).count == 1)
    }

    /// Random datagrams that begin as an initiation does, of every length (the flood: 109 random bytes
    /// starting with 0x01, 5,000 a second), cost no public-key work and get no answer.
    @Test func junkShapedLikeInitiationsCostsNoPublicKeyWork() throws {
        let simulation = try LinkSimulation()
        var generator = SplitMix64(seed: 0x1_F100D)
        var junk: [(bytes: [UInt8], from: SocketAddress)] = []
        for length in 1...300 {
            for _ in 0..<4 {
                var bytes = generator.bytes(length)
                bytes[0] = 0x01
                junk.append((bytes, Self.address("198.51.100.\(UInt8.random(in: 1...254, using: &generator)):\(length + 1000)")))
            }
        }
        #expect(Self.hostOperations(simulation, junk) == 0)
        #expect(simulation.datagrams(from: .host).isEmpty)
        #expect(simulation.hostEvents.contains { if case .dropped = $0 { true } else { false } })
    }

    /// A paired client's initiation with any bit changed before its second MAC (a forgery, or corruption) costs no
    /// public-key work and gets no answer.
    @Test func aForgedInitiationCostsNoPublicKeyWork() throws {
        let simulation = try LinkSimulation()
        let genuine = try Self.initiation(simulation)
        var forged: [(bytes: [UInt8], from: SocketAddress)] = []
        for bit in stride(from: 0, to: (genuine.count - 32) * 8, by: 3) {
            var bytes = genuine
            bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            forged.append((bytes, Self.address("192.0.2.1:40000")))
        }
        #expect(Self.hostOperations(simulation, forged) == 0)
        #expect(simulation.datagrams(from: .host).isEmpty)
    }

    /// A client that holds another host's key (it paired with another machine, or this host's key changed) costs
    /// no public-key work either: its initiation is not made for this host.
    @Test func anInitiationForAnotherHostsKeyCostsNoPublicKeyWork() throws {
        let simulation = try LinkSimulation()
        let elsewhere = try Self.initiation(simulation, hostKey: Curve25519.KeyAgreement.PrivateKey())
        #expect(Self.hostOperations(simulation, [(elsewhere, Self.address("192.0.2.1:40000"))]) == 0)
        #expect(simulation.datagrams(from: .host).isEmpty)
    }
}
