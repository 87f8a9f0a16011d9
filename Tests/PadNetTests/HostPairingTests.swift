import Crypto
import PadCore
import PadNet
import PadNetLinux
import Testing

/// `serve`'s pairing dispatch (`HostPairing`) without a socket: what each datagram makes the host send and say.
@Suite struct HostPairingTests {
    static let code = PairingCode(typed: "ZW0AM-N8J6H-B7H6N")!
    static func address(_ port: Int, host: String = "127.0.0.1") -> SocketAddress {
        try! SocketAddress.resolve("\(host):\(port)", defaultPort: 1)[0]
    }

    /// One client's whole pairing through `pairing`, from `from`; returns every `Handled` in order.
    static func pair(
        _ pairing: inout HostPairing, code: PairingCode = code, from: SocketAddress, at now: UInt64 = 1_000,
        accept: (PairedClient) throws -> Void
    ) throws -> [HostPairing.Handled] {
        var client = try PairingInitiator(code: code, identity: .init(), clientName: "deck")
        var outgoing = try client.start()
        var handled: [HostPairing.Handled] = []
        for _ in 0..<4 {
            let step = pairing.handle(PairingDatagram(outgoing)!, from: from, atMicroseconds: now, accept: accept)
            handled.append(step)
            guard let reply = step.reply, let datagram = PairingDatagram(reply), case let .send(next) = client.receive(datagram)
            else { break }
            outgoing = next
        }
        return handled
    }

    @Test func aPairingIsStoredSaidAndChangesTheWindow() throws {
        var pairing = HostPairing(responder: PairingResponder(identity: .init(), hostName: "pc"))
        pairing.open(Self.code, atMicroseconds: 0)
        #expect(pairing.isOpen(atMicroseconds: 1) && pairing.status(atMicroseconds: 1).open)
        var stored: [PairedClient] = []
        let from = Self.address(5000)
        let steps = try Self.pair(&pairing, from: from) { stored.append($0) }
        #expect(stored.map(\.name) == ["deck"])
        #expect(steps.last?.event == .paired(stored[0], from: from))
        #expect(steps.last?.windowChanged == true)
        #expect(steps.dropLast().allSatisfy { $0.event == nil && !$0.windowChanged && $0.reply != nil })
        #expect(!pairing.isOpen(atMicroseconds: 2_000), "one pairing per window")
        #expect(pairing.status(atMicroseconds: 2_000) == PairingWindowStatus(open: false))
    }

    @Test func aClientThatCannotBeStoredIsSaidWithWhy() throws {
        struct DiskFull: Error, CustomStringConvertible { var description: String { "disk full" } }
        var pairing = HostPairing(responder: PairingResponder(identity: .init(), hostName: "pc"))
        pairing.open(Self.code, atMicroseconds: 0)
        let from = Self.address(5000)
        let steps = try Self.pair(&pairing, from: from) { _ in throw DiskFull() }
        guard case let .notStored(where_, problem)? = steps.last?.event else {
            Issue.record("expected notStored, got \(String(describing: steps.last?.event))")
            return
        }
        #expect(where_ == from && problem.contains("disk full"))
    }

    @Test func wrongCodesCountDownThenCloseTheWindowToTheAddressThenToEveryone() throws {
        var pairing = HostPairing(responder: PairingResponder(identity: .init(), hostName: "pc"))
        pairing.open(Self.code, atMicroseconds: 0)
        let wrong = PairingCode(typed: "00000-00000-00000")!
        var said: [HostPairing.Event] = []
        let first = Self.address(5000)
        for _ in 0..<3 {
            said += try Self.pair(&pairing, code: wrong, from: first) { _ in }.compactMap(\.event)
        }
        #expect(said == [
            .wrongCode(from: first, triesLeft: 2, closedToEveryone: false),
            .wrongCode(from: first, triesLeft: 1, closedToEveryone: false),
            .wrongCode(from: first, triesLeft: 0, closedToEveryone: false),
        ])
        // Nine more from three other addresses: the twelfth closes it to everyone.
        said = []
        for host in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
            for _ in 0..<3 { said += try Self.pair(&pairing, code: wrong, from: Self.address(5000, host: host)) { _ in }.compactMap(\.event) }
        }
        #expect(said.last == .wrongCode(from: Self.address(5000, host: "127.0.0.4"), triesLeft: 0, closedToEveryone: true))
        #expect(!pairing.isOpen(atMicroseconds: 1_000))
    }

    @Test func unansweredDatagramsAreCountedAtMostOnceASecond() {
        var pairing = HostPairing(responder: PairingResponder(identity: .init(), hostName: "pc"))
        let answer = PairingDatagram.refused(.noWindow)  // answers are never answered
        let from = Self.address(5000)
        var said: [HostPairing.Event?] = []
        for now: UInt64 in [10, 20, 30, 1_000_020, 1_000_030] {
            let step = pairing.handle(answer, from: from, atMicroseconds: now) { _ in }
            #expect(step.reply == nil && !step.windowChanged)
            said.append(step.event)
        }
        #expect(said == [.unanswered(count: 1), nil, nil, .unanswered(count: 3), nil])
    }
}
