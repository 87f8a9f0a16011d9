import PadCore

/// A virtual pad the host shows for one of a client's pads: forwarded while its slot is in the client's current pad
/// table and its source is plugged in; lingering (neutral, until `lingerEndsMicroseconds`) once the table no longer
/// has it or the link is lost, so that a game keeps its player slot.
final class HostedPad {
    let fingerprint: Fingerprint
    var description: LinkPadDescription
    /// Its slot in the client's current pad table; nil once the table no longer has it (it lingers).
    var slot: UInt8?
    let virtual: any HostedVirtualPad
    var receiver = InputRedundancyReceiver()
    var feedback = FeedbackStateSender()
    var attached = true
    /// While lingering: when the pad is destroyed unless its source comes back.
    var lingerEndsMicroseconds: UInt64?
    /// The last snapshot applied from the client (shown again when a lost client is heard again).
    var lastApplied: PadSnapshot?
    /// What was made for it, once the kernel made its nodes (for the control socket's status).
    var virtualKind: VirtualPadKind?
    var nodes: VirtualPadNodes?

    init(description: LinkPadDescription, virtual: any HostedVirtualPad) {
        fingerprint = description.fingerprint
        self.description = description
        slot = description.slot
        self.virtual = virtual
    }

    var isForwarded: Bool { slot != nil && attached }

    /// Shows the released state and lingers until `endsMicroseconds`.
    func linger(untilMicroseconds endsMicroseconds: UInt64) {
        virtual.goNeutral()
        lingerEndsMicroseconds = endsMicroseconds
    }
}

/// A client's forwarded pads by slot: a handful, in slot order, found by a linear search. Every frame looks its
/// pad up and every reply walks them; a dictionary hashed each slot and retained each pad it iterated.
struct PadSlots: Sequence {
    private var entries: [(slot: UInt8, pad: HostedPad)] = []

    subscript(slot: UInt8) -> HostedPad? {
        get {
            for entry in entries where entry.slot == slot { return entry.pad }
            return nil
        }
        set {
            if let index = entries.firstIndex(where: { $0.slot == slot }) {
                if let newValue { entries[index].pad = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.insert((slot, newValue), at: entries.firstIndex { $0.slot > slot } ?? entries.count)
            }
        }
    }

    mutating func removeAll() { entries.removeAll() }
    func makeIterator() -> IndexingIterator<[(slot: UInt8, pad: HostedPad)]> { entries.makeIterator() }
}

/// Why a pad of a client's table has no virtual pad: each cause's words for the host's status and logs, and its
/// shorter words for the person at the client (`LinkHostMessage.notForwarded`), made in this one place.
enum NotForwardedCause {
    /// The client had too many virtual pads made lately (`ChurnBudget`): the next in `waitSeconds`.
    case creationLimit(waitSeconds: UInt64)
    /// The host's `--max-pads` is reached and no pad lingers to make room.
    case padLimit(maximumPads: Int)
    /// The virtual pad could not be made.
    case cannotCreate(VirtualPadKind, VirtualPadCreationFailure)

    var hostText: String {
        switch self {
        case let .creationLimit(seconds):
            "too many new pads from this client lately; it gets a virtual pad in \(seconds) s"
        case let .padLimit(maximum):
            "--max-pads \(maximum) reached; it gets a virtual pad when one goes"
        case let .cannotCreate(kind, error):
            "cannot create a virtual \(kind.rawValue) pad: \(error)"
        }
    }

    var clientText: String {
        switch self {
        case .creationLimit:
            "too many new pads lately: the host makes this one in a few seconds"
        case let .padLimit(maximum):
            "the host's --max-pads \(maximum) is reached; it gets a virtual pad when one goes"
        case let .cannotCreate(kind, failure):
            failure.reasonForClient ?? "the host cannot make a virtual \(kind.rawValue) pad: \(failure)"
        }
    }

    /// Whether the host says so in an event (once per pad, until it gets a virtual pad): the limits are; a pad that
    /// could not be made is logged as an error instead.
    var isAnnounced: Bool {
        switch self {
        case .creationLimit, .padLimit: true
        case .cannotCreate: false
        }
    }
}

/// One client's pads on this host: every virtual pad made for it (forwarded or lingering), the current pad table's
/// forwarded pads by slot, and the table's pads that have none, with why.
struct HostedClientPads {
    /// Why a pad of the current table has no virtual pad, in both sets of words, and whether the host said so.
    struct NotForwarded {
        var hostText: String
        var clientText: String
        var said: Bool
    }

    /// Every virtual pad of the client, by its pad's ID.
    private(set) var byFingerprint: [Fingerprint: HostedPad] = [:]
    /// The current pad table's pads with a virtual pad, by slot.
    private(set) var slots = PadSlots()
    /// The current table's pads with no virtual pad (no room, refused, could not be made, unplugged), by slot:
    /// tried again when there may be room.
    var unforwarded: [UInt8: LinkPadDescription] = [:]
    /// The newest frame of each slot of the table this host does not forward, acknowledged as received.
    var unforwardedAcknowledgements: [UInt8: UInt32] = [:]
    /// Why, for the current table's pads only: a client that names ever-new pads grows nothing here.
    private(set) var notForwarded: [Fingerprint: NotForwarded] = [:]

    var count: Int { byFingerprint.count }
    var isEmpty: Bool { byFingerprint.isEmpty }
    var all: Dictionary<Fingerprint, HostedPad>.Values { byFingerprint.values }
    subscript(fingerprint: Fingerprint) -> HostedPad? { byFingerprint[fingerprint] }

    /// (Inlined: asked for every datagram, and a call of its own cost ~60 instructions a frame.)
    var hasPendingFeedback: Bool {
        @inline(__always) get { slots.contains { $0.pad.feedback.hasPending } }
    }

    /// A new pad table begins: no slot is taken yet, and only the reasons of `listed` pads are kept.
    mutating func beginTable(listing listed: Set<Fingerprint>) {
        slots.removeAll()
        unforwarded = [:]
        unforwardedAcknowledgements = [:]
        notForwarded = notForwarded.filter { listed.contains($0.key) }
    }

    /// `pad`, new or known, takes its slot of the current table.
    mutating func forward(_ pad: HostedPad, inSlot slot: UInt8) {
        byFingerprint[pad.fingerprint] = pad
        slots[slot] = pad
    }

    /// The pad with `fingerprint` got its virtual pad: its reason is forgotten (its next one is news).
    mutating func clearReason(of fingerprint: Fingerprint) {
        notForwarded[fingerprint] = nil
    }

    /// Keeps why the pad with `fingerprint` got no virtual pad; true when the host is to say so now (a cause it
    /// announces, not said yet for this pad).
    mutating func note(_ cause: NotForwardedCause, for fingerprint: Fingerprint) -> Bool {
        let saidBefore = notForwarded[fingerprint]?.said ?? false
        let sayNow = cause.isAnnounced && !saidBefore
        notForwarded[fingerprint] = NotForwarded(
            hostText: cause.hostText, clientText: cause.clientText, said: saidBefore || sayNow)
        return sayNow
    }

    /// What the host's status says of an unforwarded pad.
    func statusProblem(of description: LinkPadDescription) -> String {
        description.refusal ?? notForwarded[description.fingerprint]?.hostText ?? "not given a virtual pad yet"
    }

    /// What the client is told of an unforwarded pad; nil when nothing is known yet.
    func clientReason(of description: LinkPadDescription) -> String? {
        description.refusal ?? notForwarded[description.fingerprint]?.clientText
    }

    /// Forgets `pad` (destroyed), and its slot of the current table if it still holds one.
    mutating func remove(_ pad: HostedPad) {
        byFingerprint[pad.fingerprint] = nil
        if let slot = pad.slot, slots[slot] === pad { slots[slot] = nil }
    }

    /// Forgets every pad (the client removed or revoked) and returns them.
    mutating func removeAll() -> [HostedPad] {
        let pads = Array(byFingerprint.values)
        byFingerprint.removeAll()
        slots.removeAll()
        return pads
    }

    /// The lingering pad nearest its end, with when it ends.
    var lingeringPadEndingFirst: (pad: HostedPad, endsMicroseconds: UInt64)? {
        var chosen: (pad: HostedPad, endsMicroseconds: UInt64)?
        for pad in byFingerprint.values {
            guard let ends = pad.lingerEndsMicroseconds, chosen.map({ ends < $0.endsMicroseconds }) ?? true else { continue }
            chosen = (pad, ends)
        }
        return chosen
    }

    /// How many reasons are kept (for the tests of its bounds).
    var reasonsKept: Int { notForwarded.count }
}
