import Crypto
import PadCore
import PadNet
import PadNetLinux
import Testing

/// docs/protocol.md 8.1 and 8.3: a pad whose texts break the rules is refused in words the client prints, not by
/// dropping every datagram that carries its table (the link went silent, and the client reconnected for ever); and
/// the client tells a pad's reason when it changes, keeping one per pad.
@Suite struct RefusedPadTests {

    /// A hand-made client (another implementation) in a session with the simulated host.
    struct HandMadeClient {
        let simulation: LinkSimulation
        let path = DatagramPath(remote: try! SocketAddress.resolve("192.0.2.1:40000", defaultPort: 0)[0])
        var session: LinkSessionKeys

        init(_ simulation: LinkSimulation) throws {
            self.simulation = simulation
            var handshake = try LinkClientHandshake(
                identity: simulation.clientKey,
                hostKey: LinkPublicKey(bytes: simulation.hostKey.publicKey.rawRepresentation)!,
                wallClockMicroseconds: 1_700_000_000_000_000)
            let path = self.path
            handshake.initiation.withUnsafeBytes { simulation.host.receive($0, along: path) }
            let answer = try #require(simulation.datagrams(from: .host).last.flatMap { LinkDatagram($0) })
            let completed = handshake.complete(with: answer)
            session = try #require(completed)
        }

        /// Sends `message` and returns what the host answered it with (nil: no answer).
        mutating func send(_ message: LinkClientMessage) throws -> LinkHostMessage? {
            let before = simulation.datagrams(from: .host).count
            try session.seal(message.encoded).withUnsafeBytes { simulation.host.receive($0, along: path) }
            let answers = simulation.datagrams(from: .host).dropFirst(before)
            guard let answer = answers.last, case let .transport(_, counter, ciphertext)? = LinkDatagram(answer),
                let plaintext = session.open(counter: counter, ciphertext: ciphertext)
            else { return nil }
            return try LinkHostMessage(decoding: plaintext)
        }
    }

    static func pad(_ slot: UInt8, id: String, kind: String = "xbox360", name: String = "pad") -> LinkPadDescription {
        LinkPadDescription(
            slot: slot, fingerprint: Fingerprint(rawValue: id), kind: kind, requestedVirtualKind: nil, attached: true,
            name: name)
    }

    /// The issue's case: a MAC with colons as a pad's ID, beside a good pad. Before, the host dropped the whole
    /// datagram (no answer at all); now the table is acknowledged, the good pad forwarded and its frame applied, and
    /// the other listed with why.
    @Test(arguments: [
        ("aa:bb:cc", "xbox360", #"pad ID "aa:bb:cc" refused: 1-16 ASCII letters or digits"#),
        ("", "xbox360", #"pad ID "" refused: 1-16 ASCII letters or digits"#),
        ("pad_1", "xbox360", #"pad ID "pad_1" refused: 1-16 ASCII letters or digits"#),
        ("ccccccccccc1", "DUALSENSE", #"pad kind "DUALSENSE" refused: unknown (case counts: dualSense, ...)"#),
        ("ccccccccccc2", "x-box", #"pad kind "x-box" refused: 1-16 ASCII letters or digits"#),
    ])
    func aPadWhoseTextsBreakTheRulesIsRefusedInWordsAndTheRestIsUsed(id: String, kind: String, reason: String) throws {
        let simulation = try LinkSimulation()
        var client = try HandMadeClient(simulation)
        var message = LinkClientMessage()
        message.padTable = (1, [Self.pad(0, id: id, kind: kind), Self.pad(1, id: "bbbbbbbbbbbb")])
        message.ping = LinkPing(clockMicroseconds: 7)
        message.inputs = [
            LinkInputBlock(slot: 0, base: 0, frames: [LinkFrame(sequence: 1, snapshot: .holding(.b))]),
            LinkInputBlock(slot: 1, base: 0, frames: [LinkFrame(sequence: 1, snapshot: .holding(.a))]),
        ]
        let answer = try #require(try client.send(message), "the host answered nothing: it dropped the datagram")
        #expect(answer.padTableAcknowledgement == 1)
        #expect(answer.pong?.echoedMicroseconds == 7)
        #expect(answer.notForwarded.map(\.slot) == [0])
        #expect(answer.notForwarded.first?.reason == reason)
        #expect(reason.utf8.count <= LinkHostMessage.notForwardedReasonLimit)
        #expect(simulation.virtualPads.count == 1, "only the good pad has a virtual pad")
        #expect(simulation.virtualPads.first?.shown == .holding(.a))
        #expect(answer.inputAcknowledgements.contains { $0.slot == 0 && $0.applied == 1 }, "acknowledged as received")
        #expect(simulation.hostEvents.contains { $0.kind == .padNotForwarded && "\($0)".contains("refused") })
        // The host's status says it too.
        let status = simulation.host.clientStatuses().flatMap(\.pads).first { $0.slot == 0 }
        #expect(status?.problem == reason)
    }

    /// A name longer than 48 bytes (a writer cuts; this one did not) is refused the same way.
    @Test func aNameLongerThanFortyEightBytesIsRefusedInWords() throws {
        let simulation = try LinkSimulation()
        var client = try HandMadeClient(simulation)
        let name = Array(String(repeating: "n", count: 60).utf8)
        // version 5, pad table, table version 1, 1 pad: slot 0, id, kind, any virtual kind, attached, the long name;
        // no feedback acknowledgements, no blocks.
        var bytes: [UInt8] = [5, 1, 1, 0, 0, 0, 1, 0, 12] + Array("cccccccccccc".utf8) + [7] + Array("xbox360".utf8)
        bytes += [0, 1, UInt8(name.count)] + name + [0, 0]
        let message = try LinkClientMessage(decoding: bytes)
        #expect(message.padTable?.pads.first?.refusal == "pad name of 60 bytes refused: at most 48")
        let before = simulation.datagrams(from: .host).count
        try client.session.seal(bytes).withUnsafeBytes { simulation.host.receive($0, along: client.path) }
        let answer = try #require(simulation.datagrams(from: .host).dropFirst(before).last)
        guard case let .transport(_, counter, ciphertext)? = LinkDatagram(answer),
            let plaintext = client.session.open(counter: counter, ciphertext: ciphertext)
        else { Issue.record("the host's answer does not open"); return }
        let reply = try LinkHostMessage(decoding: plaintext)
        #expect(reply.notForwarded.map(\.reason) == ["pad name of 60 bytes refused: at most 48"])
        #expect(simulation.virtualPads.isEmpty)
    }

    /// padbridge's client never sends such a table: a pad whose ID breaks the rule is not forwarded, and it says why.
    @Test func padbridgesClientRefusesToForwardAPadWhoseIDBreaksTheRule() throws {
        let simulation = try LinkSimulation()
        do {
            try simulation.connect([.simulated("aa:bb:cc:dd:ee:ff")])
            Issue.record("a client was made to forward a pad whose ID the host would refuse")
        } catch let error as ForwardingClient.SetupError {
            #expect(error.description == #"cannot forward simulated pad: pad ID "aa:bb:cc:dd:e…" refused: 1-16 ASCII letters or digits"#)
        }
        #expect(simulation.datagrams(from: nil).isEmpty)
    }

    /// Issue 42 item 4, the client's side: a pad's reason is told when it changes (not again while it stays, however
    /// many messages carry it), and the client keeps one reason per pad, however many reasons the host gave.
    @Test func theClientTellsAReasonWhenItChangesAndKeepsOnePerPad() throws {
        struct Refusal: Error, CustomStringConvertible {
            let number: Int
            var description: String { "no uinput \(number)" }
        }
        let simulation = try LinkSimulation()
        simulation.virtualPadError = VirtualPadCreationFailure(Refusal(number: 1))
        try simulation.connect([.simulated("aaaaaaaaaaaa")])
        simulation.run(forMilliseconds: 1_000)  // ten keepalives and their answers, each listing the pad
        func told() -> [String] {
            simulation.clientEvents.compactMap { event in
                if case let .padNotForwarded(_, reason) = event { reason } else { nil }
            }
        }
        #expect(told().count == 1)
        #expect(told().first?.contains("no uinput 1") == true)
        // Another reason each time the pad comes back: each is told once.
        let source = try #require(simulation.sources[Fingerprint(rawValue: "aaaaaaaaaaaa")])
        for number in 2...30 {
            simulation.virtualPadError = VirtualPadCreationFailure(Refusal(number: number))
            source.unplug()
            simulation.run(forMilliseconds: 50)
            source.replug()
            simulation.run(forMilliseconds: 1_000)  // within the host's budget of tables
        }
        let reasons = told()
        // At most once per time the pad is plugged in (the host lists only pads plugged in, so a pad back with the
        // same reason, the host's creation limit among them, is news again), never again while it stays listed.
        // (Two a plugging at most: the pad's own reason, then the host's creation limit once its burst is spent.)
        #expect(reasons.count <= 2 * 30, "\(reasons.count) reasons told for 30 pluggings: \(reasons)")
        for number in 1...30 {
            #expect(reasons.filter { $0.hasSuffix("no uinput \(number)") }.count <= 1, "\(reasons)")
        }
        #expect(reasons.filter { $0.contains("no uinput") }.count >= 10, "\(reasons.count) reasons told: \(reasons)")
        // Given a virtual pad, the pad leaves the host's list, and nothing more is told.
        simulation.virtualPadError = nil
        source.unplug()
        simulation.run(forMilliseconds: 50)
        source.replug()
        simulation.run(forMilliseconds: 3_000)
        #expect(simulation.virtualPads.count == 1)
        let countWhileForwarded = told().count
        simulation.run(forMilliseconds: 500)
        #expect(told().count == countWhileForwarded)
    }
}
