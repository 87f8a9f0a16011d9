public import PadNet
public import PadCore
public import PadLinux

/// How long `padbridge pair` tries, and how often it says a datagram again. Pure.
public struct PairingRetryPolicy: Sendable, Hashable {
    /// How long pairing waits for any answer.
    public var answerTimeoutMilliseconds: UInt64 = 10_000
    /// How long pairing keeps trying in all once a host answered but pairing did not complete (a host under a flood
    /// reads few of the datagrams that reach it: each step may take many tries).
    public var answeredTimeoutMilliseconds: UInt64 = 30_000
    /// How often what is unanswered is sent again.
    public var resendMilliseconds: UInt64 = 300

    public init() {}

    public init(answerTimeoutMilliseconds: UInt64, answeredTimeoutMilliseconds: UInt64, resendMilliseconds: UInt64) {
        self.answerTimeoutMilliseconds = answerTimeoutMilliseconds
        self.answeredTimeoutMilliseconds = max(answeredTimeoutMilliseconds, answerTimeoutMilliseconds)
        self.resendMilliseconds = resendMilliseconds
    }

    /// What to do when the answer timeout passes without a verdict.
    public enum Decision: Sendable, Hashable {
        /// Nobody answered: give up.
        case giveUp
        /// A host answered: keep trying this much longer (up to `answeredTimeoutMilliseconds` in all).
        case keepTrying(forMilliseconds: UInt64)
    }

    public func atAnswerTimeout(heardFromAHost: Bool) -> Decision {
        heardFromAHost ? .keepTrying(forMilliseconds: answeredTimeoutMilliseconds - answerTimeoutMilliseconds) : .giveUp
    }
}

/// One `padbridge pair` on the loop: sends the attempt's datagrams to the host, takes its answers (from the host's
/// address only), repeats what is unanswered, waits out an unauthenticated refusal, and gives up by the policy.
/// Loop-confined; `run` runs the loop until the attempt ends (or something else stops the loop: a signal).
public final class PairingClient {
    /// How an attempt ended.
    public enum Outcome: Sendable, Hashable {
        case paired(LinkPublicKey, hostName: String)
        case refused(PairingRefusal)
        /// A host answered, but pairing did not complete within the policy's `answeredTimeoutMilliseconds`.
        case answeredButNotDone
        /// No host answered within the policy's `answerTimeoutMilliseconds`.
        case noAnswer
    }

    /// What happens on the way, to be said.
    public enum Event: Sendable, Hashable {
        /// A host answered, but the answer timeout passed before pairing was done: trying on, up to the policy's
        /// `answeredTimeoutMilliseconds` in all.
        case answeredButNotDoneYet
    }

    public let policy: PairingRetryPolicy
    private var attempt: PairingAttempt
    private let socket: UDPSocket
    private let target: SocketAddress
    private let loop: DeviceEventLoop
    private let onEvent: (Event) -> Void
    private var result: Outcome?

    /// Pairs with the host at `target`, from a socket of its own (any local address of `target`'s family, any port).
    public init(
        attempt: PairingAttempt, target: SocketAddress, loop: DeviceEventLoop,
        policy: PairingRetryPolicy = PairingRetryPolicy(), onEvent: @escaping (Event) -> Void = { _ in }
    ) throws(LinkSocketError) {
        self.attempt = attempt
        self.target = target
        self.socket = try UDPSocket(bindingTo: try SocketAddress.anyLocal(toReach: target), loop: loop)
        self.loop = loop
        self.policy = policy
        self.onEvent = onEvent
    }

    /// Runs the loop until the attempt ends; the loop stopped by anything else (a signal) ends it as it stands then.
    /// Once: the socket is closed when it returns.
    public func run() throws -> Outcome {
        defer { socket.close() }
        // A refusal is not authenticated: it ends pairing once nothing contradicted it for a moment.
        let verdict = loop.makeTimer { [unowned self] in self.finish(self.attempt.verdict(atMicroseconds: Self.now)) }
        defer { verdict.close() }
        socket.onDatagram = { [unowned self] bytes, from in
            guard from.remote == self.target, let datagram = PairingDatagram(bytes) else { return }
            self.finish(self.attempt.receive(datagram, atMicroseconds: Self.now))
            if let due = self.attempt.verdictDueMicroseconds { verdict.schedule(at: MonotonicInstant(microseconds: due)) }
        }
        defer { socket.onDatagram = nil }
        socket.send(try attempt.start(atMicroseconds: Self.now), to: target)
        let resend = loop.repeating(everyMilliseconds: policy.resendMilliseconds) { [unowned self] in
            for datagram in self.attempt.datagramsToRepeat { self.socket.send(datagram, to: self.target) }
        }
        defer { resend.cancel() }
        var keptTrying: LoopDeadline?
        let giveUp = loop.deadline(afterMilliseconds: policy.answerTimeoutMilliseconds) { [unowned self] in
            switch self.policy.atAnswerTimeout(heardFromAHost: self.attempt.heardFromAHost) {
            case .giveUp:
                self.loop.stop()
            case let .keepTrying(milliseconds):
                self.onEvent(.answeredButNotDoneYet)
                keptTrying = self.loop.deadline(afterMilliseconds: milliseconds) { [unowned self] in self.loop.stop() }
            }
        }
        defer {
            giveUp.cancel()
            keptTrying?.cancel()
        }
        try loop.run()
        if let result { return result }
        if case let .refused(reason)? = attempt.verdict(atMicroseconds: .max) { return .refused(reason) }
        return attempt.heardFromAHost ? .answeredButNotDone : .noAnswer
    }

    private static var now: UInt64 { MonotonicInstant.now().microseconds }

    private func finish(_ outcome: PairingInitiator.Outcome?) {
        switch outcome {
        case let .send(next)?:
            socket.send(next, to: target)
        case let .paired(key, hostName)?:
            result = .paired(key, hostName: hostName)
            loop.stop()
        case let .refused(reason)?:
            result = .refused(reason)
            loop.stop()
        case .ignored?, nil:
            break
        }
    }
}

extension SocketAddress {
    /// Every local address of `target`'s family, any port: where a client's socket binds to reach `target`.
    public static func anyLocal(toReach target: SocketAddress) throws(LinkSocketError) -> SocketAddress {
        try resolve(target.isIPv6 ? "[::]:0" : "0.0.0.0:0", defaultPort: 0, passive: true)[0]
    }
}
