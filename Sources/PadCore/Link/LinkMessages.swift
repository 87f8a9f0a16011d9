/// A pad as the client announces it to the host. Its texts come from another machine: decoding keeps them within
/// their limits and printable (an ID and a kind of letters and digits, a name without control characters), so they
/// reach status lines, logs and virtual pads' seeds as plain text.
public struct LinkPadDescription: Sendable, Hashable {
    /// The client's small number for the pad, stable for the session.
    public var slot: UInt8
    /// The physical pad's ID (its fingerprint).
    public var fingerprint: Fingerprint
    /// What it is ("dualSense", "xbox360", ...: `ControllerKind`'s raw value).
    public var kind: String
    /// The virtual pad the client asks for (nil: the host chooses by `kind`).
    public var requestedVirtualKind: VirtualPadKind?
    /// False while the pad is unplugged on the client: the host shows it neutral and keeps it.
    public var attached: Bool
    public var name: String

    /// The longest ID, kind and name (UTF-8 bytes) on the wire; longer ones are cut when sent.
    public static let idLimit = 16
    public static let kindLimit = 16
    public static let nameLimit = 48

    public init(
        slot: UInt8, fingerprint: Fingerprint, kind: String, requestedVirtualKind: VirtualPadKind?, attached: Bool,
        name: String
    ) {
        self.slot = slot
        self.fingerprint = fingerprint
        self.kind = kind
        self.requestedVirtualKind = requestedVirtualKind
        self.attached = attached
        self.name = name
    }

    static func isWord(_ text: String, limit: Int) -> Bool {
        !text.isEmpty && text.utf8.count <= limit
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    /// The name as printable text: control characters (C0, DEL, C1: terminal escapes among them) become spaces.
    static func printable(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? " " : scalar
        }))
    }

    func encode(into writer: inout LinkByteWriter) {
        writer.u8(slot)
        writer.text(fingerprint.rawValue, limit: Self.idLimit)
        writer.text(kind, limit: Self.kindLimit)
        writer.u8(requestedVirtualKind.map { $0 == .xbox360 ? 1 : 2 } ?? 0)
        writer.u8(attached ? 1 : 0)
        writer.text(name, limit: Self.nameLimit)
    }

    init(decoding reader: inout LinkByteReader) throws(LinkDecodingError) {
        slot = try reader.u8()
        let id = try reader.text(limit: Self.idLimit, field: "pad ID")
        guard Self.isWord(id, limit: Self.idLimit) else { throw .invalid(field: "pad ID") }
        fingerprint = Fingerprint(rawValue: id)
        kind = try reader.text(limit: Self.kindLimit, field: "pad kind")
        guard Self.isWord(kind, limit: Self.kindLimit) else { throw .invalid(field: "pad kind") }
        switch try reader.u8() {
        case 0: requestedVirtualKind = nil
        case 1: requestedVirtualKind = .xbox360
        case 2: requestedVirtualKind = .dualSense
        default: throw .invalid(field: "virtual kind")
        }
        switch try reader.u8() {
        case 0: attached = false
        case 1: attached = true
        default: throw .invalid(field: "attached")
        }
        name = Self.printable(try reader.text(limit: Self.nameLimit, field: "pad name"))
    }

    /// The most bytes one takes on the wire.
    static let maximumEncodedSize = 1 + (1 + idLimit) + (1 + kindLimit) + 1 + 1 + (1 + nameLimit)
}

/// What a client sends in one datagram (inside the encryption). Every field is optional or may be empty, so a
/// keepalive is just `ping`. Version 2:
///
/// ```
/// u8 version (2)
/// u8 flags: bit 0 pad table, bit 1 ping, bit 2 acknowledgement wanted (input frames not yet acknowledged)
/// [pad table] u32 version | u8 count (at most 12) | count x (u8 slot | text id | text kind | u8 virtual kind
///             (0 any, 1 xbox360, 2 dualsense) | u8 attached | text name)
/// [ping]      u64 sender's clock (µs)
/// u8 block count | count x (u8 slot | u32 base | u8 flags (bit 0: continues the block before) | u8 frame count |
///                          frame count x (u32 sequence | snapshot))
/// u8 feedback-ack count | count x (u8 slot | u32 version)
/// ```
/// A text is a length byte and that many bytes of UTF-8. A block holds one pad's frames oldest first
/// (`LinkInputBlock`); `packed` spreads what is to be sent over as many messages as it takes, each at most
/// `maximumEncodedSize` bytes.
public struct LinkClientMessage: Sendable, Hashable {
    public static let version: UInt8 = 2
    /// The most pads one client forwards (its pad table fits one datagram with room to spare).
    public static let maximumPads = 12
    /// The largest message: sealed in a transport datagram (13-byte header, 16-byte tag) it makes at most 1,200
    /// bytes, within IPv6's minimum MTU of 1,280 with the IP and UDP headers, so it is never fragmented.
    public static let maximumEncodedSize = 1_171

    public var padTable: (version: UInt32, pads: [LinkPadDescription])?
    public var pingMicroseconds: UInt64?
    /// The client holds presses, releases or touches the host has not acknowledged: the host answers at once.
    public var wantsAcknowledgement = false
    public var inputs: [LinkInputBlock] = []
    public var feedbackAcknowledgements: [(slot: UInt8, version: UInt32)] = []

    public init() {}

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.encoded == rhs.encoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }

    public var encoded: [UInt8] {
        var writer = LinkByteWriter()
        writer.u8(Self.version)
        writer.u8((padTable != nil ? 1 : 0) | (pingMicroseconds != nil ? 2 : 0) | (wantsAcknowledgement ? 4 : 0))
        if let padTable {
            writer.u32(padTable.version)
            let pads = padTable.pads.prefix(Self.maximumPads)
            writer.u8(UInt8(pads.count))
            for pad in pads { pad.encode(into: &writer) }
        }
        if let pingMicroseconds { writer.u64(pingMicroseconds) }
        writer.u8(UInt8(min(inputs.count, 255)))
        for block in inputs.prefix(255) {
            let frames = block.frames.prefix(255)
            writer.u8(block.slot)
            writer.u32(block.base)
            writer.u8(block.continues ? 1 : 0)
            writer.u8(UInt8(frames.count))
            for frame in frames {
                writer.u32(frame.sequence)
                LinkSnapshotCodec.encode(frame.snapshot, into: &writer)
            }
        }
        writer.u8(UInt8(min(feedbackAcknowledgements.count, 255)))
        for acknowledgement in feedbackAcknowledgements.prefix(255) {
            writer.u8(acknowledgement.slot)
            writer.u32(acknowledgement.version)
        }
        return writer.bytes
    }

    public init(decoding bytes: some Collection<UInt8>) throws(LinkDecodingError) {
        var reader = LinkByteReader(bytes)
        let version = try reader.u8()
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let flags = try reader.u8()
        guard flags & ~7 == 0 else { throw .invalid(field: "flags") }
        wantsAcknowledgement = flags & 4 != 0
        if flags & 1 != 0 {
            let tableVersion = try reader.u32()
            let count = try reader.u8()
            guard count <= Self.maximumPads else { throw .invalid(field: "pad count") }
            var pads: [LinkPadDescription] = []
            for _ in 0..<count { pads.append(try LinkPadDescription(decoding: &reader)) }
            padTable = (tableVersion, pads)
        }
        if flags & 2 != 0 { pingMicroseconds = try reader.u64() }
        for _ in 0..<(try reader.u8()) {
            let slot = try reader.u8()
            let base = try reader.u32()
            let blockFlags = try reader.u8()
            guard blockFlags & ~1 == 0 else { throw .invalid(field: "block flags") }
            var frames: [LinkFrame] = []
            for _ in 0..<(try reader.u8()) {
                let sequence = try reader.u32()
                frames.append(LinkFrame(sequence: sequence, snapshot: try LinkSnapshotCodec.decode(from: &reader)))
            }
            inputs.append(LinkInputBlock(slot: slot, base: base, continues: blockFlags & 1 != 0, frames: frames))
        }
        for _ in 0..<(try reader.u8()) {
            let slot = try reader.u8()
            feedbackAcknowledgements.append((slot, try reader.u32()))
        }
        guard reader.isAtEnd else { throw .invalid(field: "bytes after the message") }
    }

    /// Everything one send wants to say, in as many messages as it takes, each at most `maximumSize` bytes: the
    /// first carries the pad table, the ping, the feedback acknowledgements and as many frames as fit; a pad's
    /// frames that do not fit continue, oldest first, in a block of the next message whose base is the last frame
    /// sent before it. Every message asks for an acknowledgement when `wantsAcknowledgement`.
    public static func packed(
        padTable: (version: UInt32, pads: [LinkPadDescription])? = nil, pingMicroseconds: UInt64? = nil,
        wantsAcknowledgement: Bool = false, blocks: [LinkInputBlock],
        feedbackAcknowledgements: [(slot: UInt8, version: UInt32)] = [], maximumSize: Int = maximumEncodedSize
    ) -> [LinkClientMessage] {
        var first = LinkClientMessage()
        first.padTable = padTable.map { ($0.version, Array($0.pads.prefix(maximumPads))) }
        first.pingMicroseconds = pingMicroseconds
        first.wantsAcknowledgement = wantsAcknowledgement
        first.feedbackAcknowledgements = Array(feedbackAcknowledgements.prefix(255))
        var messages: [LinkClientMessage] = []
        var current = first
        var size = current.encoded.count
        let blockHeader = 7  // slot, base, flags, frame count
        for block in blocks where !block.frames.isEmpty {
            var base = block.base
            var continues = block.continues
            var rest = block.frames[...]
            while let next = rest.first {
                let frameSize = 4 + LinkSnapshotCodec.encodedSize(of: next.snapshot)
                if size + blockHeader + frameSize > maximumSize || current.inputs.count == 255 {
                    messages.append(current)
                    current = LinkClientMessage()
                    current.wantsAcknowledgement = wantsAcknowledgement
                    size = current.encoded.count
                }
                var taken: [LinkFrame] = []
                size += blockHeader
                while let frame = rest.first, taken.count < 255 {
                    let bytes = 4 + LinkSnapshotCodec.encodedSize(of: frame.snapshot)
                    guard size + bytes <= maximumSize || taken.isEmpty else { break }
                    taken.append(frame)
                    size += bytes
                    rest = rest.dropFirst()
                }
                current.inputs.append(LinkInputBlock(slot: block.slot, base: base, continues: continues, frames: taken))
                base = taken.last!.sequence
                continues = true
            }
        }
        messages.append(current)
        return messages
    }
}

/// What a host sends in one datagram (inside the encryption).
///
/// ```
/// u8 version (2)
/// u8 flags: bit 0 pad-table acknowledgement, bit 1 pong, bit 2 taken over (another `connect` with this client's
///           identity made a newer session: this one ends)
/// [pad-table ack] u32 version
/// [pong]          u64 the ping's clock, echoed | u32 datagrams received from this client so far | u32 sent to it
/// u8 input-ack count | count x (u8 slot | u32 applied sequence)
/// u8 feedback count | count x (u8 slot | u32 version | u8 parts | [rumble u16 strong u16 weak] [lightbar r g b]
///                              [u8 player LEDs] [u8 mic LED] [11-byte left trigger block] [11-byte right block])
/// ```
public struct LinkHostMessage: Sendable, Hashable {
    public static let version: UInt8 = 2

    public var padTableAcknowledgement: UInt32?
    /// The echo of a ping, with the host's counts of this session's datagrams (the client works out loss both ways).
    public var pong: (echoedMicroseconds: UInt64, receivedDatagrams: UInt32, sentDatagrams: UInt32)?
    public var inputAcknowledgements: [(slot: UInt8, applied: UInt32)] = []
    public var feedback: [(slot: UInt8, version: UInt32, state: Feedback)] = []
    /// The client's identity made a newer session from elsewhere (a second `connect` with the same key): this
    /// session is over, and its client should stop rather than take the link back.
    public var takenOver = false

    public init() {}

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.encoded == rhs.encoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }

    public var encoded: [UInt8] {
        var writer = LinkByteWriter()
        writer.u8(Self.version)
        writer.u8((padTableAcknowledgement != nil ? 1 : 0) | (pong != nil ? 2 : 0) | (takenOver ? 4 : 0))
        if let padTableAcknowledgement { writer.u32(padTableAcknowledgement) }
        if let pong {
            writer.u64(pong.echoedMicroseconds)
            writer.u32(pong.receivedDatagrams)
            writer.u32(pong.sentDatagrams)
        }
        writer.u8(UInt8(min(inputAcknowledgements.count, 255)))
        for acknowledgement in inputAcknowledgements.prefix(255) {
            writer.u8(acknowledgement.slot)
            writer.u32(acknowledgement.applied)
        }
        writer.u8(UInt8(min(feedback.count, 255)))
        for item in feedback.prefix(255) {
            writer.u8(item.slot)
            writer.u32(item.version)
            let state = item.state
            writer.u8(FeedbackParts(of: state).rawValue)
            if let rumble = state.rumble {
                writer.u16(Rumble.word(rumble.strong))
                writer.u16(Rumble.word(rumble.weak))
            }
            if let lightbar = state.lightbar {
                writer.u8(lightbar.red)
                writer.u8(lightbar.green)
                writer.u8(lightbar.blue)
            }
            if let playerLeds = state.playerLeds { writer.u8(playerLeds) }
            if let micLed = state.micLed { writer.u8(micLed ? 1 : 0) }
            for effect in [state.leftTrigger, state.rightTrigger].compactMap({ $0 }) { writer.bytes += effect.block.bytes }
        }
        return writer.bytes
    }

    public init(decoding bytes: some Collection<UInt8>) throws(LinkDecodingError) {
        var reader = LinkByteReader(bytes)
        let version = try reader.u8()
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let flags = try reader.u8()
        guard flags & ~7 == 0 else { throw .invalid(field: "flags") }
        takenOver = flags & 4 != 0
        if flags & 1 != 0 { padTableAcknowledgement = try reader.u32() }
        if flags & 2 != 0 {
            let echoed = try reader.u64()
            let received = try reader.u32()
            pong = (echoed, received, try reader.u32())
        }
        for _ in 0..<(try reader.u8()) {
            let slot = try reader.u8()
            inputAcknowledgements.append((slot, try reader.u32()))
        }
        for _ in 0..<(try reader.u8()) {
            let slot = try reader.u8()
            let version = try reader.u32()
            let parts = FeedbackParts(rawValue: try reader.u8())
            guard parts.isSubset(of: .all) else { throw .invalid(field: "feedback parts") }
            var state = Feedback()
            if parts.contains(.rumble) {
                let strong = Double(try reader.u16()) / 65535
                state.rumble = Rumble(strong: strong, weak: Double(try reader.u16()) / 65535)
            }
            if parts.contains(.lightbar) {
                let red = try reader.u8()
                let green = try reader.u8()
                state.lightbar = LightbarColor(red: red, green: green, blue: try reader.u8())
            }
            if parts.contains(.playerLeds) { state.playerLeds = try reader.u8() & 0x1F }
            if parts.contains(.micLed) { state.micLed = try reader.u8() != 0 }
            if parts.contains(.leftTrigger) {
                state.leftTrigger = TriggerEffect(block: TriggerEffectBlock(try reader.take(TriggerEffectBlock.count)))
            }
            if parts.contains(.rightTrigger) {
                state.rightTrigger = TriggerEffect(block: TriggerEffectBlock(try reader.take(TriggerEffectBlock.count)))
            }
            feedback.append((slot, version, state))
        }
        guard reader.isAtEnd else { throw .invalid(field: "bytes after the message") }
    }
}
