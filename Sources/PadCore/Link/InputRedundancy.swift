/// One frame of a pad as the link carries it: its sequence number (one per frame, from 1) and its snapshot.
public struct LinkFrame: Sendable, Hashable {
    public var sequence: UInt32
    public var snapshot: PadSnapshot

    public init(sequence: UInt32, snapshot: PadSnapshot) {
        self.sequence = sequence
        self.snapshot = snapshot
    }
}

extension PadSnapshot {
    /// The parts whose every change matters (a press, a release, a touch down or up): buttons, the d-pad and touch
    /// contacts. Sticks, triggers and motion are "latest wins".
    public func hasSameDiscreteState(as other: PadSnapshot) -> Bool {
        buttons == other.buttons && touches[0].active == other.touches[0].active
            && touches[1].active == other.touches[1].active && touches[0].trackingID == other.touches[0].trackingID
            && touches[1].trackingID == other.touches[1].trackingID && touches[0].surface == other.touches[0].surface
            && touches[1].surface == other.touches[1].surface
    }
}

/// Frames of one pad as a datagram carries them, oldest first: every frame after `base` that the receiver must apply
/// to miss no press, release or touch is in this block, up to its last frame (or in the block before it, when one
/// pad's frames take more than one datagram: the next block's base is this one's last sequence). The receiver
/// applies a block only when it has applied everything up to `base`, so a lost or late block never makes it skip a
/// press for good; and a new session starts where the first block says, whatever number the client has reached.
public struct LinkInputBlock: Sendable, Hashable {
    public var slot: UInt8
    public var base: UInt32
    /// The block continues another (its base is that block's last frame, not what the host acknowledged): at the
    /// start of a session, when the receiver does not know where the client stands, it waits for the block before.
    public var continues: Bool
    public var frames: [LinkFrame]

    public init(slot: UInt8, base: UInt32, continues: Bool = false, frames: [LinkFrame]) {
        self.slot = slot
        self.base = base
        self.continues = continues
        self.frames = frames
    }
}

/// The client's side of redundant input for one pad: every frame gets the next sequence number; each datagram
/// carries the newest frame plus every earlier frame the host has not acknowledged in which a button, the d-pad or a
/// touch changed. A lost datagram's press or release therefore rides along in the next one, and nothing waits for a
/// retransmission of stale analog values (what reliable, in-order delivery would do). Pure; loop-confined.
public struct InputRedundancySender: Sendable {
    /// At most this many unacknowledged discrete frames are kept (about 4 s of a person pressing buttons as fast as
    /// they can). Beyond it the oldest are dropped and counted: the pad still ends in the right state, only an
    /// intermediate edge could be missed, and only after seconds without a single acknowledgement.
    public static let capacity = 64

    /// The newest frame's number and snapshot, kept apart (`newest` puts them together): the per-frame path asks for
    /// the number alone, and reading an optional frame out of the class that holds this sender copied its snapshot.
    public private(set) var newestSequence: UInt32?
    private var newestSnapshot = PadSnapshot.neutral
    public var newest: LinkFrame? { newestSequence.map { LinkFrame(sequence: $0, snapshot: newestSnapshot) } }
    /// The frames since the last acknowledgement whose discrete state differs from the frame before them.
    public private(set) var unacknowledged: [LinkFrame] = []
    /// The last sequence number the host said it applied.
    public private(set) var acknowledged: UInt32 = 0
    /// Discrete frames dropped because `capacity` was exceeded.
    public private(set) var overflowed = 0

    /// A sender whose first frame is `sequence + 1` (a client numbers from 1; tests start elsewhere).
    public init(startingAfter sequence: UInt32 = 0) {
        acknowledged = sequence
        unacknowledged.reserveCapacity(Self.capacity + 1)  // never grown on the per-frame path
    }

    /// Records a frame just read; returns its sequence number.
    @discardableResult
    public mutating func record(_ snapshot: PadSnapshot) -> UInt32 {
        let sequence = (newestSequence ?? acknowledged) &+ 1
        if !snapshot.hasSameDiscreteState(as: newestSnapshot) {
            unacknowledged.append(LinkFrame(sequence: sequence, snapshot: snapshot))
            if unacknowledged.count > Self.capacity {
                unacknowledged.removeFirst()
                overflowed += 1
            }
        }
        newestSequence = sequence
        newestSnapshot = snapshot
        return sequence
    }

    /// The host applied everything up to `sequence`.
    public mutating func acknowledge(_ sequence: UInt32) {
        guard LinkSequence.isNewer(sequence, than: acknowledged) else { return }
        acknowledged = sequence
        unacknowledged.removeAll { !LinkSequence.isNewer($0.sequence, than: sequence) }
    }

    /// What to send now: the unacknowledged discrete frames, then the newest frame (once, even when it is one of
    /// them). Empty before the first frame.
    public var framesToSend: [LinkFrame] { Array(framesToSendInPlace) }

    /// The same frames, read where they are kept (nothing copied: for the per-frame path).
    ///
    /// This and `hasUnacknowledged` are inlinable: the sender lives in a class (the client's pad), and a call that
    /// cannot be inlined gets a copy of the whole sender, its newest snapshot memcpy'd, on every frame.
    @inlinable @inline(__always) public var framesToSendInPlace: FramesToSend { FramesToSend(unacknowledged: unacknowledged, newest: newest) }

    /// The unacknowledged discrete frames, then the newest when it is not the last of them.
    public struct FramesToSend: Sequence, Sendable {
        @usableFromInline let unacknowledged: [LinkFrame]
        @usableFromInline let newest: LinkFrame?
        /// How many frames: none before the first; the newest counts once, even when it is the last of them.
        public let count: Int

        @inlinable init(unacknowledged: [LinkFrame], newest: LinkFrame?) {
            self.unacknowledged = unacknowledged
            self.newest = newest
            if let sequence = newest?.sequence {
                count = unacknowledged.count + (unacknowledged.last?.sequence == sequence ? 0 : 1)
            } else {
                count = 0
            }
        }

        /// Hands each frame out once, copied only as it is returned (the per-frame path: a snapshot is ~100 bytes, and
        /// the iterator used to copy the newest frame at every step).
        public struct Iterator: IteratorProtocol {
            @usableFromInline let frames: FramesToSend
            @usableFromInline var index = 0
            @inlinable init(frames: FramesToSend) { self.frames = frames }
            @inlinable public mutating func next() -> LinkFrame? {
                guard index < frames.count else { return nil }
                defer { index += 1 }
                return index < frames.unacknowledged.count ? frames.unacknowledged[index] : frames.newest
            }
        }

        @inlinable public __consuming func makeIterator() -> Iterator { Iterator(frames: self) }
    }

    /// What to send now, as one block (the packer splits it when it does not fit one datagram).
    public func block(slot: UInt8) -> LinkInputBlock {
        LinkInputBlock(slot: slot, base: acknowledged, frames: framesToSend)
    }

    /// Whether the host has not yet acknowledged a press, release or touch (so the frames must be sent again even
    /// when nothing new happens), or the newest frame.
    @inlinable @inline(__always) public var hasUnacknowledged: Bool {
        guard let sequence = newestSequence else { return false }
        return LinkSequence.isNewer(sequence, than: acknowledged)
    }
}

/// The host's side of redundant input for one pad: of each block, applies in order exactly the frames newer than the
/// last it applied, and only when nothing before the block is missing (its base is not beyond what was applied). So
/// nothing is applied twice or out of order, no press is skipped, and a late datagram (all of it older) changes
/// nothing: the pad never rolls back. Each session starts where its first block says. Pure.
public struct InputRedundancyReceiver: Sendable {
    /// The last sequence number applied; nil at the start of a session, until a block says where it starts.
    public private(set) var applied: UInt32?

    public init() {}

    /// The snapshots to show, oldest first (empty when the block brought nothing newer, or must wait for the block
    /// before it).
    public mutating func receive(_ block: LinkInputBlock) -> [PadSnapshot] {
        var result: [PadSnapshot] = []
        receive(base: block.base, continues: block.continues, frames: block.frames) { result.append($0) }
        return result
    }

    /// The same, frame by frame: `show` gets each snapshot to show, oldest first (nothing collected: for the
    /// per-frame path).
    public mutating func receive(
        base: UInt32, continues: Bool, frames: some Sequence<LinkFrame>, show: (PadSnapshot) -> Void
    ) {
        if let applied {
            if LinkSequence.isNewer(base, than: applied) { return }
        } else if continues {
            return
        }
        for frame in frames where applied.map({ LinkSequence.isNewer(frame.sequence, than: $0) }) ?? true {
            applied = frame.sequence
            show(frame.snapshot)
        }
    }

    /// The last sequence number applied in the sessions before this one (kept by `restart`).
    private var appliedInEarlierSession: UInt32?

    /// A new session of the same pad: the client may number from anywhere (a new `connect` starts at 1), unless it
    /// says it numbers on (`continueNumbering`).
    public mutating func restart() {
        appliedInEarlierSession = applied ?? appliedInEarlierSession
        applied = nil
    }

    /// The client numbers this session's frames on from its earlier session's (the same `connect`): what was applied
    /// then stands, so frames applied but never acknowledged (the acknowledgement lost, the link given up) are not
    /// applied again when the new session carries them. Only before the session's first frame.
    public mutating func continueNumbering() {
        guard applied == nil else { return }
        applied = appliedInEarlierSession
    }
}

/// Serial-number arithmetic on 32-bit sequence numbers (RFC 1982): `a` is newer than `b` when it is less than 2^31
/// ahead. At 1,000 frames a second a pad wraps after 49 days; the comparison keeps working across the wrap.
public enum LinkSequence {
    @inlinable public static func isNewer(_ a: UInt32, than b: UInt32) -> Bool {
        a != b && (a &- b) < 0x8000_0000
    }
}

/// A sliding window over the 64-bit counters of one session's received datagrams (RFC 6479, as WireGuard keeps
/// it): a counter is accepted once, and only if it is not too far behind the highest seen. `check` before the
/// (costly) authentication, `accept` after it succeeded. Pure.
public struct ReplayWindow: Sendable {
    /// How far behind the highest counter a datagram may arrive and still count (reordering tolerated).
    public static let size: UInt64 = 2048
    private static let wordCount = Int(size / 64)

    public private(set) var highest: UInt64 = 0
    private var received = false
    private var bitmap = [UInt64](repeating: 0, count: wordCount)

    public init() {}

    /// Whether `counter` would be accepted (new, and within the window).
    public func check(_ counter: UInt64) -> Bool {
        guard received else { return true }
        if counter > highest { return true }
        if highest - counter >= Self.size { return false }
        return bitmap[Self.word(counter)] & Self.bit(counter) == 0
    }

    /// Marks `counter` received; false (and nothing changes) when `check` would have refused it.
    @discardableResult
    public mutating func accept(_ counter: UInt64) -> Bool {
        guard check(counter) else { return false }
        if !received {
            received = true
            highest = counter
        } else if counter > highest {
            let advance = counter - highest
            if advance >= Self.size {
                for index in bitmap.indices { bitmap[index] = 0 }
            } else {
                // Clear the bits of the counters the window moves over (highest+1 ... counter).
                var cleared = highest &+ 1
                while cleared <= counter {
                    bitmap[Self.word(cleared)] &= ~Self.bit(cleared)
                    cleared &+= 1
                }
            }
            highest = counter
        }
        bitmap[Self.word(counter)] |= Self.bit(counter)
        return true
    }

    private static func word(_ counter: UInt64) -> Int { Int((counter / 64) % UInt64(wordCount)) }
    private static func bit(_ counter: UInt64) -> UInt64 { 1 << (counter % 64) }
}
