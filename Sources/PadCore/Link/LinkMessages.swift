/// A pad as the client announces it to the host. Its texts come from another machine: decoding keeps them within
/// their limits and printable (`LinkText`), so they reach status lines, logs and virtual pads' seeds as plain text.
/// A description whose texts break the rules (an ID or kind that is not 1 to 16 ASCII letters and digits, a kind
/// padbridge does not know, a name longer than 48 bytes) is still read, as long as its bytes are (texts of up to
/// 255 bytes): it comes out `refusal`, with why in words, so that the rest of the datagram is used and the host
/// tells the client instead of dropping every datagram that carries the table.
public struct LinkPadDescription: Sendable, Hashable {
    /// The client's small number for the pad, stable for the session.
    public var slot: UInt8
    /// The physical pad's ID (its fingerprint). Empty in a refused description (`refusal` quotes what came): no
    /// pad's ID is empty, so a refused description never stands for a pad the host has.
    public var fingerprint: Fingerprint
    /// What it is ("dualSense", "xbox360", ...: `ControllerKind`'s raw value; case counts).
    public var kind: String
    /// The virtual pad the client asks for (nil: the host chooses by `kind`).
    public var requestedVirtualKind: VirtualPadKind?
    /// False while the pad is unplugged on the client: the host shows it neutral and keeps it.
    public var attached: Bool
    public var name: String
    /// The pad's frames are numbered on from the client's earlier session with this host (the same `connect`, after a
    /// renewal or a lost link), not from 1: frames the host applied then are not applied again, even when their
    /// acknowledgement never reached the client (`InputRedundancyReceiver.continueNumbering`).
    public var continuesNumbering: Bool
    /// Why this description, as received, breaks the rules of its texts (nil: it keeps them), in words for the person
    /// at the client, within `LinkHostMessage.notForwardedReasonLimit`: the host gives such a pad no virtual pad and
    /// lists it, with these words, among the pads not forwarded. Not on the wire: decoding sets it.
    public var refusal: String?

    /// The longest ID, kind and name (UTF-8 bytes) on the wire; a writer cuts longer ones, a reader refuses them.
    public static let idLimit = 16
    public static let kindLimit = 16
    public static let nameLimit = 48

    public init(
        slot: UInt8, fingerprint: Fingerprint, kind: String, requestedVirtualKind: VirtualPadKind?, attached: Bool,
        name: String, continuesNumbering: Bool = false
    ) {
        self.continuesNumbering = continuesNumbering
        self.slot = slot
        self.fingerprint = fingerprint
        self.kind = kind
        self.requestedVirtualKind = requestedVirtualKind
        self.attached = attached
        self.name = name
    }

    /// Whether `bytes` are 1 to `limit` ASCII letters and digits.
    static func isWord(_ bytes: some Collection<UInt8>, limit: Int) -> Bool {
        !bytes.isEmpty && bytes.count <= limit
            && bytes.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    /// Why a pad with this ID and kind would be refused by a host (nil: it would not): the ID and the kind must be
    /// 1 to 16 ASCII letters and digits, and the kind one of `ControllerKind`'s raw values, case and all. A client
    /// checks its pads with it before it sends a table.
    public static func refusal(id: String, kind: String) -> String? {
        refusal(idBytes: Array(id.utf8), kindBytes: Array(kind.utf8))
    }

    static func refusal(idBytes: [UInt8], kindBytes: [UInt8]) -> String? {
        if !isWord(idBytes, limit: idLimit) {
            return "pad ID \"\(shown(idBytes))\" refused: 1-\(idLimit) ASCII letters or digits"
        }
        if !isWord(kindBytes, limit: kindLimit) {
            return "pad kind \"\(shown(kindBytes))\" refused: 1-\(kindLimit) ASCII letters or digits"
        }
        if ControllerKind(rawValue: String(decoding: kindBytes, as: UTF8.self)) == nil {
            return "pad kind \"\(shown(kindBytes))\" refused: unknown (case counts: dualSense, ...)"
        }
        return nil
    }

    /// A text from the wire as a refusal quotes it: printable, at most 16 bytes.
    static func shown(_ bytes: [UInt8]) -> String {
        LinkText.shortened(LinkText.printable(decoding: bytes), toBytes: idLimit)
    }

    func encode(into writer: inout LinkByteWriter) {
        writer.u8(slot)
        writer.text(fingerprint.rawValue, limit: Self.idLimit)
        writer.text(kind, limit: Self.kindLimit)
        writer.u8(requestedVirtualKind?.linkCode ?? 0)
        writer.u8((attached ? Self.attachedFlag : 0) | (continuesNumbering ? Self.continuesNumberingFlag : 0))
        writer.text(name, limit: Self.nameLimit)
    }

    init<Source>(decoding reader: inout LinkByteReader<Source>) throws(LinkDecodingError) {
        slot = try reader.u8()
        // Texts of any length a length byte allows are read, and judged after: a text that breaks its rule makes a
        // refused description, not a message that cannot be read.
        let id = Array(try reader.take(Int(try reader.u8())))
        let kindBytes = Array(try reader.take(Int(try reader.u8())))
        let code = try reader.u8()
        if code == 0 {
            requestedVirtualKind = nil
        } else if let kind = VirtualPadKind(linkCode: code) {
            requestedVirtualKind = kind
        } else {
            throw .invalid(field: "virtual kind")
        }
        let flags = try reader.u8()
        guard flags & ~(Self.attachedFlag | Self.continuesNumberingFlag) == 0 else { throw .invalid(field: "pad flags") }
        attached = flags & Self.attachedFlag != 0
        continuesNumbering = flags & Self.continuesNumberingFlag != 0
        let nameBytes = try reader.take(Int(try reader.u8()))
        refusal = Self.refusal(idBytes: id, kindBytes: kindBytes)
            ?? (nameBytes.count > Self.nameLimit
                ? "pad name of \(nameBytes.count) bytes refused: at most \(Self.nameLimit)" : nil)
        if refusal == nil {
            fingerprint = Fingerprint(rawValue: String(decoding: id, as: UTF8.self))
            kind = String(decoding: kindBytes, as: UTF8.self)
            name = LinkText.printable(decoding: nameBytes)
        } else {
            fingerprint = Fingerprint(rawValue: "")
            kind = Self.shown(kindBytes)
            name = LinkText.shortened(LinkText.printable(decoding: nameBytes), toBytes: Self.nameLimit)
        }
    }

    static let attachedFlag: UInt8 = 1
    static let continuesNumberingFlag: UInt8 = 2

    /// The most bytes one takes on the wire.
    static let maximumEncodedSize = 1 + (1 + idLimit) + (1 + kindLimit) + 1 + 1 + (1 + nameLimit)
}

/// A client's ping: its clock for the host to echo, and what it knows of the host's datagrams in this session, so
/// that the host learns its loss towards the client (`LinkHostMessage.pong` tells the client the other way).
public struct LinkPing: Sendable, Hashable {
    /// The client's monotonic clock, µs (only echoed: no meaning to the host).
    public var clockMicroseconds: UInt64
    /// The host's count of the datagrams it sent in this session, from the last pong the client received in it
    /// (0 before any).
    public var hostSent: UInt32
    /// How many of the host's datagrams of this session had arrived when that pong came, it included: of the first
    /// `hostSent` the host sent, `hostSent - receivedWhenHostCounted` were lost (or came late).
    public var receivedWhenHostCounted: UInt32
    /// The client's smoothed round trip, µs (at most `UInt32.max`), 0 while it has none: the host, which sends no
    /// pings of its own, shows it as the link's round trip.
    public var roundTripMicroseconds: UInt32

    public init(
        clockMicroseconds: UInt64, hostSent: UInt32 = 0, receivedWhenHostCounted: UInt32 = 0, roundTripMicroseconds: UInt32 = 0
    ) {
        self.clockMicroseconds = clockMicroseconds
        self.hostSent = hostSent
        self.receivedWhenHostCounted = receivedWhenHostCounted
        self.roundTripMicroseconds = roundTripMicroseconds
    }

    /// The percentage of the host's first `hostSent` datagrams that did not reach the client; nil before a pong.
    public var lossToClientPercent: Double? {
        guard hostSent > 0 else { return nil }
        return 100 * Double(hostSent - min(receivedWhenHostCounted, hostSent)) / Double(hostSent)
    }

    static let encodedSize = 20
}

/// What a client sends in one datagram (inside the encryption). Every field is optional or may be empty, so a
/// keepalive is just `ping`. Version 3:
///
/// ```
/// u8 version (4)
/// u8 flags: bit 0 pad table, bit 1 ping, bit 2 acknowledgement wanted (input frames not yet acknowledged)
/// [pad table] u32 version | u8 count (at most 12) | count x (u8 slot | text id | text kind | u8 virtual kind
///             (0 any, else `VirtualPadKind.linkCode`: 1 xbox360, 2 dualsense, 3 dualsense-edge, 4 dualshock4,
///             5 xbox-one, 6 switch-pro) | u8 flags (bit 0 attached, bit 1 numbering continues from the
///             client's earlier session) | text name)
/// [ping]      u64 sender's clock (µs) | u32 the host's sent count from its last pong this session (0 before any) |
///             u32 the host's datagrams received this session when that pong came | u32 the client's smoothed round
///             trip, µs, 0 while none (`LinkPing`)
/// u8 feedback-ack count | count x (u8 slot | u32 version)
/// u8 block count | count x (u8 slot | u32 base | u8 flags (bit 0: continues the block before) | u8 frame count |
///                          frame count x (u32 sequence | snapshot))
/// ```
/// A text is a length byte and that many bytes of UTF-8. A block holds one pad's frames oldest first
/// (`LinkInputBlock`), last so that a send's frames can be written as they come (`LinkClientMessageEncoder`, which
/// spreads a backlog over as many messages as it takes, each at most `maximumEncodedSize` bytes).
public struct LinkClientMessage: Sendable, Hashable {
    public static let version: UInt8 = 5
    static let hasPadTable: UInt8 = 1
    static let hasPing: UInt8 = 2
    static let acknowledgementWanted: UInt8 = 4
    static let allFlags: UInt8 = 7
    static let blockContinues: UInt8 = 1
    /// The most pads one client forwards (its pad table fits one datagram with room to spare).
    public static let maximumPads = 12
    /// The largest message: sealed in a transport datagram (13-byte header, 16-byte tag) it makes at most 1,200
    /// bytes, within IPv6's minimum MTU of 1,280 with the IP and UDP headers, so it is never fragmented.
    public static let maximumEncodedSize = 1_171

    public var padTable: (version: UInt32, pads: [LinkPadDescription])?
    public var ping: LinkPing?
    /// The client holds presses, releases or touches the host has not acknowledged: the host answers soon.
    public var wantsAcknowledgement = false
    public var inputs: [LinkInputBlock] = []
    public var feedbackAcknowledgements: [(slot: UInt8, version: UInt32)] = []

    public init() {}

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.encoded == rhs.encoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }

    /// The message as one datagram's plaintext, however long (blocks of more than 255 frames, or more than 255
    /// blocks, are cut).
    public var encoded: [UInt8] {
        var encoder = LinkClientMessageEncoder(maximumSize: .max)
        encoder.begin(
            padTable: padTable, ping: ping, wantsAcknowledgement: wantsAcknowledgement,
            feedbackAcknowledgements: feedbackAcknowledgements)
        var bytes: [UInt8] = []
        for block in inputs.prefix(255) {
            encoder.append(
                slot: block.slot, base: block.base, continues: block.continues, frames: block.frames.prefix(255),
                emit: { bytes = $0 })
        }
        encoder.end { bytes = $0 }
        return bytes
    }

    public init(decoding bytes: some Collection<UInt8>) throws(LinkDecodingError) {
        let array = Array(bytes)
        let view = try LinkClientMessageView(array)
        wantsAcknowledgement = view.wantsAcknowledgement
        ping = view.ping
        padTable = view.padTable
        var acknowledgements: [(slot: UInt8, version: UInt32)] = []
        view.forEachFeedbackAcknowledgement { acknowledgements.append(($0, $1)) }
        feedbackAcknowledgements = acknowledgements
        var blocks: [LinkInputBlock] = []
        view.forEachBlock { slot, base, continues, frames in
            blocks.append(LinkInputBlock(slot: slot, base: base, continues: continues, frames: Array(frames)))
        }
        inputs = blocks
    }

    /// Everything one send wants to say, in as many messages as it takes, each at most `maximumSize` bytes (what
    /// `LinkClientMessageEncoder` writes, as values).
    public static func packed(
        padTable: (version: UInt32, pads: [LinkPadDescription])? = nil, ping: LinkPing? = nil,
        wantsAcknowledgement: Bool = false, blocks: [LinkInputBlock],
        feedbackAcknowledgements: [(slot: UInt8, version: UInt32)] = [], maximumSize: Int = maximumEncodedSize
    ) -> [LinkClientMessage] {
        var encoder = LinkClientMessageEncoder(maximumSize: maximumSize)
        var messages: [LinkClientMessage] = []
        let keep: ([UInt8]) -> Void = { bytes in
            if let message = try? LinkClientMessage(decoding: bytes) { messages.append(message) }
        }
        encoder.begin(
            padTable: padTable, ping: ping, wantsAcknowledgement: wantsAcknowledgement,
            feedbackAcknowledgements: feedbackAcknowledgements)
        for block in blocks {
            encoder.append(slot: block.slot, base: block.base, continues: block.continues, frames: block.frames, emit: keep)
        }
        encoder.end(emit: keep)
        return messages
    }
}

/// What a host sends in one datagram (inside the encryption).
///
/// ```
/// u8 version (4)
/// u8 flags: bit 0 pad-table acknowledgement, bit 1 pong, bit 2 taken over (another `connect` with this client's
///           identity made a newer session: this one ends), bit 3 revoked (the host no longer accepts this client:
///           this session ends, and so would any new one)
/// [pad-table ack] u32 version
/// [pong]          u64 the ping's clock, echoed | u32 datagrams received from this client so far | u32 sent to it
/// u8 input-ack count | count x (u8 slot | u32 applied sequence)
/// u8 feedback count | count x (u8 slot | u32 version | u8 parts | [rumble u16 strong u16 weak u16 left trigger u16 right trigger] [lightbar r g b]
///                              [u8 player LEDs] [u8 mic LED] [11-byte left trigger block] [11-byte right block])
/// u8 not-forwarded count (at most 12) | count x (u8 slot | text why the host gives it no virtual pad (at most 80))
/// ```
public struct LinkHostMessage: Sendable, Hashable {
    public static let version: UInt8 = 5

    public var padTableAcknowledgement: UInt32?
    /// The echo of a ping, with the host's counts of this session's datagrams (the client works out loss both ways).
    public var pong: (echoedMicroseconds: UInt64, receivedDatagrams: UInt32, sentDatagrams: UInt32)?
    public var inputAcknowledgements: [(slot: UInt8, applied: UInt32)] = []
    public var feedback: [(slot: UInt8, version: UInt32, state: Feedback)] = []
    /// The client's identity made a newer session from elsewhere (a second `connect` with the same key): this
    /// session is over, and its client should stop rather than take the link back.
    public var takenOver = false
    /// The host no longer accepts the client (its pairing was revoked): this session is over, and the host refuses
    /// any new one.
    public var revoked = false
    /// The pads of the client's table the host gives no virtual pad, with why, in words for the person at the client
    /// (no room, no access to /dev/uinput there, ...). Every message carries them while it lasts.
    public var notForwarded: [(slot: UInt8, reason: String)] = []

    /// The longest reason on the wire (UTF-8 bytes; a longer one is cut), and the most pads listed: with every pad of
    /// a full table listed, a message stays well within a datagram.
    public static let notForwardedReasonLimit = 80
    public static let maximumNotForwarded = LinkClientMessage.maximumPads
    static let hasPadTableAcknowledgement: UInt8 = 1
    static let hasPong: UInt8 = 2
    static let takenOverFlag: UInt8 = 4
    static let revokedFlag: UInt8 = 8
    static let allFlags: UInt8 = 15

    public init() {}

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.encoded == rhs.encoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }

    public var encoded: [UInt8] {
        var encoder = LinkHostMessageEncoder()
        return encoder.encode(
            padTableAcknowledgement: padTableAcknowledgement, pong: pong, takenOver: takenOver, revoked: revoked,
            inputAcknowledgements: inputAcknowledgements.prefix(255), feedback: feedback.prefix(255),
            notForwarded: notForwarded.prefix(Self.maximumNotForwarded))
    }

    public init(decoding bytes: some Collection<UInt8>) throws(LinkDecodingError) {
        let array = Array(bytes)
        let view = try LinkHostMessageView(array)
        padTableAcknowledgement = view.padTableAcknowledgement
        pong = view.pong
        takenOver = view.takenOver
        revoked = view.revoked
        var unforwarded: [(slot: UInt8, reason: String)] = []
        view.forEachNotForwarded { unforwarded.append(($0, $1)) }
        notForwarded = unforwarded
        var acknowledgements: [(slot: UInt8, applied: UInt32)] = []
        view.forEachInputAcknowledgement { acknowledgements.append(($0, $1)) }
        inputAcknowledgements = acknowledgements
        var items: [(slot: UInt8, version: UInt32, state: Feedback)] = []
        view.forEachFeedback { items.append(($0, $1, $2)) }
        feedback = items
    }
}

extension VirtualPadKind {
    /// The kind's code in a pad description (protocol section 8.1; 0 there is "any"). Codes are never reused.
    public var linkCode: UInt8 {
        switch self {
        case .xbox360: 1
        case .dualSense: 2
        case .dualSenseEdge: 3
        case .dualShock4: 4
        case .xboxOne: 5
        case .switchPro: 6
        case .steamDeck: 7
        }
    }

    /// The kind with `linkCode`, nil for 0 and for codes this version does not know.
    public init?(linkCode: UInt8) {
        guard let kind = Self.allCases.first(where: { $0.linkCode == linkCode }) else { return nil }
        self = kind
    }
}
