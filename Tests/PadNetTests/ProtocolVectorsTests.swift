import Crypto
import Foundation
import PadCore
@testable import PadNet
import PadNetLinux
@testable import PadNoise
import Testing

/// docs/protocol-vectors.json, the test vectors of docs/protocol.md, is what padbridge's own code makes of the fixed
/// inputs below: every vector is made again here, from those inputs, and compared with the file byte for byte, so
/// neither the file nor the specification that cites it can drift from the code. The inputs are written into the
/// file with the outputs, for another implementation to reproduce.
///
/// After a deliberate change of the protocol: `PADBRIDGE_WRITE_PROTOCOL_VECTORS=1 swift test --filter
/// ProtocolVectors` writes the file anew (review its diff, and docs/protocol.md with it).
@Suite struct ProtocolVectorsTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let vectorsFile = repositoryRoot.appendingPathComponent("docs/protocol-vectors.json")
    static let specificationFile = repositoryRoot.appendingPathComponent("docs/protocol.md")
    static let writeVariable = "PADBRIDGE_WRITE_PROTOCOL_VECTORS"
    static let regenerate = "PADBRIDGE_WRITE_PROTOCOL_VECTORS=1 swift test --filter ProtocolVectors"

    @Test func theVectorsFileIsWhatTheCodeMakes() throws {
        let vectors = try ProtocolVectors.make()
        let expected = ProtocolVectors.document(vectors).rendered()
        if ProcessInfo.processInfo.environment[Self.writeVariable] == "1" {
            try expected.write(to: Self.vectorsFile, atomically: true, encoding: .utf8)
        }
        guard let text = try? String(contentsOf: Self.vectorsFile, encoding: .utf8) else {
            Issue.record("\(Self.vectorsFile.path) is missing or unreadable: make it with `\(Self.regenerate)`")
            return
        }
        let found = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let made = expected.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var differing = 0
        for vector in vectors {
            let name = vector.name
            guard let foundRange = Self.lines(ofVector: name, in: found) else {
                Issue.record("vector \"\(name)\" is not in docs/protocol-vectors.json: regenerate it with `\(Self.regenerate)`")
                differing += 1
                continue
            }
            let madeRange = Self.lines(ofVector: name, in: made)!
            let foundLines = Array(found[foundRange])
            let madeLines = Array(made[madeRange])
            guard foundLines != madeLines else { continue }
            differing += 1
            let offset = Self.firstDifference(foundLines, madeLines)
            let fileLine = foundRange.lowerBound + offset + 1
            let (fileText, codeText) = Self.excerpts(
                offset < foundLines.count ? foundLines[offset] : nil, offset < madeLines.count ? madeLines[offset] : nil)
            Issue.record("""
                vector "\(name)" differs from what padbridge's code makes of its inputs, at docs/protocol-vectors.json \
                line \(fileLine):
                  file: \(fileText)
                  code: \(codeText)
                If the protocol changed on purpose, regenerate the file with `\(Self.regenerate)`, review its diff and \
                update docs/protocol.md; otherwise the code changed the bytes on the wire.
                """)
        }
        if differing == 0 && found != made {
            let offset = Self.firstDifference(found, made)
            let (fileText, codeText) = Self.excerpts(
                offset < found.count ? found[offset] : nil, offset < made.count ? made[offset] : nil)
            Issue.record("""
                docs/protocol-vectors.json differs from what padbridge's code makes outside the vectors (its header, a \
                vector no longer made, or its layout), at line \(offset + 1):
                  file: \(fileText)
                  code: \(codeText)
                Regenerate it with `\(Self.regenerate)`.
                """)
        }
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "docs/protocol-vectors.json is not valid JSON")
    }

    /// The specification cites every vector by name (and how to make the file again), so the two stay in step.
    @Test func theSpecificationNamesEveryVector() throws {
        guard let text = try? String(contentsOf: Self.specificationFile, encoding: .utf8) else {
            Issue.record("\(Self.specificationFile.path) is missing or unreadable")
            return
        }
        for vector in try ProtocolVectors.make() {
            #expect(text.contains("`\(vector.name)`"), "docs/protocol.md does not name the vector `\(vector.name)`")
        }
        #expect(text.contains(Self.writeVariable), "docs/protocol.md does not say how to regenerate the vectors")
    }

    /// The `client-frames` inputs in the file are all it takes: read back field by field (each one required, so a
    /// field left out of the inputs fails here, as the ping's round trip once was), they encode to the vector's
    /// plaintext.
    @Test func theClientFramesInputsInTheFileMakeItsPlaintext() throws {
        let text = try String(contentsOf: Self.vectorsFile, encoding: .utf8)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let vector = try #require((document["vectors"] as? [[String: Any]])?.first { $0["name"] as? String == "client-frames" })
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let fields = try #require(inputs["message"] as? [String: Any])
        func field<Value>(_ object: [String: Any], _ name: String, as type: Value.Type = Value.self) throws -> Value {
            try #require(object[name] as? Value, "client-frames inputs: no \(name)")
        }
        func integer(_ object: [String: Any], _ name: String) throws -> Int64 { try field(object, name, as: NSNumber.self).int64Value }
        var message = LinkClientMessage()
        let table = try field(fields, "padTable", as: [String: Any].self)
        message.padTable = (UInt32(try integer(table, "version")), try field(table, "pads", as: [[String: Any]].self).map { pad in
            let virtual = try field(pad, "virtualKind", as: String.self)
            return LinkPadDescription(
                slot: UInt8(try integer(pad, "slot")), fingerprint: Fingerprint(rawValue: try field(pad, "id")),
                kind: try field(pad, "kind"), requestedVirtualKind: virtual == "any" ? nil : VirtualPadKind(rawValue: virtual),
                attached: try field(pad, "attached"), name: try field(pad, "name"),
                continuesNumbering: try field(pad, "continuesNumbering"))
        })
        let ping = try field(fields, "ping", as: [String: Any].self)
        message.ping = LinkPing(
            clockMicroseconds: UInt64(try integer(ping, "clockMicroseconds")), hostSent: UInt32(try integer(ping, "hostSent")),
            receivedWhenHostCounted: UInt32(try integer(ping, "receivedWhenHostCounted")),
            roundTripMicroseconds: UInt32(try integer(ping, "roundTripMicroseconds")))
        message.wantsAcknowledgement = try field(fields, "wantsAcknowledgement")
        message.feedbackAcknowledgements = try field(fields, "feedbackAcknowledgements", as: [[String: Any]].self).map { item in
            (slot: UInt8(try integer(item, "slot")), version: UInt32(try integer(item, "version")))
        }
        message.inputs = try field(fields, "blocks", as: [[String: Any]].self).map { block in
            LinkInputBlock(
                slot: UInt8(try integer(block, "slot")), base: UInt32(try integer(block, "base")),
                continues: try field(block, "continues"),
                frames: try field(block, "frames", as: [[String: Any]].self).map { frame in
                    // Each snapshot as the file gives its bytes (its fields are checked by the vector itself).
                    let bytes = try #require(HexBytes.decode(try field(frame, "encoded", as: String.self)))
                    return LinkFrame(sequence: UInt32(try integer(frame, "sequence")), snapshot: try LinkSnapshotCodec.decode(bytes))
                })
        }
        let outputs = try field(vector, "outputs", as: [String: Any].self)
        #expect(HexBytes.encode(message.encoded) == (try field(outputs, "plaintext", as: String.self)))
        #expect(try LinkClientMessage(decoding: message.encoded).ping == message.ping)
        #expect(message.ping?.roundTripMicroseconds != 0, "the vector's round trip is 0: a reader cannot see where it lies")
    }

    /// Section 8.1 names the kind words `ControllerKind` has, and its table of refusals is in the code's words.
    @Test func theSpecificationsKindWordsAndRefusalsAreTheCodes() throws {
        let text = try String(contentsOf: Self.specificationFile, encoding: .utf8)
        let words = ControllerKind.allCases.map { "`\($0.rawValue)`" }.joined(separator: ", ")
        #expect(text.contains("**case counts**: \(words) (`ControllerKind`)"), "section 8.1 should list \(words)")
        let refusals: [(id: String, kind: String, nameBytes: Int)] = [
            ("aa:bb:cc", "xbox360", 3), ("ab12", "x-box", 3), ("ab12", "DUALSENSE", 3), ("ab12", "xbox360", 60),
        ]
        for refusal in refusals {
            var bytes: [UInt8] = [LinkClientMessage.version, 1, 1, 0, 0, 0, 1, 0]
            for word in [refusal.id, refusal.kind] { bytes += [UInt8(word.utf8.count)] + Array(word.utf8) }
            bytes += [0, 1, UInt8(refusal.nameBytes)] + [UInt8](repeating: 0x6E, count: refusal.nameBytes) + [0, 0]
            let reason = try #require(try LinkClientMessage(decoding: bytes).padTable?.pads.first?.refusal)
            #expect(text.contains("| `\(reason)` |"), "section 8.1's table of refusals lacks `\(reason)`")
        }
    }

    /// The lines of the vector `name` in a rendered document: from its name to its closing brace.
    static func lines(ofVector name: String, in lines: [String]) -> Range<Int>? {
        guard let start = lines.firstIndex(of: "      \"name\": \"\(name)\",") else { return nil }
        guard let end = lines[start...].firstIndex(where: { $0 == "    }" || $0 == "    }," }) else { return nil }
        return start..<end
    }

    /// Where two lists of lines first differ (the shorter one's end when one begins the other).
    static func firstDifference(_ first: [String], _ second: [String]) -> Int {
        (0..<min(first.count, second.count)).first { first[$0] != second[$0] } ?? min(first.count, second.count)
    }

    /// Two differing lines as a failure shows them: whole when short, else from a little before their first
    /// differing character (a line of hex is long), with that column.
    static func excerpts(_ file: String?, _ code: String?) -> (file: String, code: String) {
        guard let file, let code else { return (file ?? "(ends here)", code ?? "(ends here)") }
        let fileCharacters = Array(file), codeCharacters = Array(code)
        let column = (0..<min(fileCharacters.count, codeCharacters.count)).first { fileCharacters[$0] != codeCharacters[$0] }
            ?? min(fileCharacters.count, codeCharacters.count)
        let start = max(0, column - 40)
        func excerpt(_ characters: [Character]) -> String {
            let end = min(characters.count, start + 120)
            return (start > 0 ? "..." : "") + String(characters[start..<max(start, end)]) + (end < characters.count ? "..." : "")
        }
        let note = file.count > 120 || code.count > 120 ? " (column \(column + 1))" : ""
        return (excerpt(fileCharacters) + note, excerpt(codeCharacters) + note)
    }
}

/// Why a vector could not be made: padbridge's code did not do what the protocol says it does.
struct ProtocolVectorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private func required<Value>(_ value: Value?, _ what: String) throws -> Value {
    guard let value else { throw ProtocolVectorError(what) }
    return value
}

/// The vectors: their fixed inputs, and what padbridge's code makes of them.
enum ProtocolVectors {
    // The inputs. Private keys are X25519 scalars as stored (RFC 7748 clamps them when used); drawn once at random.
    static let hostStaticPrivateKey = "ddf8aec274fb7d07d519456988e99662d43c54afb0758253cdd5729546b8783e"
    static let clientStaticPrivateKey = "a123290df433bb4ea9d8f68036af7f8c7cdea8f8dfae9aaa2bf268ac05de3b1e"
    static let hostPairingEphemeralPrivateKey = "a3cc49b39522425c1995226a58c4e58861fccae6aca1cd6628a422314ef97bd9"
    static let clientPairingEphemeralPrivateKey = "b478dc789b1289a78415ca1a23a21732cd102181ed4f16cda7b5d66a5bd9e81c"
    static let hostLinkEphemeralPrivateKey = "2cf291f917dc209e487514085a9f2c92e822b7bba8671e7235b381de3502a01b"
    static let clientLinkEphemeralPrivateKey = "f7e7553f9a920c790f0493919daf869c8e1c67efd71e390e4bff488c39f60079"
    /// The random bytes a host draws for its pairing code (`LinkEndpointDefaults.newPairingCode`: 16, of which 75 bits
    /// are used).
    static let codeRandomBytes = "7cceeea5a24e46c80088f791b11df5c0"
    static let hostName = "living room"
    static let clientName = "deck"
    /// A host's cookie for the client's address, as a host under load gives it (opaque to the client).
    static let pairingCookie = "548d97a671f982b932855d8ecd122969f7bba2a520f666dfcee1b6b09424b396"
    static let linkCookie = "7d8beebe650ad31f2219318f5178cfadee5685cf7d9667f6da47b4ae75db4ffd"
    static let linkCookieNonce = "3ae5b83e4ff25d870abf45e5"
    static let clientIndex: UInt32 = 0x1A2B_3C4D
    static let hostIndex: UInt32 = 0x5E6F_7081
    /// 2026-01-01T00:00:00Z in µs since the Unix epoch.
    static let wallClockMicroseconds: UInt64 = 1_767_225_600_000_000
    static let clientCounter: UInt64 = 258
    static let hostCounter: UInt64 = 97
    static let pingMicroseconds: UInt64 = 5_000_123
    /// The ping's counts: the host's last pong said it had sent 96 datagrams, and 95 of them had come; the client's
    /// smoothed round trip is 1,850 µs.
    static let ping = LinkPing(
        clockMicroseconds: pingMicroseconds, hostSent: 96, receivedWhenHostCounted: 95, roundTripMicroseconds: 1_850)

    struct Vector {
        var name: String
        var fields: [(String, OrderedJSON)]
    }

    static func bytes(_ hex: String) -> [UInt8] { HexBytes.decode(hex)! }
    static func key(_ hex: String) throws -> Curve25519.KeyAgreement.PrivateKey {
        try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes(hex))
    }
    static func publicKey(_ key: Curve25519.KeyAgreement.PrivateKey) -> [UInt8] { Array(key.publicKey.rawRepresentation) }
    static func hex(_ bytes: some Sequence<UInt8>) -> OrderedJSON { .string(HexBytes.encode(bytes)) }
    static func datagram(_ from: String, _ kind: String, _ bytes: [UInt8]) -> OrderedJSON {
        .object([("from", .string(from)), ("kind", .string(kind)), ("length", .integer(Int64(bytes.count))), ("hex", hex(bytes))])
    }

    static func document(_ vectors: [Vector]) -> OrderedJSON {
        .object([
            ("about", .string(
                "Test vectors of padbridge's network link, specified in docs/protocol.md. Made by padbridge's own code "
                    + "from the inputs given with each vector (Tests/PadNetTests/ProtocolVectorsTests.swift checks that "
                    + "it still makes exactly these bytes). Do not edit by hand.")),
            ("regenerate", .string(ProtocolVectorsTests.regenerate)),
            ("conventions", .string(
                "Bytes are lowercase hex. Private keys are X25519 scalars as stored (clamped when used, RFC 7748); "
                    + "public keys are X25519 u-coordinates. Integers on the wire are little-endian unless "
                    + "docs/protocol.md says otherwise. Every vector uses the same two static keys.")),
            ("vectors", .array(vectors.map { vector in .object([("name", .string(vector.name))] + vector.fields) })),
        ])
    }

    static func make() throws -> [Vector] {
        let pairing = try makePairing()
        let handshake = try makeLinkHandshake()
        return [
            pairing.vector, try makePairingCookie(firstMessage: pairing.firstMessage), handshake.vector,
            try makeLinkCookieReply(initiation: handshake.initiation), try makeClientFrames(handshake.client, handshake.host),
            try makeHostReply(handshake.host, handshake.client),
        ]
    }

    // MARK: Pairing

    static func makePairing() throws -> (vector: Vector, firstMessage: [UInt8]) {
        let hostStatic = try key(hostStaticPrivateKey)
        let clientStatic = try key(clientStaticPrivateKey)
        let hostEphemeral = try key(hostPairingEphemeralPrivateKey)
        let clientEphemeral = try key(clientPairingEphemeralPrivateKey)
        let code = try required(PairingCode(randomBytes: bytes(codeRandomBytes)), "no pairing code from 16 random bytes")
        // As a person may type it: lower case, the letter O for the digit 0.
        let typed = code.description.lowercased().replacingOccurrences(of: "0", with: "o")
        let typedCode = try required(PairingCode(typed: typed), "the typed code \"\(typed)\" is refused")
        guard typedCode == code else { throw ProtocolVectorError("\"\(typed)\" reads as \(typedCode), not \(code)") }

        var responder = PairingResponder(identity: hostStatic, hostName: hostName)
        responder.open(code, atMicroseconds: 0)
        responder.nextExchangeEphemeral = hostEphemeral
        var initiator = try PairingInitiator(
            code: typedCode, identity: clientStatic, clientName: clientName, ephemeral: clientEphemeral)
        let clientAddress = try SocketAddress.resolve("192.0.2.10:40000", defaultPort: 1)[0]
        let first = try initiator.start()
        let (responseBytes, _) = responder.handle(
            try required(PairingDatagram(first), "the first message does not decode"), from: clientAddress,
            atMicroseconds: 1_000, accept: { _ in })
        let response = try required(responseBytes, "the host did not answer the first message")
        guard case let .send(confirmation) = initiator.receive(try required(PairingDatagram(response), "response")) else {
            throw ProtocolVectorError("the client did not confirm the host's response")
        }
        var accepted: PairedClient?
        let (pairedBytes, _) = responder.handle(
            try required(PairingDatagram(confirmation), "the confirmation does not decode"), from: clientAddress,
            atMicroseconds: 2_000, accept: { accepted = $0 })
        let paired = try required(pairedBytes, "the host did not answer the confirmation")
        let hostPublic = try required(LinkPublicKey(bytes: publicKey(hostStatic)), "host key")
        guard initiator.receive(try required(PairingDatagram(paired), "paired")) == .paired(hostPublic, hostName: hostName),
            accepted == PairedClient(key: LinkPublicKey(bytes: publicKey(clientStatic))!, name: clientName)
        else { throw ProtocolVectorError("the pairing did not complete on both sides") }

        // The same handshake through PadNoise alone, for its hash and transport keys (and as a check of the datagrams).
        let presharedKey = PairingHandshake.presharedKey(code)
        var noise = try NoiseHandshake(
            pattern: .XXpsk3, role: .initiator, prologue: PairingHandshake.prologue, localStatic: clientStatic,
            presharedKey: presharedKey, ephemeral: clientEphemeral)
        let padding = PairingDatagram.minimumInitiationSize - 1 - 32 - 16 - PairingDatagram.macSize
        guard try noise.writeMessage(payload: [UInt8](repeating: 0, count: padding)) == Array(first[1..<(first.count - 32)]),
            try noise.readMessage(response.dropFirst()) == PairingHandshake.namePayload(hostName),
            try noise.writeMessage(payload: PairingHandshake.namePayload(clientName)) == Array(confirmation.dropFirst())
        else { throw ProtocolVectorError("PadNoise's XXpsk3 and the pairing datagrams disagree") }
        let keys = try noise.split()

        let vector = Vector(name: "pairing", fields: [
            ("description", .string(
                "A whole pairing (Noise_XXpsk3_25519_ChaChaPoly_SHA256, prologue \"padbridge pair 2\"): the host's "
                    + "code from its random bytes, the code as typed, the pre-shared key, and every datagram both "
                    + "ways. The host is not under load, so the first message's mac2 is zeros.")),
            ("inputs", .object([
                ("codeRandomBytes", .string(codeRandomBytes)),
                ("codeAsTyped", .string(typed)),
                ("hostStaticPrivateKey", .string(hostStaticPrivateKey)),
                ("hostEphemeralPrivateKey", .string(hostPairingEphemeralPrivateKey)),
                ("hostName", .string(hostName)),
                ("clientStaticPrivateKey", .string(clientStaticPrivateKey)),
                ("clientEphemeralPrivateKey", .string(clientPairingEphemeralPrivateKey)),
                ("clientName", .string(clientName)),
            ])),
            ("outputs", .object([
                ("code", .string(code.description)),
                ("codeKeyMaterial", hex(code.keyMaterial)),
                ("presharedKey", hex(presharedKey)),
                ("hostStaticPublicKey", hex(publicKey(hostStatic))),
                ("hostKeyFingerprint", .string(hostPublic.fingerprint)),
                ("hostEphemeralPublicKey", hex(publicKey(hostEphemeral))),
                ("clientStaticPublicKey", hex(publicKey(clientStatic))),
                ("clientEphemeralPublicKey", hex(publicKey(clientEphemeral))),
                ("handshakeHash", hex(noise.handshakeHash)),
                ("clientToHostKey", hex(keys.sending.key)),
                ("hostToClientKey", hex(keys.receiving.key)),
                ("datagrams", .array([
                    datagram("client", "0x50 first message", first),
                    datagram("host", "0x51 response", response),
                    datagram("client", "0x52 confirmation", confirmation),
                    datagram("host", "0x53 paired", paired),
                ])),
            ])),
        ])
        return (vector, first)
    }

    static func makePairingCookie(firstMessage: [UInt8]) throws -> Vector {
        var initiator = try PairingInitiator(
            code: PairingCode(randomBytes: bytes(codeRandomBytes))!, identity: try key(clientStaticPrivateKey),
            clientName: clientName, ephemeral: try key(clientPairingEphemeralPrivateKey))
        guard try initiator.start() == firstMessage else { throw ProtocolVectorError("the first message is not repeatable") }
        let beforeMac2 = Array(firstMessage.dropLast(PairingDatagram.macSize))
        let cookie = bytes(pairingCookie)
        let digest = PairingDatagram.digest(ofFirstMessage: beforeMac2)
        let cookieReply = PairingDatagram.cookieReply(digest: digest, cookie: cookie).encoded
        guard case let .send(again) = initiator.receive(try required(PairingDatagram(cookieReply), "cookie reply")) else {
            throw ProtocolVectorError("the client did not send its first message again with the cookie")
        }
        let mac2 = Array(again.suffix(PairingDatagram.macSize))
        guard Array(again.dropLast(PairingDatagram.macSize)) == beforeMac2,
            mac2 == AddressCookies.mac2(cookie: cookie, over: beforeMac2)
        else { throw ProtocolVectorError("the first message sent again is not the first with the cookie's mac2") }
        return Vector(name: "pairing-cookie", fields: [
            ("description", .string(
                "A host under load asks the first message of `pairing` to prove the client's address: its cookie "
                    + "reply, and the first message sent again with mac2 = HMAC-SHA256(cookie, the datagram before "
                    + "mac2). The client's inputs are those of `pairing`.")),
            ("inputs", .object([("cookie", .string(pairingCookie))])),
            ("outputs", .object([
                ("firstMessageDigest", hex(digest)),
                ("mac2", hex(mac2)),
                ("datagrams", .array([
                    datagram("client", "0x50 first message", firstMessage),
                    datagram("host", "0x55 cookie reply", cookieReply),
                    datagram("client", "0x50 first message with mac2", again),
                ])),
            ])),
        ])
    }

    // MARK: The link's handshake

    static func makeLinkHandshake() throws
        -> (vector: Vector, initiation: [UInt8], client: LinkSessionKeys, host: LinkSessionKeys)
    {
        let hostStatic = try key(hostStaticPrivateKey)
        let clientStatic = try key(clientStaticPrivateKey)
        let hostEphemeral = try key(hostLinkEphemeralPrivateKey)
        let clientEphemeral = try key(clientLinkEphemeralPrivateKey)
        let hostPublic = LinkPublicKey(bytes: publicKey(hostStatic))!
        let clientPublic = LinkPublicKey(bytes: publicKey(clientStatic))!
        var client = try LinkClientHandshake(
            identity: clientStatic, hostKey: hostPublic, wallClockMicroseconds: wallClockMicroseconds, cookie: nil,
            localIndex: clientIndex, ephemeral: clientEphemeral)
        let initiation = client.initiation
        let macs = LinkInitiationMACs(hostKey: hostPublic)
        guard macs.hasValidMac1(initiation) else { throw ProtocolVectorError("the initiation's mac1 is not the host's") }
        let answer = try required(
            LinkHostHandshake.respond(
                to: try required(LinkDatagram(initiation), "the initiation does not decode"), identity: hostStatic,
                accepts: { key, clock in key == clientPublic && clock == wallClockMicroseconds }, localIndex: hostIndex,
                ephemeral: hostEphemeral),
            "the host did not answer the initiation")
        let clientSession = try required(
            client.complete(with: try required(LinkDatagram(answer.response), "response")),
            "the client did not complete the handshake")

        var noise = try NoiseHandshake(
            pattern: .IK, role: .initiator, prologue: LinkDatagram.prologue, localStatic: clientStatic,
            remoteStatic: hostPublic.bytes, ephemeral: clientEphemeral)
        let clock = (0..<8).map { UInt8(truncatingIfNeeded: wallClockMicroseconds >> (8 * UInt64($0))) }
        guard try noise.writeMessage(payload: clock) == Array(initiation[5..<109]),
            try noise.readMessage(answer.response.dropFirst(9)) == []
        else { throw ProtocolVectorError("PadNoise's IK and the link's datagrams disagree") }
        let keys = try noise.split()
        guard keys.sending.key == clientSession.keys.sending.key, keys.receiving.key == clientSession.keys.receiving.key,
            answer.session.keys.receiving.key == keys.sending.key, answer.session.keys.sending.key == keys.receiving.key
        else { throw ProtocolVectorError("the two sides' transport keys disagree") }

        let vector = Vector(name: "link-handshake", fields: [
            ("description", .string(
                "A session's handshake (Noise_IK_25519_ChaChaPoly_SHA256, prologue \"padbridge link 6\") between the "
                    + "two machines `pairing` paired: the initiation (its payload the client's wall clock; mac2 zeros, "
                    + "the host not under load), the response, and the transport keys.")),
            ("inputs", .object([
                ("hostStaticPrivateKey", .string(hostStaticPrivateKey)),
                ("hostEphemeralPrivateKey", .string(hostLinkEphemeralPrivateKey)),
                ("hostIndex", .integer(Int64(hostIndex))),
                ("clientStaticPrivateKey", .string(clientStaticPrivateKey)),
                ("clientEphemeralPrivateKey", .string(clientLinkEphemeralPrivateKey)),
                ("clientIndex", .integer(Int64(clientIndex))),
                ("wallClockMicroseconds", .integer(Int64(wallClockMicroseconds))),
            ])),
            ("outputs", .object([
                ("hostStaticPublicKey", hex(hostPublic.bytes)),
                ("hostEphemeralPublicKey", hex(publicKey(hostEphemeral))),
                ("clientStaticPublicKey", hex(clientPublic.bytes)),
                ("clientEphemeralPublicKey", hex(publicKey(clientEphemeral))),
                ("mac1Key", hex(SHA256.hash(data: Array("padbridge link 6 mac1".utf8) + hostPublic.bytes))),
                ("mac1", hex(initiation[LinkInitiationMACs.mac1Offset..<LinkInitiationMACs.mac2Offset])),
                ("handshakeHash", hex(noise.handshakeHash)),
                ("clientToHostKey", hex(keys.sending.key)),
                ("hostToClientKey", hex(keys.receiving.key)),
                ("datagrams", .array([
                    datagram("client", "0x01 initiation", initiation),
                    datagram("host", "0x02 response", answer.response),
                ])),
            ])),
        ])
        return (vector, initiation, clientSession, answer.session)
    }

    static func makeLinkCookieReply(initiation: [UInt8]) throws -> Vector {
        let hostPublic = LinkPublicKey(bytes: publicKey(try key(hostStaticPrivateKey)))!
        let cookie = bytes(linkCookie)
        let macs = LinkInitiationMACs(hostKey: hostPublic)
        let reply = try required(
            macs.cookieReply(cookie, to: initiation, nonce: try ChaChaPoly.Nonce(data: bytes(linkCookieNonce))),
            "no cookie reply")
        var client = try LinkClientHandshake(
            identity: try key(clientStaticPrivateKey), hostKey: hostPublic, wallClockMicroseconds: wallClockMicroseconds,
            cookie: nil, localIndex: clientIndex, ephemeral: try key(clientLinkEphemeralPrivateKey))
        guard client.initiation == initiation, client.takeCookie(from: try required(LinkDatagram(reply), "cookie reply")),
            client.cookie == cookie
        else { throw ProtocolVectorError("the client did not take the cookie") }
        let again = client.initiation
        let mac2 = Array(again[LinkInitiationMACs.mac2Offset...])
        guard Array(again[..<LinkInitiationMACs.mac2Offset]) == Array(initiation[..<LinkInitiationMACs.mac2Offset]),
            mac2 == AddressCookies.mac2(cookie: cookie, over: Array(again[..<LinkInitiationMACs.mac2Offset]))
        else { throw ProtocolVectorError("the initiation sent again is not the first with the cookie's mac2") }
        return Vector(name: "link-cookie-reply", fields: [
            ("description", .string(
                "A host under load answers the initiation of `link-handshake` with a cookie reply; the client opens "
                    + "the cookie and sends the same initiation again with mac2 = HMAC-SHA256(cookie, the datagram "
                    + "before mac2).")),
            ("inputs", .object([("cookie", .string(linkCookie)), ("nonce", .string(linkCookieNonce))])),
            ("outputs", .object([
                ("cookieKey", hex(SHA256.hash(data: Array("padbridge link 6 cookie".utf8) + hostPublic.bytes))),
                ("mac2", hex(mac2)),
                ("datagrams", .array([
                    datagram("client", "0x01 initiation", initiation),
                    datagram("host", "0x04 cookie reply", reply),
                    datagram("client", "0x01 initiation with mac2", again),
                ])),
            ])),
        ])
    }

    // MARK: Transport

    static func makeClientFrames(_ clientSession: LinkSessionKeys, _ hostSession: LinkSessionKeys) throws -> Vector {
        var sealing = clientSession
        var opening = hostSession
        let dualSense = LinkPadDescription(
            slot: 0, fingerprint: Fingerprint(rawValue: "3f2a9c01d4e7"), kind: ControllerKind.dualSense.rawValue,
            requestedVirtualKind: nil, attached: true, name: "DualSense Wireless Controller")
        let xbox = LinkPadDescription(
            slot: 1, fingerprint: Fingerprint(rawValue: "b40e51a7c2d9"), kind: ControllerKind.xbox360.rawValue,
            requestedVirtualKind: .xbox360, attached: true, name: "Xbox 360 Controller", continuesNumbering: true)
        let touching = TouchContacts(first: TouchContact(trackingID: 5, active: true, x: 0.25, y: 0.75))
        // Slot 0: a press (cross) not yet acknowledged, then the newest frame; slot 1: its newest frame alone.
        let press = PadSnapshot(buttons: ButtonSet([.a]), leftX: -1200, leftY: 300, touches: touching)
        let newest = PadSnapshot(
            buttons: ButtonSet([.a]), leftX: -1180, leftY: 310, rightTrigger: 16384, touches: touching,
            motion: MotionSample(
                gyroRadiansPerSecond: Vector3(x: 0.5, y: -0.25, z: 0.125),
                accelMetersPerSecondSquared: Vector3(x: 0, y: 9.8125, z: -0.5), timestampMicroseconds: 123_456_789),
            battery: BatteryState(percent: 80, charging: true))
        let xboxFrame = PadSnapshot(
            buttons: ButtonSet([.start, .dpup]), leftX: 32767, leftY: -32768, rightX: 100, rightY: -100, leftTrigger: 255)
        var message = LinkClientMessage()
        message.padTable = (2, [dualSense, xbox])
        message.ping = ping
        message.wantsAcknowledgement = true
        message.feedbackAcknowledgements = [(slot: 0, version: 3)]
        message.inputs = [
            LinkInputBlock(slot: 0, base: 41, frames: [LinkFrame(sequence: 42, snapshot: press), LinkFrame(sequence: 43, snapshot: newest)]),
            LinkInputBlock(slot: 1, base: 7, frames: [LinkFrame(sequence: 8, snapshot: xboxFrame)]),
        ]
        let plaintext = message.encoded
        guard plaintext.count <= LinkClientMessage.maximumEncodedSize, try LinkClientMessage(decoding: plaintext) == message
        else { throw ProtocolVectorError("the client message does not decode to itself") }
        sealing.nextCounter = clientCounter
        let sealed = try sealing.seal(plaintext)
        guard case let .transport(receiver, counter, ciphertext)? = LinkDatagram(sealed), receiver == hostIndex,
            counter == clientCounter, opening.open(counter: counter, ciphertext: ciphertext) == plaintext
        else { throw ProtocolVectorError("the host does not open the client's datagram") }

        let table: OrderedJSON = .object([
            ("version", .integer(2)),
            ("pads", .array([dualSense, xbox].map { pad in
                .object([
                    ("slot", .integer(Int64(pad.slot))),
                    ("id", .string(pad.fingerprint.rawValue)),
                    ("kind", .string(pad.kind)),
                    ("virtualKind", .string(pad.requestedVirtualKind?.rawValue ?? "any")),
                    ("attached", .bool(pad.attached)),
                    ("continuesNumbering", .bool(pad.continuesNumbering)),
                    ("name", .string(pad.name)),
                ])
            })),
        ])
        let blocks: OrderedJSON = .array(message.inputs.map { block in
            .object([
                ("slot", .integer(Int64(block.slot))),
                ("base", .integer(Int64(block.base))),
                ("continues", .bool(block.continues)),
                ("frames", .array(block.frames.map { frame in
                    .object([
                        ("sequence", .integer(Int64(frame.sequence))),
                        ("snapshot", json(frame.snapshot)),
                        ("encoded", hex(LinkSnapshotCodec.encode(frame.snapshot))),
                    ])
                })),
            ])
        })
        return Vector(name: "client-frames", fields: [
            ("description", .string(
                "A client's transport datagram in the session of `link-handshake`, sealed with the client-to-host "
                    + "key: a pad table of two pads (a second pad was plugged in: version 2), a ping (with the host's "
                    + "sent count from its last pong, 96, of which 95 came, and the client's round trip, 1,850 µs), a feedback "
                    + "acknowledgement and both pads' frames (slot 0: an unacknowledged press and the newest frame; "
                    + "slot 1: its newest frame).")),
            ("inputs", .object([
                ("counter", .integer(Int64(clientCounter))),
                ("receiverIndex", .integer(Int64(hostIndex))),
                ("message", .object([
                    ("padTable", table),
                    ("ping", .object([
                        ("clockMicroseconds", .integer(Int64(ping.clockMicroseconds))),
                        ("hostSent", .integer(Int64(ping.hostSent))),
                        ("receivedWhenHostCounted", .integer(Int64(ping.receivedWhenHostCounted))),
                        ("roundTripMicroseconds", .integer(Int64(ping.roundTripMicroseconds))),
                    ])),
                    ("wantsAcknowledgement", .bool(message.wantsAcknowledgement)),
                    ("feedbackAcknowledgements", .array(message.feedbackAcknowledgements.map { item in
                        .object([("slot", .integer(Int64(item.slot))), ("version", .integer(Int64(item.version)))])
                    })),
                    ("blocks", blocks),
                ])),
            ])),
            ("outputs", .object([
                ("plaintext", hex(plaintext)),
                ("datagram", datagram("client", "0x03 transport", sealed)),
            ])),
        ])
    }

    static func makeHostReply(_ hostSession: LinkSessionKeys, _ clientSession: LinkSessionKeys) throws -> Vector {
        var sealing = hostSession
        var opening = clientSession
        let lights = Feedback(
            rumble: Rumble(strong: 1, weak: 0.25), lightbar: LightbarColor(red: 0, green: 64, blue: 255),
            playerLeds: 0b00100, micLed: true, rightTrigger: try .weapon(startZone: 2, endZone: 5, strength: 8))
        let rumble = Feedback(rumble: Rumble(strong: 0.5, weak: 0))
        var message = LinkHostMessage()
        message.padTableAcknowledgement = 2
        message.pong = (echoedMicroseconds: pingMicroseconds, receivedDatagrams: 259, sentDatagrams: 98)
        message.inputAcknowledgements = [(slot: 0, applied: 43), (slot: 1, applied: 8)]
        message.feedback = [(slot: 0, version: 4, state: lights), (slot: 1, version: 1, state: rumble)]
        let plaintext = message.encoded
        guard let decoded = try? LinkHostMessage(decoding: plaintext), decoded.encoded == plaintext else {
            throw ProtocolVectorError("the host message does not decode to itself")
        }
        sealing.nextCounter = hostCounter
        let sealed = try sealing.seal(plaintext)
        guard case let .transport(receiver, counter, ciphertext)? = LinkDatagram(sealed), receiver == clientIndex,
            counter == hostCounter, opening.open(counter: counter, ciphertext: ciphertext) == plaintext
        else { throw ProtocolVectorError("the client does not open the host's datagram") }

        return Vector(name: "host-reply", fields: [
            ("description", .string(
                "The host's answer to `client-frames`, sealed with the host-to-client key: the pad table "
                    + "acknowledged, the pong (the ping echoed, with the host's datagram counts), both pads' frames "
                    + "acknowledged, and feedback for both (slot 0: rumble, lightbar, player LEDs, mic LED and a right "
                    + "trigger effect; slot 1: rumble alone).")),
            ("inputs", .object([
                ("counter", .integer(Int64(hostCounter))),
                ("receiverIndex", .integer(Int64(clientIndex))),
                ("message", .object([
                    ("padTableAcknowledgement", .integer(2)),
                    ("pong", .object([
                        ("echoedMicroseconds", .integer(Int64(pingMicroseconds))),
                        ("receivedDatagrams", .integer(259)),
                        ("sentDatagrams", .integer(98)),
                    ])),
                    ("takenOver", .bool(false)),
                    ("revoked", .bool(false)),
                    ("inputAcknowledgements", .array(message.inputAcknowledgements.map { item in
                        .object([("slot", .integer(Int64(item.slot))), ("applied", .integer(Int64(item.applied)))])
                    })),
                    ("feedback", .array(message.feedback.map { item in
                        .object([
                            ("slot", .integer(Int64(item.slot))),
                            ("version", .integer(Int64(item.version))),
                            ("state", json(item.state)),
                        ])
                    })),
                    ("notForwarded", .array([])),
                ])),
            ])),
            ("outputs", .object([
                ("plaintext", hex(plaintext)),
                ("datagram", datagram("host", "0x03 transport", sealed)),
            ])),
        ])
    }

    // MARK: Values as JSON

    static func json(_ snapshot: PadSnapshot) -> OrderedJSON {
        let motion = snapshot.motion
        return .object([
            ("buttons", .array(snapshot.buttons.pressed.map { .string($0.rawValue) })),
            ("buttonBits", .integer(Int64(snapshot.buttons.rawValue))),
            ("leftX", .integer(Int64(snapshot.leftX))),
            ("leftY", .integer(Int64(snapshot.leftY))),
            ("rightX", .integer(Int64(snapshot.rightX))),
            ("rightY", .integer(Int64(snapshot.rightY))),
            ("leftTrigger", .integer(Int64(snapshot.leftTrigger))),
            ("rightTrigger", .integer(Int64(snapshot.rightTrigger))),
            ("touches", snapshot.touches == TouchContacts() ? .null : .array((0..<TouchContacts.count).map { index in
                let contact = snapshot.touches[index]
                return .object([
                    ("active", .bool(contact.active)), ("trackingID", .integer(Int64(contact.trackingID))),
                    ("x", .number(contact.x)), ("y", .number(contact.y)),
                ])
            })),
            ("motion", motion == .still ? .null : .object([
                ("gyroRadiansPerSecond", .array([motion.gyroRadiansPerSecond.x, motion.gyroRadiansPerSecond.y, motion.gyroRadiansPerSecond.z].map(OrderedJSON.number))),
                ("accelMetersPerSecondSquared", .array([motion.accelMetersPerSecondSquared.x, motion.accelMetersPerSecondSquared.y, motion.accelMetersPerSecondSquared.z].map(OrderedJSON.number))),
                ("timestampMicroseconds", .integer(Int64(motion.timestampMicroseconds))),
            ])),
            ("battery", snapshot.battery == .unknown ? .null : .object([
                ("percent", .integer(Int64(snapshot.battery.percent))), ("charging", .bool(snapshot.battery.charging)),
            ])),
        ])
    }

    static func json(_ feedback: Feedback) -> OrderedJSON {
        .object([
            ("parts", .integer(Int64(FeedbackParts(of: feedback).rawValue))),
            ("rumble", feedback.rumble.map { rumble in
                .object([("strong", .number(rumble.strong)), ("weak", .number(rumble.weak))])
            } ?? .null),
            ("lightbar", feedback.lightbar.map { color in
                .object([
                    ("red", .integer(Int64(color.red))), ("green", .integer(Int64(color.green))),
                    ("blue", .integer(Int64(color.blue))),
                ])
            } ?? .null),
            ("playerLeds", feedback.playerLeds.map { .integer(Int64($0)) } ?? .null),
            ("micLed", feedback.micLed.map(OrderedJSON.bool) ?? .null),
            ("leftTriggerBlock", feedback.leftTrigger.map { effect in hex((0..<TriggerEffectBlock.count).map { effect.block[$0] }) } ?? .null),
            ("rightTriggerBlock", feedback.rightTrigger.map { effect in hex((0..<TriggerEffectBlock.count).map { effect.block[$0] }) } ?? .null),
        ])
    }
}

/// A JSON value whose objects keep their keys in the order given (the vectors file is read by people too), rendered
/// always the same way: two spaces of indentation, one member or element a line.
indirect enum OrderedJSON {
    case object([(String, OrderedJSON)])
    case array([OrderedJSON])
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null

    func rendered() -> String {
        var text = ""
        render(into: &text, indent: 0)
        return text + "\n"
    }

    private func render(into text: inout String, indent: Int) {
        let inner = String(repeating: " ", count: indent + 2)
        switch self {
        case let .object(members):
            guard !members.isEmpty else { return text += "{}" }
            text += "{\n"
            for (index, (key, value)) in members.enumerated() {
                text += inner + Self.quoted(key) + ": "
                value.render(into: &text, indent: indent + 2)
                text += index == members.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "}"
        case let .array(elements):
            guard !elements.isEmpty else { return text += "[]" }
            text += "[\n"
            for (index, element) in elements.enumerated() {
                text += inner
                element.render(into: &text, indent: indent + 2)
                text += index == elements.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "]"
        case let .string(value): text += Self.quoted(value)
        case let .integer(value): text += String(value)
        case let .number(value): text += value.isFinite ? "\(value)" : "null"
        case let .bool(value): text += value ? "true" : "false"
        case .null: text += "null"
        }
    }

    private static func quoted(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20:
                let digits = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
