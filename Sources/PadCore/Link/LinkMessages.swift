/// A pad as the client announces it to the host.
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
}

/// What a client sends in one datagram (inside the encryption). Every field is optional or may be empty, so a
/// keepalive is just `ping`.
///
/// ```
/// u8 version (1)
/// u8 flags: bit 0 pad table, bit 1 ping, bit 2 acknowledgement wanted (input frames not yet acknowledged)
/// [pad table] u32 version | u8 count | count x (u8 slot | text id | text kind | u8 virtual kind (0 any, 1 xbox360,
///             2 dualsense) | u8 attached | text name)
/// [ping]      u64 sender's clock (µs)
/// u8 input count | count x (u8 slot | u8 frame count | frame count x (u32 sequence | snapshot))
/// u8 feedback-ack count | count x (u8 slot | u32 version)
/// ```
public struct LinkClientMessage: Sendable, Hashable {
    public static let version: UInt8 = 1
    /// Frames of one pad in one datagram, at most (the sender keeps 64 unacknowledged discrete frames; beyond
    /// this many the oldest wait for the next datagram).
    public static let framesPerPadLimit = 24

    public var padTable: (version: UInt32, pads: [LinkPadDescription])?
    public var pingMicroseconds: UInt64?
    /// The client holds presses, releases or touches the host has not acknowledged: the host answers at once.
    public var wantsAcknowledgement = false
    public var inputs: [(slot: UInt8, frames: [LinkFrame])] = []
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
            writer.u8(UInt8(min(padTable.pads.count, 255)))
            for pad in padTable.pads.prefix(255) {
                writer.u8(pad.slot)
                writer.text(pad.fingerprint.rawValue, limit: 64)
                writer.text(pad.kind, limit: 32)
                writer.u8(pad.requestedVirtualKind.map { $0 == .xbox360 ? 1 : 2 } ?? 0)
                writer.u8(pad.attached ? 1 : 0)
                writer.text(pad.name)
            }
        }
        if let pingMicroseconds { writer.u64(pingMicroseconds) }
        writer.u8(UInt8(min(inputs.count, 255)))
        for input in inputs.prefix(255) {
            let frames = input.frames.suffix(Self.framesPerPadLimit)
            writer.u8(input.slot)
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
            var pads: [LinkPadDescription] = []
            for _ in 0..<(try reader.u8()) {
                let slot = try reader.u8()
                let fingerprint = Fingerprint(rawValue: try reader.text())
                let kind = try reader.text()
                let requested: VirtualPadKind?
                switch try reader.u8() {
                case 0: requested = nil
                case 1: requested = .xbox360
                case 2: requested = .dualSense
                default: throw .invalid(field: "virtual kind")
                }
                let attached = try reader.u8() != 0
                pads.append(
                    LinkPadDescription(
                        slot: slot, fingerprint: fingerprint, kind: kind, requestedVirtualKind: requested,
                        attached: attached, name: try reader.text()))
            }
            padTable = (tableVersion, pads)
        }
        if flags & 2 != 0 { pingMicroseconds = try reader.u64() }
        for _ in 0..<(try reader.u8()) {
            let slot = try reader.u8()
            let count = try reader.u8()
            guard count <= Self.framesPerPadLimit else { throw .invalid(field: "frame count") }
            var frames: [LinkFrame] = []
            for _ in 0..<count {
                let sequence = try reader.u32()
                frames.append(LinkFrame(sequence: sequence, snapshot: try LinkSnapshotCodec.decode(from: &reader)))
            }
            inputs.append((slot, frames))
        }
        for _ in 0..<(try reader.u8()) {
            let slot = try reader.u8()
            feedbackAcknowledgements.append((slot, try reader.u32()))
        }
        guard reader.isAtEnd else { throw .invalid(field: "bytes after the message") }
    }
}

/// What a host sends in one datagram (inside the encryption).
///
/// ```
/// u8 version (1)
/// u8 flags: bit 0 pad-table acknowledgement, bit 1 pong
/// [pad-table ack] u32 version
/// [pong]          u64 the ping's clock, echoed | u32 datagrams received from this client so far | u32 sent to it
/// u8 input-ack count | count x (u8 slot | u32 applied sequence)
/// u8 feedback count | count x (u8 slot | u32 version | u8 parts | [rumble u16 strong u16 weak] [lightbar r g b]
///                              [u8 player LEDs] [u8 mic LED] [11-byte left trigger block] [11-byte right block])
/// ```
public struct LinkHostMessage: Sendable, Hashable {
    public static let version: UInt8 = 1

    public var padTableAcknowledgement: UInt32?
    /// The echo of a ping, with the host's counts of this session's datagrams (the client works out loss both ways).
    public var pong: (echoedMicroseconds: UInt64, receivedDatagrams: UInt32, sentDatagrams: UInt32)?
    public var inputAcknowledgements: [(slot: UInt8, applied: UInt32)] = []
    public var feedback: [(slot: UInt8, version: UInt32, state: Feedback)] = []

    public init() {}

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.encoded == rhs.encoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }

    public var encoded: [UInt8] {
        var writer = LinkByteWriter()
        writer.u8(Self.version)
        writer.u8((padTableAcknowledgement != nil ? 1 : 0) | (pong != nil ? 2 : 0))
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
        guard flags & ~3 == 0 else { throw .invalid(field: "flags") }
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
