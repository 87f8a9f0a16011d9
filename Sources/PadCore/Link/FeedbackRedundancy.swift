/// The host's side of feedback for one pad: the latest state of every part a game set, under a version that grows
/// with each change; sent (whole) until the client acknowledges that version. Pure.
public struct FeedbackStateSender: Sendable {
    public private(set) var state = Feedback()
    public private(set) var version: UInt32 = 0
    public private(set) var acknowledged: UInt32 = 0

    public init() {}

    public mutating func update(_ event: FeedbackEvent) {
        let before = state
        state.apply(event)
        if state != before { version &+= 1 }
    }

    public mutating func acknowledge(_ version: UInt32) {
        if LinkSequence.isNewer(version, than: acknowledged) && !LinkSequence.isNewer(version, than: self.version) {
            acknowledged = version
        }
    }

    /// A new session with the client (it reconnected, and starts from nothing): the whole state goes again.
    public mutating func restartSession() {
        if version == 0 { version = 1 }  // even an empty state is sent once, so the client hears a version
        acknowledged = 0
    }

    /// Whether the client has yet to acknowledge the version (checked on every datagram's path: inlinable, so that
    /// it reads two numbers instead of copying the sender and its state out of the pad that holds it).
    @inlinable public var hasPending: Bool { version != acknowledged }

    /// What to send now: the whole state, while the client has not acknowledged its version.
    public var pending: (version: UInt32, state: Feedback)? {
        version == acknowledged ? nil : (version, state)
    }
}

/// The client's side: applies a newer version's parts that changed since what it applied last (so a repeated or
/// late datagram changes nothing), and acknowledges the version. Pure.
public struct FeedbackStateReceiver: Sendable {
    public private(set) var applied = Feedback()
    public private(set) var version: UInt32 = 0

    public init() {}

    /// The parts to submit to the pad's drain (nil when nothing changed or the version is not newer).
    public mutating func receive(version: UInt32, state: Feedback) -> Feedback? {
        guard LinkSequence.isNewer(version, than: self.version) else { return nil }
        self.version = version
        var changes = Feedback()
        if let value = state.rumble, value != applied.rumble { changes.rumble = value }
        if let value = state.lightbar, value != applied.lightbar { changes.lightbar = value }
        if let value = state.playerLeds, value != applied.playerLeds { changes.playerLeds = value }
        if let value = state.micLed, value != applied.micLed { changes.micLed = value }
        if let value = state.leftTrigger, value != applied.leftTrigger { changes.leftTrigger = value }
        if let value = state.rightTrigger, value != applied.rightTrigger { changes.rightTrigger = value }
        applied.merge(state)
        return changes.isEmpty ? nil : changes
    }

    /// The link was lost: rumble is a lease that ends with it. Returns the feedback that stops it (nil when the
    /// pad was not rumbling); the next state from the host starts afresh.
    public mutating func linkLost() -> Feedback? {
        defer {
            applied = Feedback()
            version = 0
        }
        guard let rumble = applied.rumble, !rumble.isOff else { return nil }
        return Feedback(rumble: .off)
    }
}
