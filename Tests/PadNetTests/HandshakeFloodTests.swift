import Crypto
import PadCore
import PadNet
import PadNetLinux
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

    /// Random datagrams that begin as an initiation does, of every length (the issue's flood: 109 random bytes
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

    /// A captured initiation sent again, from anywhere, costs no public-key work and replaces nothing: from the
    /// address it came from it gets the answer it got (a client repeats its renewal's initiation until it hears
    /// back), from elsewhere nothing; the session it opened is the one the client completes.
    @Test func aReplayedInitiationCostsNoPublicKeyWork() throws {
        let simulation = try LinkSimulation()
        let client = Self.address("192.0.2.1:40000")
        var handshake = try LinkClientHandshake(
            identity: simulation.clientKey, hostKey: LinkPublicKey(bytes: simulation.hostKey.publicKey.rawRepresentation)!,
            wallClockMicroseconds: 1_700_000_000_000_000)
        #expect(Self.hostOperations(simulation, [(handshake.initiation, client)]) == 5)
        let replays = (0..<200).map { index in
            (bytes: handshake.initiation, from: index % 2 == 0 ? client : Self.address("198.51.100.7:\(41000 + index)"))
        }
        #expect(Self.hostOperations(simulation, replays) == 0)
        let answers = simulation.datagrams(from: .host)
        #expect(answers.count == 101 && Set(answers).count == 1)
        let answer = try #require(LinkDatagram(answers[0]))
        let completed = handshake.complete(with: answer)
        var session = try #require(completed)
        try session.seal(LinkClientMessage().encoded).withUnsafeBytes { simulation.host.receive($0, along: DatagramPath(remote: client)) }
        #expect(simulation.hostEvents.contains { if case .clientConnected = $0 { true } else { false } })
    }

    /// Someone who knows the host's key (a revoked client, say) sending 2,000 valid initiations over a second from
    /// spoofed addresses: the host's public-key work stays within its budget (a burst of 20, then 10 a second; the
    /// rest are asked for cookies, which never reach the flooder), and the paired client, connecting meanwhile, gets
    /// through after one more round trip: its initiation again, carrying the cookie.
    @Test func validInitiationsFromSpoofedAddressesAreKeptWithinTheBudget() throws {
        let simulation = try LinkSimulation()
        let stranger = Curve25519.KeyAgreement.PrivateKey()
        let flood = try (0..<2_000).map { try Self.initiation(simulation, identity: stranger, clock: UInt64($0 + 1)) }
        var operations = 0
        try simulation.connect([.simulated("pad")])
        for tick in 0..<10 {
            let batch = flood[tick * 200..<(tick + 1) * 200].enumerated().map { index, bytes in
                (bytes: bytes, from: Self.address("198.51.100.\(index % 250 + 1):\(10_000 + tick * 200 + index)"))
            }
            operations += Self.hostOperations(simulation, batch)
            simulation.run(forMilliseconds: 100)
        }
        // 2 operations each (es, ss: then the host finds the key unpaired).
        #expect(operations <= 2 * (20 + 10 + 1), "\(operations) public-key operations for the flood")
        #expect(simulation.clients[0].events.contains { if case .connected = $0 { true } else { false } })
        let initiations = simulation.datagrams(from: .client(0)).filter { $0.first == 0x01 }
        #expect(initiations.count == 2 && initiations[1].suffix(32) != [UInt8](repeating: 0, count: 32),
                "asked for a cookie, the client sent its initiation again with it")
        let cookieReplies = simulation.datagrams(from: .host).filter { $0.first == 0x04 }
        #expect(!cookieReplies.isEmpty && cookieReplies.allSatisfy { $0.count == LinkDatagram.cookieReplySize })
        #expect(LinkDatagram.cookieReplySize < LinkDatagram.initiationSize, "nobody is flooded through the host")
    }

    /// One machine that knows the host's key and answers the host's cookie replies (it receives at its address),
    /// sending 500 valid initiations over a second: it gets the host's burst and steady rate, then its own small
    /// share (5, then 2 a second). A cookie works only from the address it was given for, and only for the
    /// initiation it answered.
    @Test func aSourceThatProvesItsAddressGetsItsOwnShareOnly() throws {
        let simulation = try LinkSimulation()
        let stranger = Curve25519.KeyAgreement.PrivateKey()
        let hostKey = LinkPublicKey(bytes: simulation.hostKey.publicKey.rawRepresentation)!
        let from = Self.address("198.51.100.9:30000")
        var operations = 0
        var cookie: [UInt8]?
        for index in 0..<500 {
            var handshake = try LinkClientHandshake(
                identity: stranger, hostKey: hostKey, wallClockMicroseconds: UInt64(index + 1), cookie: cookie)
            for _ in 0..<2 {
                let before = simulation.datagrams(from: .host).count
                operations += Self.hostOperations(simulation, [(handshake.initiation, from)])
                guard let reply = simulation.datagrams(from: .host).dropFirst(before).last.flatMap({ LinkDatagram($0) }),
                    handshake.takeCookie(from: reply)
                else { break }
                cookie = handshake.cookie
            }
            simulation.run(forMilliseconds: 2)
        }
        #expect(cookie != nil, "the host was under load and asked for a cookie")
        #expect(operations <= 2 * (20 + 10 + 5 + 2 + 1), "\(operations) public-key operations")

        // The cookie, used from another address (spoofing this one's proof), or read by another initiation: nothing.
        var elsewhere = try LinkClientHandshake(
            identity: stranger, hostKey: hostKey, wallClockMicroseconds: 10_000, cookie: cookie)
        let before = simulation.datagrams(from: .host).count
        #expect(Self.hostOperations(simulation, [(elsewhere.initiation, Self.address("198.51.100.10:30000"))]) == 0)
        let reply = try #require(simulation.datagrams(from: .host).dropFirst(before).last.flatMap { LinkDatagram($0) })
        var other = try LinkClientHandshake(identity: stranger, hostKey: hostKey, wallClockMicroseconds: 10_001)
        let takenByAnother = other.takeCookie(from: reply)
        let takenByItsOwn = elsewhere.takeCookie(from: reply)
        #expect(!takenByAnother, "another initiation's cookie reply")
        #expect(takenByItsOwn, "a cookie for the new address")
    }
}

/// Pairing under a flood: while a window is open anyone may send first messages (the code is checked only at the
/// third message), each worth a key generation and two agreements to a host that answers it.
@Suite struct PairingFloodTests {
    static let code = PairingCode(typed: "ZW0AM-N8J6H-B7H6N")!
    static func address(_ text: String) -> SocketAddress { try! SocketAddress.resolve(text, defaultPort: 1)[0] }

    /// Runs `initiator` against `responder` from `address` until it pairs or nothing more comes back.
    static func pair(
        _ initiator: inout PairingInitiator, with responder: inout PairingResponder, from address: SocketAddress,
        at now: UInt64
    ) throws -> PairingInitiator.Outcome {
        var outgoing = try initiator.start()
        for _ in 0..<6 {
            let (reply, _) = responder.handle(PairingDatagram(outgoing)!, from: address, atMicroseconds: now, accept: { _ in })
            guard let reply, let datagram = PairingDatagram(reply) else { return .ignored }
            switch initiator.receive(datagram) {
            case let .send(next): outgoing = next
            case let outcome: return outcome
            }
        }
        return .ignored
    }

    /// A captured first message replayed from 2,000 spoofed addresses over two seconds: the host's public-key work
    /// stays within its budget, the exchange a person had under way is not evicted, and a person who starts pairing
    /// in the middle of the flood (a new window) pairs.
    @Test func aSpoofedFloodOfFirstMessagesDoesNotKeepAPersonFromPairing() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        let hostKey = LinkPublicKey(bytes: host.publicKey.rawRepresentation)!
        var responder = PairingResponder(identity: host, hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var early = try PairingInitiator(code: Self.code, identity: .init(), clientName: "early")
        let earlyAddress = Self.address("192.0.2.10:5000")
        let earlyAnswer = try #require(
            responder.handle(PairingDatagram(try early.start())!, from: earlyAddress, atMicroseconds: 1, accept: { _ in }).reply)
        var flooder = try PairingInitiator(code: Self.code, identity: .init(), clientName: "x")
        let captured = PairingDatagram(try flooder.start())!
        let operations = NoisePublicKeyOperations()
        func flood(from start: UInt64, ticks: Int) {
            NoisePublicKeyOperations.$current.withValue(operations) {
                for tick in 0..<ticks {
                    for index in 0..<100 {
                        let from = Self.address("198.51.100.\(index % 250 + 1):\(10_000 + tick * 100 + index)")
                        _ = responder.handle(captured, from: from, atMicroseconds: start + UInt64(tick) * 100_000, accept: { _ in })
                    }
                }
            }
        }
        flood(from: 10, ticks: 20)
        // At most a burst and two seconds' steady rate of exchanges, 3 operations each (a key, ee, es).
        #expect(operations.performed <= 3 * (8 + 2 * 2), "\(operations.performed) public-key operations for the flood")

        guard case let .send(confirmation) = early.receive(PairingDatagram(earlyAnswer)!) else {
            Issue.record("no confirmation")
            return
        }
        let (paired, _) = responder.handle(PairingDatagram(confirmation)!, from: earlyAddress, atMicroseconds: 2_000_010, accept: { _ in })
        #expect(early.receive(PairingDatagram(try #require(paired))!) == .paired(hostKey, hostName: "pc"))

        responder.open(PairingCode(typed: "11111-22222-33333")!, atMicroseconds: 2_000_020)
        flood(from: 2_000_030, ticks: 5)
        var person = try PairingInitiator(code: PairingCode(typed: "11111-22222-33333")!, identity: .init(), clientName: "deck")
        let outcome = try Self.pair(&person, with: &responder, from: Self.address("192.0.2.20:6000"), at: 2_500_100)
        #expect(outcome == .paired(hostKey, hostName: "pc"))
    }

    /// One machine on the LAN sending first messages from 1,000 ports over a second, answering whatever the host
    /// asks of it before an exchange (it receives at its address) but never confirming: its public-key work stays
    /// within the host's budget (a burst of 8 and 2 a second, then its own 3 and 1 a second once it proved its
    /// address), its exchanges only replace its own, and a person's exchange begun before the flood completes.
    @Test func oneSourceFloodingFromManyPortsGetsItsShareAndEvictsNoOnesExchange() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        let hostKey = LinkPublicKey(bytes: host.publicKey.rawRepresentation)!
        var responder = PairingResponder(identity: host, hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var person = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
        let personAddress = Self.address("192.0.2.20:6000")
        let answer = try #require(
            responder.handle(PairingDatagram(try person.start())!, from: personAddress, atMicroseconds: 1, accept: { _ in }).reply)
        let operations = NoisePublicKeyOperations()
        var responses = 0
        for port in 0..<1_000 {
            let from = Self.address("198.51.100.9:\(20_000 + port)")
            let now = 10 + UInt64(port) * 1_000
            var attacker = try PairingInitiator(code: Self.code, identity: .init(), clientName: "x")
            var outgoing = try attacker.start()
            for _ in 0..<2 {
                let (reply, _) = NoisePublicKeyOperations.$current.withValue(operations) {
                    responder.handle(PairingDatagram(outgoing)!, from: from, atMicroseconds: now, accept: { _ in })
                }
                // Asked for a cookie: it has one now, and sends its first message again; a response ends its try.
                guard let reply, let datagram = PairingDatagram(reply) else { break }
                if case .response = datagram { responses += 1 }
                guard case let .send(again) = attacker.receive(datagram), !attacker.awaitingConfirmation else { break }
                outgoing = again
            }
        }
        // 3 operations an exchange (a key, ee, es): 7 from the host's burst and steady rate (the person had one),
        // 4 from the source's own share.
        #expect(responses >= 4 && responses <= 7 + 4 + 1, "\(responses) exchanges for the flooder")
        #expect(operations.performed == 3 * responses)
        guard case let .send(confirmation) = person.receive(PairingDatagram(answer)!) else {
            Issue.record("no confirmation")
            return
        }
        let (paired, _) = responder.handle(
            PairingDatagram(confirmation)!, from: personAddress, atMicroseconds: 1_000_100, accept: { _ in })
        #expect(person.receive(PairingDatagram(try #require(paired))!) == .paired(hostKey, hostName: "pc"))
    }

    /// `pair` keeps trying longer once a host answered: a cookie reply (a host under load asking the first message
    /// to prove its address) counts as an answer, as a response does; silence does not.
    @Test func aCookieReplyIsAnAnswerSilenceIsNot() throws {
        var responder = PairingResponder(identity: .init(), hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var flooder = try PairingInitiator(code: Self.code, identity: .init(), clientName: "x")
        let captured = PairingDatagram(try flooder.start())!
        for index in 0..<100 {  // beyond the host's burst: it is under load
            _ = responder.handle(captured, from: Self.address("198.51.100.\(index + 1):10000"), atMicroseconds: 10, accept: { _ in })
        }
        var person = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
        let first = try person.start()
        #expect(!person.heardFromAHost)
        let reply = try #require(
            responder.handle(PairingDatagram(first)!, from: Self.address("192.0.2.20:6000"), atMicroseconds: 20, accept: { _ in }).reply)
        let datagram = try #require(PairingDatagram(reply))
        guard case .cookieReply = datagram else {
            Issue.record("the host under load answered \(datagram), not a cookie reply")
            return
        }
        guard case .send = person.receive(datagram) else {
            Issue.record("the first message was not sent again with the cookie")
            return
        }
        #expect(person.heardFromAHost && !person.awaitingConfirmation)
    }

    /// A person who runs `pair` again from the same machine (a new port) while its earlier exchanges wait: the new
    /// one replaces its source's oldest, so the third try pairs at once.
    @Test func aPersonsNewTryReplacesItsOwnOldestExchange() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        var responder = PairingResponder(identity: host, hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        for port in 0..<2 {
            var abandoned = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
            let reply = responder.handle(
                PairingDatagram(try abandoned.start())!, from: Self.address("192.0.2.20:\(6000 + port)"),
                atMicroseconds: 1 + UInt64(port), accept: { _ in }).reply
            #expect(reply.flatMap { PairingDatagram($0) }.map { if case .response = $0 { true } else { false } } == true)
        }
        var person = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
        let outcome = try Self.pair(&person, with: &responder, from: Self.address("192.0.2.20:6002"), at: 10)
        #expect(outcome == .paired(LinkPublicKey(bytes: host.publicKey.rawRepresentation)!, hostName: "pc"))
    }
}
