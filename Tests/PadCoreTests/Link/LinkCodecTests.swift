import PadCore
import PadTestSupport
import Testing

@Suite struct LinkCodecTests {
    /// An Xbox pad's frame: A and dpup held, left stick at (-32768, 256), right trigger 32767; nothing else.
    @Test func aFrameWithoutTouchMotionOrBatteryIsSeventeenBytes() throws {
        var snapshot = PadSnapshot.neutral
        snapshot[.a] = true
        snapshot[.dpup] = true
        snapshot.leftX = -32768
        snapshot.leftY = 256
        snapshot.rightTrigger = 32767
        let buttons = ButtonSet([.a, .dpup]).rawValue
        let expected: [UInt8] =
            [UInt8(buttons & 0xFF), UInt8(buttons >> 8 & 0xFF), UInt8(buttons >> 16 & 0xFF), UInt8(buttons >> 24)]
            + [0x00, 0x80, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0xFF, 0x7F] + [0x00]
        #expect(LinkSnapshotCodec.encode(snapshot) == expected)
        #expect(try LinkSnapshotCodec.decode(expected) == snapshot)
    }

    @Test func touchMotionAndBatteryTravelWithinTheirPrecision() throws {
        var snapshot = PadSnapshot.neutral
        snapshot.touches[1] = TouchContact(trackingID: 7, active: true, x: 0.5, y: 1)
        snapshot.motion = MotionSample(
            gyroRadiansPerSecond: Vector3(x: 0.1, y: -2, z: 3.25), accelMetersPerSecondSquared: Vector3(x: 0, y: 9.81, z: 0),
            timestampMicroseconds: 123_456_789)
        snapshot.battery = BatteryState(percent: 80, charging: true)
        let bytes = LinkSnapshotCodec.encode(snapshot)
        #expect(bytes.count == 17 + 12 + 32 + 2)
        let decoded = try LinkSnapshotCodec.decode(bytes)
        #expect(decoded.touches[1].active && decoded.touches[1].trackingID == 7 && !decoded.touches[0].active)
        #expect(abs(decoded.touches[1].x - 0.5) <= 1.0 / 65535 && decoded.touches[1].y == 1)
        #expect(abs(decoded.motion.gyroRadiansPerSecond.x - 0.1) < 1e-6 && decoded.motion.gyroRadiansPerSecond.z == 3.25)
        #expect(decoded.motion.timestampMicroseconds == 123_456_789 && decoded.battery == snapshot.battery)
        #expect(LinkSnapshotCodec.encode(decoded) == bytes, "a decoded snapshot encodes to the same bytes")
    }

    @Test func randomSnapshotsRoundTripToTheSameBytes() throws {
        var generator = SplitMix64(seed: 0x11_4C)
        for _ in 0..<2_000 {
            let snapshot = PadSnapshot.random(using: &generator)
            let bytes = LinkSnapshotCodec.encode(snapshot)
            #expect(bytes.count == LinkSnapshotCodec.encodedSize(of: snapshot), "the size the encoder sets aside")
            let decoded = try LinkSnapshotCodec.decode(bytes)
            #expect(decoded.buttons == snapshot.buttons && decoded.leftX == snapshot.leftX)
            #expect(decoded.rightTrigger == snapshot.rightTrigger && decoded.hasSameDiscreteState(as: snapshot))
            #expect(LinkSnapshotCodec.encode(decoded) == bytes)
        }
    }

    /// A keepalive: version 5, the ping (clock, the host's sent count from its last pong, how many of those came, the
    /// client's round trip), no feedback acknowledgement, no block.
    @Test func aKeepaliveIsTwentyFourBytesAndDecodesBack() throws {
        var message = LinkClientMessage()
        message.ping = LinkPing(
            clockMicroseconds: 0x0102_0304_0506_0708, hostSent: 0x0A0B_0C0D, receivedWhenHostCounted: 0x11,
            roundTripMicroseconds: 0x0001_86A0)
        #expect(message.encoded == [5, 0b10, 8, 7, 6, 5, 4, 3, 2, 1, 0x0D, 0x0C, 0x0B, 0x0A, 0x11, 0, 0, 0, 0xA0, 0x86, 0x01, 0, 0, 0])
        #expect(try LinkClientMessage(decoding: message.encoded) == message)
        #expect(throws: LinkDecodingError.unsupportedVersion(2)) { try LinkClientMessage(decoding: [2, 0b10, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0]) }
    }

    /// The host's loss towards the client, from a ping: unknown before a pong; what did not come of what the pong
    /// counted (more come than counted, a late one overtaking the pong, is no loss).
    @Test func aPingTellsTheLossTowardsTheClient() {
        #expect(LinkPing(clockMicroseconds: 1).lossToClientPercent == nil)
        #expect(LinkPing(clockMicroseconds: 1, hostSent: 200, receivedWhenHostCounted: 150).lossToClientPercent == 25)
        #expect(LinkPing(clockMicroseconds: 1, hostSent: 10, receivedWhenHostCounted: 11).lossToClientPercent == 0)
    }

    @Test func fullMessagesRoundTrip() throws {
        var generator = SplitMix64(seed: 0x3E55)
        var client = LinkClientMessage()
        client.padTable = (7, [
            LinkPadDescription(
                slot: 0, fingerprint: Fingerprint(rawValue: "adc312c6744a"), kind: "dualSense",
                requestedVirtualKind: .dualSense, attached: true, name: "DualSense Wireless Controller"),
            LinkPadDescription(
                slot: 1, fingerprint: Fingerprint(rawValue: "170657e359c5"), kind: "xbox360", requestedVirtualKind: nil,
                attached: false, name: "pad", continuesNumbering: true),
        ])
        client.inputs = [LinkInputBlock(
            slot: 0, base: 0, frames: (1...5).map { LinkFrame(sequence: UInt32($0), snapshot: .random(using: &generator)) })]
        client.feedbackAcknowledgements = [(0, 3), (1, 9)]
        let decodedClient = try LinkClientMessage(decoding: client.encoded)
        #expect(decodedClient == client)
        #expect(decodedClient.padTable?.pads[1].attached == false && decodedClient.inputs[0].frames.count == 5)
        #expect(decodedClient.padTable.map { $0.pads.map(\.continuesNumbering) } == [false, true])

        var host = LinkHostMessage()
        host.padTableAcknowledgement = 7
        host.pong = (99, 1234, 1300)
        host.inputAcknowledgements = [(0, 5)]
        host.takenOver = true
        host.revoked = true
        host.notForwarded = [(1, "the host's --max-pads 1 is reached")]
        host.feedback = [(0, 4, Feedback(
            rumble: Rumble(strong: 1, weak: 0), lightbar: LightbarColor(red: 1, green: 2, blue: 3), playerLeds: 4,
            micLed: true, rightTrigger: try TriggerEffect(commandLine: "weapon:2:6:8")))]
        let decodedHost = try LinkHostMessage(decoding: host.encoded)
        #expect(decodedHost == host)
        #expect(decodedHost.feedback[0].state.rightTrigger?.block.hex == "2544000700000000000000")
        #expect(decodedHost.feedback[0].state.rumble == Rumble(strong: 1, weak: 0))

        // The trigger motors travel too (an Xbox pad's game on the host rumbles the client's Xbox pad's triggers).
        host.feedback = [(0, 5, Feedback(rumble: Rumble(strong: 0, weak: 1, leftTrigger: 1, rightTrigger: 0)))]
        #expect(try LinkHostMessage(decoding: host.encoded).feedback[0].state.rumble
            == Rumble(strong: 0, weak: 1, leftTrigger: 1, rightTrigger: 0))
    }

    /// Every virtual kind has its own code in a pad description and reads back as itself; 0 is "any", and a code no
    /// kind has is refused.
    @Test func everyVirtualKindTravelsByItsOwnCode() throws {
        let codes = VirtualPadKind.allCases.map(\.linkCode)
        #expect(Set(codes).count == codes.count && !codes.contains(0))
        for kind in VirtualPadKind.allCases {
            #expect(VirtualPadKind(linkCode: kind.linkCode) == kind)
            var message = LinkClientMessage()
            message.padTable = (1, [LinkPadDescription(
                slot: 0, fingerprint: Fingerprint(rawValue: "adc312c6744a"), kind: "dualSense",
                requestedVirtualKind: kind, attached: true, name: "pad")])
            #expect(try LinkClientMessage(decoding: message.encoded).padTable?.pads.first?.requestedVirtualKind == kind)
        }
        #expect(VirtualPadKind(linkCode: 0) == nil)
        #expect(VirtualPadKind(linkCode: UInt8(VirtualPadKind.allCases.count + 1)) == nil)
    }

    /// The host's encoder, item by item (its per-frame path) and reused, writes what `LinkHostMessage` encodes; a
    /// section keeps its first 255 items.
    @Test func hostMessagesWrittenItemByItemAreTheMessagesEncodedWhole() throws {
        var encoder = LinkHostMessageEncoder()
        let rumble = Feedback(rumble: Rumble(strong: 0.5, weak: 0.25), playerLeds: 3)
        var withFeedback = LinkHostMessage()
        withFeedback.padTableAcknowledgement = 2
        withFeedback.inputAcknowledgements = [(0, 41), (3, 7)]
        withFeedback.feedback = [(0, 9, rumble), (3, 1, Feedback(micLed: false))]
        encoder.begin(padTableAcknowledgement: 2, pong: nil, takenOver: false)
        encoder.acknowledgeInput(slot: 0, applied: 41)
        encoder.acknowledgeInput(slot: 3, applied: 7)
        encoder.appendFeedback(slot: 0, version: 9, state: rumble)
        encoder.appendFeedback(slot: 3, version: 1, state: Feedback(micLed: false))
        #expect(encoder.end() == withFeedback.encoded)

        // Reused: nothing of the last message's sections is left (counts, offsets).
        var pongOnly = LinkHostMessage()
        pongOnly.pong = (5, 6, 7)
        pongOnly.inputAcknowledgements = [(1, 2)]
        encoder.begin(padTableAcknowledgement: nil, pong: (5, 6, 7), takenOver: false)
        encoder.acknowledgeInput(slot: 1, applied: 2)
        #expect(encoder.end() == pongOnly.encoded)
        encoder.begin(padTableAcknowledgement: nil, pong: nil, takenOver: true)
        #expect(encoder.end() == [LinkHostMessage.version, 4, 0, 0, 0])
        encoder.begin(padTableAcknowledgement: nil, pong: nil, takenOver: false, revoked: true)
        #expect(encoder.end() == [LinkHostMessage.version, 8, 0, 0, 0])
        var withUnforwarded = LinkHostMessage()
        withUnforwarded.feedback = [(0, 2, rumble)]
        withUnforwarded.notForwarded = [(1, "no room")]
        encoder.begin(padTableAcknowledgement: nil, pong: nil, takenOver: false)
        encoder.appendFeedback(slot: 0, version: 2, state: rumble)
        encoder.reportNotForwarded(slot: 1, reason: "no room")
        #expect(encoder.end() == withUnforwarded.encoded)

        encoder.begin(padTableAcknowledgement: nil, pong: nil, takenOver: false)
        for index in 0..<300 { encoder.acknowledgeInput(slot: UInt8(index % 256), applied: UInt32(index)) }
        let decoded = try LinkHostMessage(decoding: encoder.end())
        #expect(decoded.inputAcknowledgements.count == 255)
        #expect(decoded.inputAcknowledgements.last.map { [$0.slot, UInt8($0.applied)] } == [254, 254])
    }

    /// The pads the host gives no virtual pad: each reason cut to its limit (before a scalar that does not fit),
    /// control characters read as spaces, at most a full pad table's worth; the revoked flag alone.
    @Test func theHostsReasonsForPadsWithoutAVirtualPadAreBounded() throws {
        var message = LinkHostMessage()
        message.revoked = true
        message.notForwarded = [(2, String(repeating: "é", count: 50)), (3, "no\u{1B}[31m room")]
        let decoded = try LinkHostMessage(decoding: message.encoded)
        #expect(decoded.revoked && !decoded.takenOver)
        #expect(decoded.notForwarded.map(\.slot) == [2, 3])
        #expect(decoded.notForwarded[0].reason == String(repeating: "é", count: 40))
        #expect(decoded.notForwarded[1].reason == "no [31m room")
        message.notForwarded = (0..<20).map { (UInt8($0), "full") }
        #expect(try LinkHostMessage(decoding: message.encoded).notForwarded.count == LinkHostMessage.maximumNotForwarded)
        var tooMany = LinkHostMessage().encoded
        tooMany[tooMany.count - 1] = 13
        tooMany += (0..<13).flatMap { [UInt8($0), 0] }
        #expect(throws: LinkDecodingError.invalid(field: "not-forwarded count")) { try LinkHostMessage(decoding: tooMany) }
        #expect(throws: LinkDecodingError.invalid(field: "flags")) { try LinkHostMessage(decoding: [LinkHostMessage.version, 16, 0, 0, 0]) }
    }

    /// Total: random bytes of every length into every decoder give a value or a `LinkDecodingError`.
    @Test func randomBytesNeverTrap() throws {
        var generator = SplitMix64(seed: 0xF0_22)
        for length in 0...512 {
            for _ in 0..<4 {
                var bytes = generator.bytes(length)
                if length > 0 && generator.chance(1, in: 2) { bytes[0] = LinkClientMessage.version }  // the right version, to get further
                _ = try? LinkSnapshotCodec.decode(bytes)
                if let message = try? LinkClientMessage(decoding: bytes) {
                    #expect(try LinkClientMessage(decoding: message.encoded) == message)
                }
                if let message = try? LinkHostMessage(decoding: bytes) {
                    #expect(try LinkHostMessage(decoding: message.encoded) == message)
                }
            }
        }
        #expect(throws: LinkDecodingError.unsupportedVersion(4)) { try LinkHostMessage(decoding: [4, 0, 0, 0]) }
        #expect(throws: LinkDecodingError.truncated(offset: 1, needed: 1)) { try LinkHostMessage(decoding: [LinkHostMessage.version]) }
    }

    /// A pad's ID and kind are letters and digits within their limits, the kind one padbridge knows (case counts),
    /// its name at most 48 bytes; a description that breaks a rule is still read, as refused with why (so the rest
    /// of the message is used), and names are printable (they reach status lines). docs/protocol.md 8.1.
    @Test(arguments: [
        ("aa:bb:cc", "dualSense", "pad", #"pad ID "aa:bb:cc" refused: 1-16 ASCII letters or digits"#),
        ("../etc", "dualSense", "pad", #"pad ID "../etc" refused: 1-16 ASCII letters or digits"#),
        ("", "dualSense", "pad", #"pad ID "" refused: 1-16 ASCII letters or digits"#),
        ("0123456789abcdef0", "dualSense", "pad", #"pad ID "0123456789abc…" refused: 1-16 ASCII letters or digits"#),
        ("a\u{1B}[2J\u{202E}", "dualSense", "pad", #"pad ID "a [2J " refused: 1-16 ASCII letters or digits"#),
        ("adc312c6744a", "a b", "pad", #"pad kind "a b" refused: 1-16 ASCII letters or digits"#),
        ("adc312c6744a", "", "pad", #"pad kind "" refused: 1-16 ASCII letters or digits"#),
        ("adc312c6744a", "DUALSENSE", "pad", #"pad kind "DUALSENSE" refused: unknown (case counts: dualSense, ...)"#),
        ("adc312c6744a", "dualsense", "pad", #"pad kind "dualsense" refused: unknown (case counts: dualSense, ...)"#),
        ("adc312c6744a", "dualSense", String(repeating: "n", count: 49), "pad name of 49 bytes refused: at most 48"),
        ("adc312c6744a", "dualSense", String(repeating: "é", count: 100), "pad name of 200 bytes refused: at most 48"),
    ])
    func padDescriptionsThatBreakTheRulesAreReadAsRefused(id: String, kind: String, name: String, reason: String) throws {
        let message = try LinkClientMessage(decoding: Self.table(id: Array(id.utf8), kind: Array(kind.utf8), name: Array(name.utf8)))
        let pad = try #require(message.padTable?.pads.first)
        #expect(pad.refusal == reason)
        #expect(pad.fingerprint.rawValue.isEmpty, "a refused pad can be no pad the host has")
        #expect(reason.utf8.count <= LinkHostMessage.notForwardedReasonLimit)
        #expect(message.inputs.count == 1, "the rest of the message is read")
    }

    @Test func padDescriptionsThatKeepTheRulesAreReadAsSent() throws {
        for kind in ControllerKind.allCases {
            let pad = try #require(try LinkClientMessage(decoding: Self.table(kind: Array(kind.rawValue.utf8))).padTable?.pads.first)
            #expect(pad.refusal == nil && pad.kind == kind.rawValue && pad.fingerprint.rawValue == "adc312c6744a")
            #expect(LinkPadDescription.refusal(id: "adc312c6744a", kind: kind.rawValue) == nil)
        }
        func name(_ bytes: [UInt8]) throws -> String? { try LinkClientMessage(decoding: Self.table(name: bytes)).padTable?.pads.first?.name }
        #expect(try name(Array("red\u{1B}[31m\u{9B}0m\u{7}".utf8)) == "red [31m 0m ")
        #expect(try name(Array("\u{202E}evil\u{2066}x\u{200F}\u{061C}".utf8)) == " evil x  ", "bidirectional controls are spaces")
        #expect(try name(Array("a\u{200B}b".utf8)) == "a\u{200B}b", "other format characters stay")
        #expect(try name([0x61, 0xE2, 0x82, 0x62, 0xFF]) == "a\u{FFFD}b\u{FFFD}", "ill-formed UTF-8 read as U+FFFD")
        #expect(try name(Array(String(repeating: "n", count: 48).utf8))?.utf8.count == 48)
        // A writer cuts a long name at a character, within 48 bytes: what padbridge sends is never refused.
        var message = LinkClientMessage()
        message.padTable = (1, [LinkPadDescription(
            slot: 0, fingerprint: Fingerprint(rawValue: "adc312c6744a"), kind: "dualSense", requestedVirtualKind: nil,
            attached: true, name: String(repeating: "é", count: 40))])
        let cut = try LinkClientMessage(decoding: message.encoded).padTable?.pads.first
        #expect(cut?.name == String(repeating: "é", count: 24) && cut?.refusal == nil)
    }

    /// A pad table with one pad (slot 0) of these texts, any virtual kind, attached, and one block of one frame.
    static func table(
        id: [UInt8] = Array("adc312c6744a".utf8), kind: [UInt8] = Array("dualSense".utf8), name: [UInt8] = Array("pad".utf8)
    ) -> [UInt8] {
        var bytes: [UInt8] = [LinkClientMessage.version, 1, 1, 0, 0, 0, 1, 0]
        for text in [id, kind] { bytes += [UInt8(text.count)] + text }
        bytes += [0, 1, UInt8(name.count)] + name
        bytes += [0]  // no feedback acknowledgements
        bytes += [1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0] + LinkSnapshotCodec.encode(.neutral)  // slot 0, base 0, frame 1
        return bytes
    }

    /// One definition of a control character for every text from the other machine (docs/protocol.md section 1).
    @Test func controlCharactersAreC0DelC1AndTheBidirectionalControls() {
        let controls: [UInt32] = Array(0x00...0x1F) + Array(0x7F...0x9F) + [0x061C, 0x200E, 0x200F]
            + Array(0x202A...0x202E) + Array(0x2066...0x2069)
        for value in UInt32(0)...0x2FFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            #expect(LinkText.isControl(scalar) == controls.contains(value), "U+\(String(value, radix: 16))")
        }
        #expect(LinkText.printable("a\u{85}b\u{2067}c") == "a b c")
        #expect(LinkText.shortened("0123456789abcdefXYZ", toBytes: 16) == "0123456789abc…")
        #expect(LinkText.shortened("short", toBytes: 16) == "short")
    }

    /// `packed` spreads a backlog over messages within the size limit; reading them in order gives every frame
    /// once, each block continuing from the one before it.
    @Test func aLongBacklogIsPackedIntoMessagesWithinTheLimit() throws {
        var generator = SplitMix64(seed: 0xBAC_106)
        let frames = (101...400).map { LinkFrame(sequence: UInt32($0), snapshot: .random(using: &generator)) }
        let others = (7...9).map { LinkFrame(sequence: UInt32($0), snapshot: .random(using: &generator)) }
        let messages = LinkClientMessage.packed(
            ping: LinkPing(clockMicroseconds: 5), wantsAcknowledgement: true,
            blocks: [LinkInputBlock(slot: 0, base: 100, frames: frames), LinkInputBlock(slot: 3, base: 6, frames: others)],
            feedbackAcknowledgements: [(0, 1)])
        #expect(messages.count > 1)
        #expect(messages.allSatisfy { $0.encoded.count <= LinkClientMessage.maximumEncodedSize && $0.wantsAcknowledgement })
        #expect(messages[0].ping?.clockMicroseconds == 5 && messages.dropFirst().allSatisfy { $0.ping == nil })
        let blocks = try messages.flatMap { try LinkClientMessage(decoding: $0.encoded).inputs }
        let padZero = blocks.filter { $0.slot == 0 }
        #expect(padZero.flatMap(\.frames).map(\.sequence) == frames.map(\.sequence))
        #expect(padZero.dropFirst().allSatisfy(\.continues) && !padZero[0].continues)
        #expect(zip(padZero, padZero.dropFirst()).allSatisfy { $1.base == $0.frames.last?.sequence })
        #expect(padZero.first?.base == 100)
        #expect(blocks.filter { $0.slot == 3 }.flatMap(\.frames).map(\.sequence) == others.map(\.sequence))
        // Out of order, a block waits for the one before it; in order, every frame is applied once.
        var receiver = InputRedundancyReceiver()
        _ = receiver.receive(LinkInputBlock(slot: 0, base: 99, frames: [LinkFrame(sequence: 100, snapshot: .neutral)]))
        let early = padZero.reversed().flatMap { receiver.receive($0) }
        #expect(early.count == padZero[0].frames.count, "only the block following what was applied")
        let rest = padZero.flatMap { receiver.receive($0) }
        #expect(early.count + rest.count == frames.count)
        #expect(receiver.applied == 400)
    }
}
