import Crypto
import PadCore
import PadNet
import PadNetLinux
import PadNoise
import PadTestSupport
import Testing

@Suite struct PairingTests {
    static let code = PairingCode(typed: "ZW0AM-N8J6H-B7H6N")!
    static func address(_ port: Int, host: String = "127.0.0.1") -> SocketAddress {
        try! SocketAddress.resolve("\(host):\(port)", defaultPort: 1)[0]
    }

    /// Runs one client's pairing against `responder`; the client's datagrams go through `deliver`, which may drop or
    /// repeat them. Returns the client's final outcome.
    static func pair(
        _ responder: inout PairingResponder, code: PairingCode = code, clientKey: Curve25519.KeyAgreement.PrivateKey,
        from port: Int = 5000, host: String = "127.0.0.1", at now: UInt64 = 1_000, accepted: inout [PairedClient],
        events: inout [PairingResponder.Event]
    ) throws -> PairingInitiator.Outcome {
        var client = try PairingInitiator(code: code, identity: clientKey, clientName: "deck")
        var outgoing = try client.start()
        for _ in 0..<4 {
            let (reply, event) = responder.handle(
                PairingDatagram(outgoing)!, from: address(port, host: host), atMicroseconds: now, accept: { accepted.append($0) })
            if let event { events.append(event) }
            guard let reply, let datagram = PairingDatagram(reply) else { return .ignored }
            switch client.receive(datagram) {
            case let .send(next): outgoing = next
            case let outcome: return outcome
            }
        }
        return .ignored
    }

    @Test func bothSidesStoreTheOthersKey() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        let clientKey = Curve25519.KeyAgreement.PrivateKey()
        var responder = PairingResponder(identity: host, hostName: "living room")
        responder.open(Self.code, atMicroseconds: 0)
        var accepted: [PairedClient] = []
        var events: [PairingResponder.Event] = []
        let outcome = try Self.pair(&responder, clientKey: clientKey, accepted: &accepted, events: &events)
        #expect(outcome == .paired(LinkPublicKey(bytes: host.publicKey.rawRepresentation)!, hostName: "living room"))
        #expect(accepted == [PairedClient(key: LinkPublicKey(bytes: clientKey.publicKey.rawRepresentation)!, name: "deck")])
        #expect(events == [.paired(accepted[0])])
        // one-time: another client is refused afterwards
        let other = try Self.pair(&responder, clientKey: .init(), from: 5001, accepted: &accepted, events: &events)
        #expect(other == .refused(.noWindow))
        #expect(accepted.count == 1)
    }

    /// Three wrong codes from one source close the window to it (the right code included); other sources go on.
    @Test func aWrongCodeIsRefusedAndThreeCloseTheWindow() throws {
        var responder = PairingResponder(identity: .init(), hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var accepted: [PairedClient] = []
        var events: [PairingResponder.Event] = []
        let wrong = PairingCode(typed: "00000-00000-00000")!
        for attempt in 1...3 {
            let outcome = try Self.pair(&responder, code: wrong, clientKey: .init(), accepted: &accepted, events: &events)
            #expect(outcome == .refused(attempt < 3 ? .wrongCode : .tooManyTries))
        }
        #expect(events == [.wrongCode(triesLeft: 2), .wrongCode(triesLeft: 1), .wrongCode(triesLeft: 0)])
        // even the right code is refused now
        let right = try Self.pair(&responder, clientKey: .init(), accepted: &accepted, events: &events)
        #expect(right == .refused(.tooManyTries))
        #expect(accepted.isEmpty)
        // from another source, the right code still pairs
        let elsewhere = try Self.pair(
            &responder, clientKey: .init(), from: 5000, host: "127.0.0.2", accepted: &accepted, events: &events)
        #expect(elsewhere.isPaired && accepted.count == 1)
    }

    @Test func theWindowExpiresAfterFiveMinutes() throws {
        var responder = PairingResponder(identity: .init(), hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var accepted: [PairedClient] = []
        var events: [PairingResponder.Event] = []
        let late = try Self.pair(
            &responder, clientKey: .init(), at: PairingWindow.lifetimeMicroseconds, accepted: &accepted, events: &events)
        #expect(late == .refused(.noWindow))
        #expect(!responder.isOpen(atMicroseconds: PairingWindow.lifetimeMicroseconds))
        #expect(accepted.isEmpty)
    }

    @Test func repeatedDatagramsGetTheSameAnswersAndCountNoWrongTry() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        var responder = PairingResponder(identity: host, hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var client = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
        let first = try client.start()
        let from = Self.address(6000)
        var stored: [PairedClient] = []
        let answer1 = responder.handle(PairingDatagram(first)!, from: from, atMicroseconds: 1, accept: { stored.append($0) })
        let answer2 = responder.handle(PairingDatagram(first)!, from: from, atMicroseconds: 2, accept: { stored.append($0) })
        #expect(answer1.reply != nil && answer1.reply == answer2.reply)
        guard case let .send(confirmation) = client.receive(PairingDatagram(try #require(answer1.reply))!) else {
            Issue.record("no confirmation")
            return
        }
        let paired1 = responder.handle(PairingDatagram(confirmation)!, from: from, atMicroseconds: 3, accept: { stored.append($0) })
        let paired2 = responder.handle(PairingDatagram(confirmation)!, from: from, atMicroseconds: 4, accept: { stored.append($0) })
        #expect(paired1.reply == paired2.reply)
        #expect(stored.count == 1)
        #expect(client.receive(PairingDatagram(try #require(paired2.reply))!)
            == .paired(LinkPublicKey(bytes: host.publicKey.rawRepresentation)!, hostName: "pc"))
    }

    /// After a pairing the window is used: only the paired client, from the address it paired from, may run its
    /// pairing again (its confirmation may have been lost), and only for `PairingWindow.repeatMicroseconds`. Anyone
    /// else's first message is refused at once, before any public-key work, and so is everyone's once that time is
    /// over (an answer would hand out the host's static key while its announcement says pairing=closed).
    @Test func aUsedWindowAnswersNoOneButThePairedClientForAWhile() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        let clientKey = Curve25519.KeyAgreement.PrivateKey()
        var responder = PairingResponder(identity: host, hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var accepted: [PairedClient] = []
        var events: [PairingResponder.Event] = []
        #expect(try Self.pair(&responder, clientKey: clientKey, at: 1_000, accepted: &accepted, events: &events).isPaired)

        func firstMessageReply(from address: SocketAddress, at now: UInt64) throws -> PairingDatagram? {
            var stranger = try PairingInitiator(code: Self.code, identity: .init(), clientName: "stranger")
            let (reply, _) = responder.handle(
                PairingDatagram(try stranger.start())!, from: address, atMicroseconds: now, accept: { accepted.append($0) })
            return reply.flatMap(PairingDatagram.init)
        }
        #expect(try firstMessageReply(from: Self.address(5100, host: "127.0.0.2"), at: 2_000) == .refused(.noWindow))
        let over = 1_000 + PairingWindow.repeatMicroseconds
        #expect(try firstMessageReply(from: Self.address(5100), at: over) == .refused(.noWindow))
        #expect(try firstMessageReply(from: Self.address(5100, host: "127.0.0.2"), at: over + 3_600_000_000) == .refused(.noWindow))
        // The paired client runs `pair` again (a new port) within the repeat time: paired again, stored once more.
        let again = try Self.pair(&responder, clientKey: clientKey, from: 5200, at: 3_000, accepted: &accepted, events: &events)
        #expect(again == .paired(LinkPublicKey(bytes: host.publicKey.rawRepresentation)!, hostName: "pc"))
        #expect(accepted.count == 2 && Set(accepted.map(\.key)).count == 1)
    }

    @Test func withoutAWindowEverythingIsRefusedAndForgedRepliesAreIgnored() throws {
        var responder = PairingResponder(identity: .init(), hostName: "pc")
        var client = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
        let (reply, _) = responder.handle(
            PairingDatagram(try client.start())!, from: Self.address(1), atMicroseconds: 0, accept: { _ in })
        #expect(reply == PairingDatagram.refused(.noWindow).encoded)
        #expect(client.receive(.paired([UInt8](repeating: 1, count: 32))) == .ignored)
        #expect(client.receive(.response([UInt8](repeating: 2, count: 120))) == .ignored)
    }

    @Test func datagramDecodingIsTotal() {
        var generator = SplitMix64(seed: 0xDA7A)
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if let datagram = PairingDatagram(bytes) { #expect(PairingDatagram(datagram.encoded) == datagram) }
        }
        #expect(PairingDatagram([0x54, 9]) == nil)
        #expect(PairingDatagram([]) == nil)
    }

    /// Finding 2 of the link review: a host answers only a client's datagrams. A refusal, a response or a
    /// confirmation sent to it (or spoofed from another host's port) gets nothing back: two hosts never bounce
    /// refusals forever.
    @Test func aHostNeverAnswersAnAnswer() throws {
        var closed = PairingResponder(identity: .init(), hostName: "pc")
        var open = PairingResponder(identity: .init(), hostName: "pc")
        open.open(Self.code, atMicroseconds: 0)
        for datagram: PairingDatagram in [
            .refused(.noWindow), .refused(.wrongCode), .response([UInt8](repeating: 7, count: 150)),
            .paired([UInt8](repeating: 7, count: 32)),
            .cookieReply(digest: [UInt8](repeating: 7, count: 16), cookie: [UInt8](repeating: 7, count: 32)),
        ] {
            #expect(closed.handle(datagram, from: Self.address(1), atMicroseconds: 1, accept: { _ in }).reply == nil)
            #expect(open.handle(datagram, from: Self.address(1), atMicroseconds: 1, accept: { _ in }).reply == nil)
        }
    }

    /// Finding 2: no reply is larger than the datagram it answers (a spoofed source cannot be flooded through a
    /// host): the client pads its first message to the size of the host's answer.
    @Test func noReplyIsLargerThanItsRequest() throws {
        var responder = PairingResponder(identity: .init(), hostName: String(repeating: "n", count: 200))
        responder.open(Self.code, atMicroseconds: 0)
        var client = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
        let first = try client.start()
        let answer = try #require(responder.handle(PairingDatagram(first)!, from: Self.address(2), atMicroseconds: 1, accept: { _ in }).reply)
        #expect(answer.count <= first.count)
        guard case let .send(confirmation) = client.receive(PairingDatagram(answer)!) else {
            Issue.record("no confirmation")
            return
        }
        let paired = try #require(responder.handle(PairingDatagram(confirmation)!, from: Self.address(2), atMicroseconds: 2, accept: { _ in }).reply)
        #expect(paired.count <= confirmation.count)
        // An unpadded first message (33 bytes: the ephemeral key) gets nothing; one byte gets no refusal either.
        var bare = try NoiseHandshake(
            pattern: .XXpsk3, role: .initiator, prologue: PairingHandshake.prologue, localStatic: .init(),
            presharedKey: PairingHandshake.presharedKey(Self.code))
        let short = PairingDatagram.initiation(try bare.writeMessage())
        #expect(responder.handle(short, from: Self.address(3), atMicroseconds: 3, accept: { _ in }).reply == nil)
        var closed = PairingResponder(identity: .init(), hostName: "pc")
        #expect(closed.handle(.initiation([]), from: Self.address(3), atMicroseconds: 3, accept: { _ in }).reply == nil)
        #expect(closed.handle(PairingDatagram(first)!, from: Self.address(3), atMicroseconds: 3, accept: { _ in }).reply
            == PairingDatagram.refused(.noWindow).encoded)
    }

    /// Finding 9: a host that cannot store the client's key says so, to its user and to the client.
    @Test func aPairingTheHostCannotStoreIsRefusedAndReported() throws {
        struct DiskFull: Error, CustomStringConvertible { var description: String { "cannot write paired-clients: disk full" } }
        var responder = PairingResponder(identity: .init(), hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var client = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
        let first = try client.start()
        let answer = try #require(responder.handle(PairingDatagram(first)!, from: Self.address(4), atMicroseconds: 1, accept: { _ in }).reply)
        guard case let .send(confirmation) = client.receive(PairingDatagram(answer)!) else {
            Issue.record("no confirmation")
            return
        }
        let (reply, event) = responder.handle(
            PairingDatagram(confirmation)!, from: Self.address(4), atMicroseconds: 2, accept: { _ in throw DiskFull() })
        #expect(reply == PairingDatagram.refused(.hostCannotStore).encoded)
        #expect(event == .notStored("cannot write paired-clients: disk full"))
        #expect(client.receive(PairingDatagram(try #require(reply))!) == .refused(.hostCannotStore))
    }

    /// Finding 10: a confirmation that does not even authenticate the sender's key (junk after a first message) is
    /// noise, not a wrong code: three such pairs do not close the window.
    @Test func junkConfirmationsCountNoWrongTry() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        var responder = PairingResponder(identity: host, hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        for attempt in 0..<3 {
            var attacker = try PairingInitiator(code: Self.code, identity: .init(), clientName: "x")
            _ = responder.handle(PairingDatagram(try attacker.start())!, from: Self.address(7000 + attempt), atMicroseconds: 1, accept: { _ in })
            let (reply, event) = responder.handle(
                .confirmation([UInt8](repeating: UInt8(attempt), count: 80)), from: Self.address(7000 + attempt),
                atMicroseconds: 2, accept: { _ in })
            #expect(reply == nil && event == nil)
        }
        var accepted: [PairedClient] = []
        var events: [PairingResponder.Event] = []
        let outcome = try Self.pair(&responder, clientKey: .init(), from: 7100, at: 3, accepted: &accepted, events: &events)
        #expect(outcome == .paired(LinkPublicKey(bytes: host.publicKey.rawRepresentation)!, hostName: "pc"))
    }

    /// Finding 10: first messages from many addresses (a flood while a window is open) do not evict a person's
    /// exchange in progress; wrong codes are counted per source, so one source cannot close the window for others.
    /// (A source is an IPv4 address: a new exchange replaces its own source's oldest, see
    /// `aPersonsNewTryReplacesItsOwnOldestExchange`, so the flood comes from other addresses than the person's.)
    @Test func otherSourcesCannotDisruptAPairingInProgress() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        var responder = PairingResponder(identity: host, hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var person = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
        let personAddress = Self.address(8000)
        let answer = try #require(responder.handle(PairingDatagram(try person.start())!, from: personAddress, atMicroseconds: 1, accept: { _ in }).reply)
        for index in 0..<500 {
            var flood = try PairingInitiator(code: Self.code, identity: .init(), clientName: "x")
            _ = responder.handle(PairingDatagram(try flood.start())!, from: Self.address(9000 + index, host: "127.0.1.\(index % 250 + 1)"), atMicroseconds: 2, accept: { _ in })
        }
        var accepted: [PairedClient] = []
        var events: [PairingResponder.Event] = []
        let wrong = PairingCode(typed: "00000-00000-00000")!
        for _ in 1...3 {
            _ = try Self.pair(
                &responder, code: wrong, clientKey: .init(), from: 8500, host: "127.0.0.3", at: 3, accepted: &accepted,
                events: &events)
        }
        guard case let .send(confirmation) = person.receive(PairingDatagram(answer)!) else {
            Issue.record("no confirmation")
            return
        }
        let (reply, _) = responder.handle(
            PairingDatagram(confirmation)!, from: personAddress, atMicroseconds: 4, accept: { accepted.append($0) })
        #expect(person.receive(PairingDatagram(try #require(reply))!)
            == .paired(LinkPublicKey(bytes: host.publicKey.rawRepresentation)!, hostName: "pc"))
        #expect(accepted.count == 1)
    }

    /// Finding 10: a response spoofed by someone who saw the first message (any key, any code) does not make the
    /// client ignore the host's own response.
    @Test func aSpoofedResponseDoesNotFailPairing() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        var responder = PairingResponder(identity: host, hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var client = try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck")
        let first = try client.start()
        var impostor = PairingResponder(identity: .init(), hostName: "evil")
        impostor.open(PairingCode(typed: "11111-11111-11111")!, atMicroseconds: 0)
        let spoofed = try #require(impostor.handle(PairingDatagram(first)!, from: Self.address(1), atMicroseconds: 1, accept: { _ in }).reply)
        _ = client.receive(PairingDatagram(spoofed)!)
        let answer = try #require(responder.handle(PairingDatagram(first)!, from: Self.address(2), atMicroseconds: 1, accept: { _ in }).reply)
        guard case let .send(confirmation) = client.receive(PairingDatagram(answer)!) else {
            Issue.record("the host's own response was ignored after a spoofed one")
            return
        }
        let (reply, event) = responder.handle(PairingDatagram(confirmation)!, from: Self.address(2), atMicroseconds: 2, accept: { _ in })
        #expect(event.map { if case .paired = $0 { true } else { false } } == true)
        #expect(client.receive(PairingDatagram(try #require(reply))!)
            == .paired(LinkPublicKey(bytes: host.publicKey.rawRepresentation)!, hostName: "pc"))
    }

    /// Finding 10: a refusal is not authenticated, so it ends pairing only if nothing contradicts it for a moment:
    /// a spoofed refusal followed by the host's response does not abort.
    @Test func aRefusalEndsPairingOnlyIfNothingContradictsIt() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        var responder = PairingResponder(identity: host, hostName: "pc")
        responder.open(Self.code, atMicroseconds: 0)
        var attempt = PairingAttempt(initiator: try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck"))
        let first = try attempt.start(atMicroseconds: 0)
        #expect(attempt.receive(.refused(.noWindow), atMicroseconds: 10) == nil)
        #expect(attempt.verdict(atMicroseconds: 20) == nil, "a refusal waits a moment")
        let answer = try #require(responder.handle(PairingDatagram(first)!, from: Self.address(3), atMicroseconds: 30, accept: { _ in }).reply)
        guard case let .send(confirmation)? = attempt.receive(PairingDatagram(answer)!, atMicroseconds: 40) else {
            Issue.record("no confirmation after the spoofed refusal")
            return
        }
        let reply = try #require(responder.handle(PairingDatagram(confirmation)!, from: Self.address(3), atMicroseconds: 50, accept: { _ in }).reply)
        #expect(attempt.receive(PairingDatagram(reply)!, atMicroseconds: 60)
            == .paired(LinkPublicKey(bytes: host.publicKey.rawRepresentation)!, hostName: "pc"))

        var refused = PairingAttempt(initiator: try PairingInitiator(code: Self.code, identity: .init(), clientName: "deck"))
        _ = try refused.start(atMicroseconds: 0)
        _ = refused.receive(.refused(.noWindow), atMicroseconds: 10)
        #expect(refused.verdict(atMicroseconds: 10 + PairingAttempt.refusalGraceMicroseconds) == .refused(.noWindow))
    }
}

extension PairingInitiator.Outcome {
    var isPaired: Bool { if case .paired = self { true } else { false } }
}
