import Crypto
import PadCore
import PadLinux
import PadLinuxTestSupport
import PadNet
import PadNetLinux
import Testing

/// `padbridge pair`'s retry policy and its run on the loop, against a host on 127.0.0.1 (a `PairingResponder` on a
/// socket of the same loop), without the CLI.
@Suite struct PairingClientTests {
    static let code = PairingCode(typed: "ZW0AM-N8J6H-B7H6N")!
    static let quick = PairingRetryPolicy(answerTimeoutMilliseconds: 150, answeredTimeoutMilliseconds: 400, resendMilliseconds: 20)

    @Test func theTimeoutsDecideByWhetherAHostAnswered() {
        let policy = PairingRetryPolicy()
        #expect(policy.answerTimeoutMilliseconds == 10_000 && policy.answeredTimeoutMilliseconds == 30_000)
        #expect(policy.resendMilliseconds == 300)
        #expect(policy.atAnswerTimeout(heardFromAHost: false) == .giveUp)
        #expect(policy.atAnswerTimeout(heardFromAHost: true) == .keepTrying(forMilliseconds: 20_000))
        let short = PairingRetryPolicy(answerTimeoutMilliseconds: 500, answeredTimeoutMilliseconds: 100, resendMilliseconds: 10)
        #expect(short.atAnswerTimeout(heardFromAHost: true) == .keepTrying(forMilliseconds: 0), "never less than the first wait")
    }

    /// A host on 127.0.0.1 whose datagrams pass through `answer` (nil: dropped).
    final class Host {
        let socket: UDPSocket
        let key = Curve25519.KeyAgreement.PrivateKey()
        var responder: PairingResponder
        var accepted: [PairedClient] = []
        var datagramsHeard = 0

        init(loop: DeviceEventLoop, windowOpen: Bool, answers: @escaping (PairingDatagram) -> Bool = { _ in true }) throws {
            socket = try UDPSocket(bindingTo: try SocketAddress.resolve("127.0.0.1:0", defaultPort: 0, passive: true)[0], loop: loop)
            responder = PairingResponder(identity: key, hostName: "pc")
            if windowOpen { responder.open(PairingClientTests.code, atMicroseconds: MonotonicInstant.now().microseconds) }
            socket.onDatagram = { [unowned self] bytes, path in
                self.datagramsHeard += 1
                guard let datagram = PairingDatagram(bytes), answers(datagram) else { return }
                let (reply, _) = self.responder.handle(
                    datagram, from: path.remote, atMicroseconds: MonotonicInstant.now().microseconds,
                    accept: { self.accepted.append($0) })
                if let reply { self.socket.send(reply, along: path) }
            }
        }

        var publicKey: LinkPublicKey { LinkPublicKey(bytes: key.publicKey.rawRepresentation)! }
    }

    static func attempt() throws -> PairingAttempt {
        PairingAttempt(initiator: try PairingInitiator(code: code, identity: .init(), clientName: "deck"))
    }

    @Test func pairsWithAHostThatAnswers() throws {
        let loop = try DeviceEventLoop()
        let host = try Host(loop: loop, windowOpen: true)
        defer { host.socket.close() }
        let watchdog = try LoopWatchdog(loop, seconds: 10)
        let client = try PairingClient(attempt: try Self.attempt(), target: host.socket.localAddress, loop: loop, policy: Self.quick)
        #expect(try client.run() == .paired(host.publicKey, hostName: "pc"))
        #expect(!watchdog.fired)
        #expect(host.accepted.map(\.name) == ["deck"])
    }

    @Test func givesUpWhenNoHostAnswersAndRepeatsItsFirstMessageMeanwhile() throws {
        let loop = try DeviceEventLoop()
        let silent = try Host(loop: loop, windowOpen: true, answers: { _ in false })
        defer { silent.socket.close() }
        let watchdog = try LoopWatchdog(loop, seconds: 10)
        var events: [PairingClient.Event] = []
        let client = try PairingClient(
            attempt: try Self.attempt(), target: silent.socket.localAddress, loop: loop, policy: Self.quick
        ) { events.append($0) }
        #expect(try client.run() == .noAnswer)
        #expect(!watchdog.fired)
        #expect(events.isEmpty)
        #expect(silent.datagramsHeard >= 2, "the first message is sent again while unanswered")
    }

    @Test func keepsTryingOnceAHostAnsweredThenSaysItDidNotComplete() throws {
        let loop = try DeviceEventLoop()
        // Answers first messages, never a confirmation: heard from, never done.
        let busy = try Host(loop: loop, windowOpen: true, answers: { if case .initiation = $0 { true } else { false } })
        defer { busy.socket.close() }
        let watchdog = try LoopWatchdog(loop, seconds: 10)
        var events: [PairingClient.Event] = []
        let started = MonotonicInstant.now()
        let client = try PairingClient(
            attempt: try Self.attempt(), target: busy.socket.localAddress, loop: loop, policy: Self.quick
        ) { events.append($0) }
        #expect(try client.run() == .answeredButNotDone)
        let elapsedMilliseconds = (MonotonicInstant.now().nanoseconds - started.nanoseconds) / 1_000_000
        #expect(!watchdog.fired)
        #expect(events == [.answeredButNotDoneYet])
        #expect(elapsedMilliseconds >= Self.quick.answeredTimeoutMilliseconds)
        #expect(busy.accepted.isEmpty)
    }

    @Test func aRefusalEndsItOnceNothingContradictedIt() throws {
        let loop = try DeviceEventLoop()
        let closed = try Host(loop: loop, windowOpen: false)
        defer { closed.socket.close() }
        let watchdog = try LoopWatchdog(loop, seconds: 10)
        let policy = PairingRetryPolicy(answerTimeoutMilliseconds: 5_000, answeredTimeoutMilliseconds: 5_000, resendMilliseconds: 50)
        let client = try PairingClient(attempt: try Self.attempt(), target: closed.socket.localAddress, loop: loop, policy: policy)
        #expect(try client.run() == .refused(.noWindow))
        #expect(!watchdog.fired)
    }

    @Test func datagramsFromAnotherAddressAreNotTaken() throws {
        let loop = try DeviceEventLoop()
        let host = try Host(loop: loop, windowOpen: false)
        defer { host.socket.close() }
        // The client pairs with a silent address; the refusing host's datagrams come from elsewhere.
        let silent = try Host(loop: loop, windowOpen: true, answers: { _ in false })
        defer { silent.socket.close() }
        silent.socket.onDatagram = { bytes, path in
            guard PairingDatagram(bytes) != nil else { return }
            host.socket.send(PairingDatagram.refused(.noWindow).encoded, to: path.remote)
        }
        let watchdog = try LoopWatchdog(loop, seconds: 10)
        let client = try PairingClient(attempt: try Self.attempt(), target: silent.socket.localAddress, loop: loop, policy: Self.quick)
        #expect(try client.run() == .noAnswer)
        #expect(!watchdog.fired)
    }
}
