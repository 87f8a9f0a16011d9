/// The link's messages written and read in place, for the per-frame path: an encoder that writes into a buffer it
/// keeps (no allocation once it has grown to a datagram's size) and splits a backlog over messages as it goes, and
/// views that read a received message where it lies, calling back for each part instead of building arrays.
/// `LinkClientMessage` and `LinkHostMessage` (values, for tests, tools and the fuzzer) are built on these, so there
/// is one encoder and one decoder of each format.

/// Writes client messages (`LinkClientMessage`'s format) into a buffer it keeps, a send at a time: `begin` with what
/// the first message carries, `append` each pad's frames (a message that is full is handed to `emit` and the frames
/// continue, oldest first, in a block of the next), then `end`.
public struct LinkClientMessageEncoder: Sendable {
    public let maximumSize: Int
    private var writer: LinkByteWriter
    private var blockCountOffset = 0
    private var blockCount = 0
    private var continuationFlags: UInt8 = 0

    public init(maximumSize: Int = LinkClientMessage.maximumEncodedSize) {
        self.maximumSize = maximumSize
        writer = LinkByteWriter(capacity: min(maximumSize, 1 << 16) + 64)
    }

    /// Starts a send's first message: the pad table (while unacknowledged), a ping, the feedback acknowledgements.
    public mutating func begin(
        padTable: (version: UInt32, pads: [LinkPadDescription])?, ping: LinkPing?, wantsAcknowledgement: Bool,
        feedbackAcknowledgements: some Sequence<(slot: UInt8, version: UInt32)>
    ) {
        writer.reset()
        writer.u8(LinkClientMessage.version)
        continuationFlags = wantsAcknowledgement ? LinkClientMessage.acknowledgementWanted : 0
        writer.u8(
            (padTable != nil ? LinkClientMessage.hasPadTable : 0) | (ping != nil ? LinkClientMessage.hasPing : 0)
                | continuationFlags)
        if let padTable {
            writer.u32(padTable.version)
            let pads = padTable.pads.prefix(LinkClientMessage.maximumPads)
            writer.u8(UInt8(pads.count))
            for pad in pads { pad.encode(into: &writer) }
        }
        if let ping {
            writer.u64(ping.clockMicroseconds)
            writer.u32(ping.hostSent)
            writer.u32(ping.receivedWhenHostCounted)
            writer.u32(ping.roundTripMicroseconds)
        }
        let countOffset = writer.count
        writer.u8(0)
        var count: UInt8 = 0
        for acknowledgement in feedbackAcknowledgements where count < 255 {
            writer.u8(acknowledgement.slot)
            writer.u32(acknowledgement.version)
            count += 1
        }
        writer.patch(count, at: countOffset)
        startBlocks()
    }

    private mutating func startBlocks() {
        blockCountOffset = writer.count
        writer.u8(0)
        blockCount = 0
    }

    /// A message that carries only frames, continuing a send.
    private mutating func beginContinuation() {
        writer.reset()
        writer.u8(LinkClientMessage.version)
        writer.u8(continuationFlags)
        writer.u8(0)  // no feedback acknowledgements
        startBlocks()
    }

    private mutating func flush(_ emit: ([UInt8]) -> Void) {
        writer.patch(UInt8(blockCount), at: blockCountOffset)
        emit(writer.bytes)
    }

    /// Appends a pad's frames, oldest first, after `base` (see `LinkInputBlock`); a full message goes to `emit` and
    /// the rest continues in the next, in a block whose base is the last frame sent.
    public mutating func append(
        slot: UInt8, base: UInt32, continues: Bool, frames: some Sequence<LinkFrame>, emit: ([UInt8]) -> Void
    ) {
        var base = base
        var continues = continues
        var iterator = frames.makeIterator()
        var pending = iterator.next()
        while let first = pending {
            let blockHeader = 7  // slot, base, flags, frame count
            if writer.count + blockHeader + 4 + LinkSnapshotCodec.encodedSize(of: first.snapshot) > maximumSize
                && blockCount > 0 || blockCount == 255
            {
                flush(emit)
                beginContinuation()
            }
            writer.u8(slot)
            writer.u32(base)
            writer.u8(continues ? LinkClientMessage.blockContinues : 0)
            let frameCountOffset = writer.count
            writer.u8(0)
            blockCount += 1
            var frameCount: UInt8 = 0
            while let frame = pending, frameCount < 255 {
                let size = 4 + LinkSnapshotCodec.encodedSize(of: frame.snapshot)
                guard writer.count + size <= maximumSize || frameCount == 0 else { break }
                writer.u32(frame.sequence)
                LinkSnapshotCodec.encode(frame.snapshot, into: &writer)
                frameCount += 1
                base = frame.sequence
                pending = iterator.next()
            }
            writer.patch(frameCount, at: frameCountOffset)
            continues = true
        }
    }

    /// Ends the send: the last message goes to `emit`.
    public mutating func end(emit: ([UInt8]) -> Void) {
        flush(emit)
    }
}

/// A client message read where it lies: `init` checks the whole message (any bytes: a view or a typed error, never
/// a trap), then its parts are read on demand without building arrays (the pad table, rare, is built).
public struct LinkClientMessageView<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    public let wantsAcknowledgement: Bool
    public let ping: LinkPing?
    private let bytes: Bytes
    private let padTableOffset: Int?
    private let acknowledgementsOffset: Int
    private let blocksOffset: Int

    public init(_ bytes: Bytes) throws(LinkDecodingError) {
        self.bytes = bytes
        var reader = LinkByteReader(bytes)
        let version = try reader.u8()
        guard version == LinkClientMessage.version else { throw .unsupportedVersion(version) }
        let flags = try reader.u8()
        guard flags & ~LinkClientMessage.allFlags == 0 else { throw .invalid(field: "flags") }
        wantsAcknowledgement = flags & LinkClientMessage.acknowledgementWanted != 0
        if flags & LinkClientMessage.hasPadTable != 0 {
            padTableOffset = reader.offset
            _ = try reader.u32()
            let count = try reader.u8()
            guard count <= LinkClientMessage.maximumPads else { throw .invalid(field: "pad count") }
            for _ in 0..<count { _ = try LinkPadDescription(decoding: &reader) }
        } else {
            padTableOffset = nil
        }
        if flags & LinkClientMessage.hasPing != 0 {
            let clock = try reader.u64()
            let hostSent = try reader.u32()
            let received = try reader.u32()
            ping = LinkPing(
                clockMicroseconds: clock, hostSent: hostSent, receivedWhenHostCounted: received,
                roundTripMicroseconds: try reader.u32())
        } else {
            ping = nil
        }
        acknowledgementsOffset = reader.offset
        try reader.skip(5 * Int(try reader.u8()))
        blocksOffset = reader.offset
        for _ in 0..<(try reader.u8()) {
            try reader.skip(5)  // slot, base
            guard try reader.u8() & ~LinkClientMessage.blockContinues == 0 else { throw .invalid(field: "block flags") }
            for _ in 0..<(try reader.u8()) {
                try reader.skip(4)
                _ = try LinkSnapshotCodec.decode(from: &reader)
            }
        }
        guard reader.isAtEnd else { throw .invalid(field: "bytes after the message") }
    }

    /// The pad table, when the message has one.
    public var padTable: (version: UInt32, pads: [LinkPadDescription])? {
        guard let padTableOffset else { return nil }
        var reader = LinkByteReader(bytes[(bytes.startIndex + padTableOffset)...])
        guard let version = try? reader.u32(), let count = try? reader.u8() else { return nil }
        var pads: [LinkPadDescription] = []
        for _ in 0..<count {
            guard let pad = try? LinkPadDescription(decoding: &reader) else { return nil }
            pads.append(pad)
        }
        return (version, pads)
    }

    /// Each feedback version the client acknowledges, with its pad's slot.
    public func forEachFeedbackAcknowledgement(_ body: (_ slot: UInt8, _ version: UInt32) -> Void) {
        var reader = LinkByteReader(bytes[(bytes.startIndex + acknowledgementsOffset)...])
        guard let count = try? reader.u8() else { return }
        for _ in 0..<count {
            guard let slot = try? reader.u8(), let version = try? reader.u32() else { return }
            body(slot, version)
        }
    }

    /// Each block of frames, in order, with its frames read one by one as they are iterated.
    public func forEachBlock(
        _ body: (_ slot: UInt8, _ base: UInt32, _ continues: Bool, _ frames: LinkFrameSequence<Bytes.SubSequence>) -> Void
    ) {
        var reader = LinkByteReader(bytes[(bytes.startIndex + blocksOffset)...])
        guard let count = try? reader.u8() else { return }
        for _ in 0..<count {
            guard let slot = try? reader.u8(), let base = try? reader.u32(), let flags = try? reader.u8(),
                let frameCount = try? reader.u8()
            else { return }
            let start = reader.offset
            // `init` decoded every frame once to check it; here they are only stepped over, and decoded as iterated.
            for _ in 0..<frameCount {
                guard (try? reader.skip(4)) != nil, (try? LinkSnapshotCodec.skipChecked(in: &reader)) != nil else { return }
            }
            let frameBytes = reader.bytesRead(from: start)
            body(slot, base, flags & LinkClientMessage.blockContinues != 0, LinkFrameSequence(bytes: frameBytes, count: Int(frameCount)))
        }
    }
}

/// A block's frames as they lie in a message, decoded one at a time.
public struct LinkFrameSequence<Bytes: RandomAccessCollection<UInt8>>: Sequence where Bytes.Index == Int {
    let bytes: Bytes
    public let count: Int

    public struct Iterator: IteratorProtocol {
        var reader: LinkByteReader<Bytes>
        var left: Int
        public mutating func next() -> LinkFrame? {
            guard left > 0, let sequence = try? reader.u32(), let snapshot = try? LinkSnapshotCodec.decode(from: &reader)
            else { return nil }
            left -= 1
            return LinkFrame(sequence: sequence, snapshot: snapshot)
        }
    }

    public func makeIterator() -> Iterator { Iterator(reader: LinkByteReader(bytes), left: count) }
}

extension LinkByteReader {
    /// The bytes from `offset` (as `offset` gave it) to where reading is now.
    func bytesRead(from offset: Int) -> Bytes.SubSequence {
        bytes[(bytes.startIndex + offset)..<(bytes.startIndex + self.offset)]
    }
}

/// Writes host messages (`LinkHostMessage`'s format) into a buffer it keeps.
public struct LinkHostMessageEncoder: Sendable {
    private var writer = LinkByteWriter(capacity: 1_024)
    /// Where the count of the section being written is, and how many items it has so far.
    private var acknowledgementCountOffset = 0
    private var acknowledgementCount: UInt8 = 0
    private var feedbackCountOffset: Int?
    private var feedbackCount: UInt8 = 0
    private var notForwardedCountOffset: Int?
    private var notForwardedCount: UInt8 = 0

    public init() {}

    /// The message's bytes (valid until the next `encode` or `begin`).
    public mutating func encode(
        padTableAcknowledgement: UInt32?, pong: (echoedMicroseconds: UInt64, receivedDatagrams: UInt32, sentDatagrams: UInt32)?,
        takenOver: Bool, revoked: Bool = false, inputAcknowledgements: some Sequence<(slot: UInt8, applied: UInt32)>,
        feedback: some Sequence<(slot: UInt8, version: UInt32, state: Feedback)>,
        notForwarded: some Sequence<(slot: UInt8, reason: String)> = EmptyCollection()
    ) -> [UInt8] {
        begin(padTableAcknowledgement: padTableAcknowledgement, pong: pong, takenOver: takenOver, revoked: revoked)
        for acknowledgement in inputAcknowledgements { acknowledgeInput(slot: acknowledgement.slot, applied: acknowledgement.applied) }
        for item in feedback { appendFeedback(slot: item.slot, version: item.version, state: item.state) }
        for item in notForwarded { reportNotForwarded(slot: item.slot, reason: item.reason) }
        return end()
    }

    /// Starts a message, item by item (no sequence of items to build: the host's per-frame path): `begin`, then
    /// `acknowledgeInput` for each slot, then `appendFeedback` for each, then `reportNotForwarded` for each, then
    /// `end`. A section's items beyond 255 (beyond `LinkHostMessage.maximumNotForwarded` for the last) are left out.
    public mutating func begin(
        padTableAcknowledgement: UInt32?, pong: (echoedMicroseconds: UInt64, receivedDatagrams: UInt32, sentDatagrams: UInt32)?,
        takenOver: Bool, revoked: Bool = false
    ) {
        writer.reset()
        writer.u8(LinkHostMessage.version)
        writer.u8(
            (padTableAcknowledgement != nil ? LinkHostMessage.hasPadTableAcknowledgement : 0)
                | (pong != nil ? LinkHostMessage.hasPong : 0) | (takenOver ? LinkHostMessage.takenOverFlag : 0)
                | (revoked ? LinkHostMessage.revokedFlag : 0))
        if let padTableAcknowledgement { writer.u32(padTableAcknowledgement) }
        if let pong {
            writer.u64(pong.echoedMicroseconds)
            writer.u32(pong.receivedDatagrams)
            writer.u32(pong.sentDatagrams)
        }
        acknowledgementCountOffset = writer.count
        acknowledgementCount = 0
        writer.u8(0)
        feedbackCountOffset = nil
        feedbackCount = 0
        notForwardedCountOffset = nil
        notForwardedCount = 0
    }

    /// The newest frame of `slot` applied. Only before the first `appendFeedback`.
    public mutating func acknowledgeInput(slot: UInt8, applied: UInt32) {
        precondition(feedbackCountOffset == nil, "input acknowledgements come before feedback")
        guard acknowledgementCount < 255 else { return }
        writer.u8(slot)
        writer.u32(applied)
        acknowledgementCount += 1
    }

    /// Only before the first `reportNotForwarded`.
    public mutating func appendFeedback(slot: UInt8, version: UInt32, state: Feedback) {
        precondition(notForwardedCountOffset == nil, "feedback comes before the pads not forwarded")
        if feedbackCountOffset == nil { startFeedback() }
        guard feedbackCount < 255 else { return }
        writer.u8(slot)
        writer.u32(version)
        writer.u8(FeedbackParts(of: state).rawValue)
        if let rumble = state.rumble {
            writer.u16(Rumble.word(rumble.strong))
            writer.u16(Rumble.word(rumble.weak))
            writer.u16(Rumble.word(rumble.leftTrigger))
            writer.u16(Rumble.word(rumble.rightTrigger))
        }
        if let lightbar = state.lightbar {
            writer.u8(lightbar.red)
            writer.u8(lightbar.green)
            writer.u8(lightbar.blue)
        }
        if let playerLeds = state.playerLeds { writer.u8(playerLeds) }
        if let micLed = state.micLed { writer.u8(micLed ? 1 : 0) }
        for effect in [state.leftTrigger, state.rightTrigger] {
            guard let block = effect?.block else { continue }
            for index in 0..<TriggerEffectBlock.count { writer.u8(block[index]) }
        }
        feedbackCount += 1
    }

    /// A pad of the client's table that gets no virtual pad, and why (cut to `notForwardedReasonLimit` bytes).
    public mutating func reportNotForwarded(slot: UInt8, reason: String) {
        if feedbackCountOffset == nil { startFeedback() }
        if notForwardedCountOffset == nil {
            notForwardedCountOffset = writer.count
            writer.u8(0)
        }
        guard Int(notForwardedCount) < LinkHostMessage.maximumNotForwarded else { return }
        writer.u8(slot)
        writer.text(reason, limit: LinkHostMessage.notForwardedReasonLimit)
        notForwardedCount += 1
    }

    /// The message's bytes (valid until the next `begin` or `encode`).
    public mutating func end() -> [UInt8] {
        if feedbackCountOffset == nil { startFeedback() }
        if notForwardedCountOffset == nil {
            notForwardedCountOffset = writer.count
            writer.u8(0)
        }
        writer.patch(acknowledgementCount, at: acknowledgementCountOffset)
        writer.patch(feedbackCount, at: feedbackCountOffset!)
        writer.patch(notForwardedCount, at: notForwardedCountOffset!)
        return writer.bytes
    }

    private mutating func startFeedback() {
        feedbackCountOffset = writer.count
        writer.u8(0)
    }
}

/// A host message read where it lies: `init` checks all of it (a view or a typed error, never a trap).
public struct LinkHostMessageView<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    public let padTableAcknowledgement: UInt32?
    public let pong: (echoedMicroseconds: UInt64, receivedDatagrams: UInt32, sentDatagrams: UInt32)?
    public let takenOver: Bool
    public let revoked: Bool
    private let bytes: Bytes
    private let acknowledgementsOffset: Int
    private let feedbackOffset: Int
    private let notForwardedOffset: Int

    public init(_ bytes: Bytes) throws(LinkDecodingError) {
        self.bytes = bytes
        var reader = LinkByteReader(bytes)
        let version = try reader.u8()
        guard version == LinkHostMessage.version else { throw .unsupportedVersion(version) }
        let flags = try reader.u8()
        guard flags & ~LinkHostMessage.allFlags == 0 else { throw .invalid(field: "flags") }
        takenOver = flags & LinkHostMessage.takenOverFlag != 0
        revoked = flags & LinkHostMessage.revokedFlag != 0
        padTableAcknowledgement = flags & LinkHostMessage.hasPadTableAcknowledgement != 0 ? try reader.u32() : nil
        if flags & LinkHostMessage.hasPong != 0 {
            let echoed = try reader.u64()
            let received = try reader.u32()
            pong = (echoed, received, try reader.u32())
        } else {
            pong = nil
        }
        acknowledgementsOffset = reader.offset
        try reader.skip(5 * Int(try reader.u8()))
        feedbackOffset = reader.offset
        for _ in 0..<(try reader.u8()) { _ = try Self.feedbackItem(&reader) }
        notForwardedOffset = reader.offset
        let notForwardedCount = try reader.u8()
        guard notForwardedCount <= LinkHostMessage.maximumNotForwarded else { throw .invalid(field: "not-forwarded count") }
        for _ in 0..<notForwardedCount {
            _ = try reader.u8()
            _ = try reader.text(limit: LinkHostMessage.notForwardedReasonLimit, field: "not-forwarded reason")
        }
        guard reader.isAtEnd else { throw .invalid(field: "bytes after the message") }
    }

    static func feedbackItem<Source>(_ reader: inout LinkByteReader<Source>) throws(LinkDecodingError)
        -> (slot: UInt8, version: UInt32, state: Feedback)
    {
        let slot = try reader.u8()
        let version = try reader.u32()
        let parts = FeedbackParts(rawValue: try reader.u8())
        guard parts.isSubset(of: .all) else { throw .invalid(field: "feedback parts") }
        var state = Feedback()
        if parts.contains(.rumble) {
            let strong = Double(try reader.u16()) / 65535
            let weak = Double(try reader.u16()) / 65535
            let leftTrigger = Double(try reader.u16()) / 65535
            state.rumble = Rumble(
                strong: strong, weak: weak, leftTrigger: leftTrigger, rightTrigger: Double(try reader.u16()) / 65535)
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
        return (slot, version, state)
    }

    public func forEachInputAcknowledgement(_ body: (_ slot: UInt8, _ applied: UInt32) -> Void) {
        var reader = LinkByteReader(bytes[(bytes.startIndex + acknowledgementsOffset)...])
        guard let count = try? reader.u8() else { return }
        for _ in 0..<count {
            guard let slot = try? reader.u8(), let applied = try? reader.u32() else { return }
            body(slot, applied)
        }
    }

    /// Each pad the host gives no virtual pad, with why (control characters turned into spaces: the text comes from
    /// another machine and reaches a terminal).
    public func forEachNotForwarded(_ body: (_ slot: UInt8, _ reason: String) -> Void) {
        var reader = LinkByteReader(bytes[(bytes.startIndex + notForwardedOffset)...])
        guard let count = try? reader.u8() else { return }
        for _ in 0..<count {
            guard let slot = try? reader.u8(),
                let reason = try? reader.text(limit: LinkHostMessage.notForwardedReasonLimit, field: "not-forwarded reason")
            else { return }
            body(slot, LinkText.printable(reason))
        }
    }

    public func forEachFeedback(_ body: (_ slot: UInt8, _ version: UInt32, _ state: Feedback) -> Void) {
        var reader = LinkByteReader(bytes[(bytes.startIndex + feedbackOffset)...])
        guard let count = try? reader.u8() else { return }
        for _ in 0..<count {
            guard let item = try? Self.feedbackItem(&reader) else { return }
            body(item.slot, item.version, item.state)
        }
    }
}
