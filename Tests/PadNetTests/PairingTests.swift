import Crypto
import PadCore
import PadNet
import PadTestSupport
import Testing

@Suite struct PairingTests {
    static let code = PairingCode(typed: "ZW0AM-N8J6H-B7H6N")!
    static func address(_ port: Int) -> SocketAddress { try! SocketAddress.resolve("127.0.0.1:\(port)", defaultPort: 1)[0] }

    /// Runs one client's pairing against `responder`; the client's datagrams go through `deliver`, which may drop or
    /// repeat them. Returns the client's final outcome.
    static func pair(
        _ responder: inout PairingResponder, code: PairingCode = code, clientKey: Curve25519.KeyAgreement.PrivateKey,
        from port: Int = 5000, at now: UInt64 = 1_000, accepted: inout [PairedClient],
        events: inout [PairingResponder.Event]
    ) throws -> PairingInitiator.Outcome {
        var client = try PairingInitiator(code: code, identity: clientKey, clientName: "deck")
        var outgoing = try client.start()
        for _ in 0..<4 {
            let (reply, event) = responder.handle(
                PairingDatagram(outgoing)!, from: address(port), atMicroseconds: now, accept: { accepted.append($0) })
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
}

