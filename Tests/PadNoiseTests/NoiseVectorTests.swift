import Crypto
import PadNoise
import Testing

/// One entry of the Noise project's published test vectors ("cacophony" vectors, as vendored at
/// plizonczyk/noiseprotocol `tests/vectors/cacophony.txt`; the same file ships with other Noise libraries).
struct NoiseVector: Sendable, CustomStringConvertible {
    var pattern: NoisePattern
    var prologue: String
    var presharedKey: String?
    var initiatorStatic: String
    var initiatorEphemeral: String
    var responderStatic: String
    var responderEphemeral: String
    var handshakeHash: String
    /// (payload, ciphertext) in order: the handshake messages, then transport messages; the sender alternates
    /// throughout, the initiator sending the even-numbered ones.
    var messages: [(String, String)]

    var description: String { pattern.protocolName }
}

func bytes(_ hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        result.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return result
}

func key(_ hex: String) throws -> Curve25519.KeyAgreement.PrivateKey {
    try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes(hex))
}

let cacophonyVectors: [NoiseVector] = [
    NoiseVector(
        pattern: .IK, prologue: "4a6f686e2047616c74", presharedKey: nil,
        initiatorStatic: "e61ef9919cde45dd5f82166404bd08e38bceb5dfdfded0a34c8df7ed542214d1",
        initiatorEphemeral: "893e28b9dc6ca8d611ab664754b8ceb7bac5117349a4439a6b0569da977c464a",
        responderStatic: "4a3acbfdb163dec651dfa3194dece676d437029c62a408b4c5ea9114246e4893",
        responderEphemeral: "bbdb4cdbd309f1a1f2e1456967fe288cadd6f712d65dc7b7793d5e63da6b375b",
        handshakeHash: "0b0f68fb0c27e03ce9b97565995ed4838cc0581b762ef72b062f6a546419fad7",
        messages: [
            ("4c756477696720766f6e204d69736573",
             "ca35def5ae56cec33dc2036731ab14896bc4c75dbb07a61f879f8e3afa4c7944718da798efbcd91528520204f904b9bd6c7413dccdc214d951e15253e39987f18146e8cd0873654207148333479d4d16c289f0294b29960a72f48e0b7bba2e89083169825e59642148d492020664ccf7"),
            ("4d757272617920526f746862617264",
             "95ebc60d2b1fa672c1f46a8aa265ef51bfe38e7ccb39ec5be34069f1448088435361e70b2ed446e6c9ec387d1d6b3b840f194e373979d241b203c4acafccf5"),
            ("462e20412e20486179656b", "050e9f3c8fac16b68dbce8f8c4bfbf6617c897f9ada4aa29aa19c8"),
            ("4361726c204d656e676572", "344233a6cabb7141d80f3da2fedc311d9646bbb0f505afe403a667"),
            ("4a65616e2d426170746973746520536179", "62cdeeb172ad7ade7aa7d9e069da5790f12331bfa00177787a1d0810c67dc3b2b4"),
            ("457567656e2042f6686d20766f6e2042617765726b",
             "029bead1b40992327044d409d9a1f3ad8f36c3c452775d557e18bbeb2e8dfcead32d514024"),
        ]),
    NoiseVector(
        pattern: .XXpsk3, prologue: "4a6f686e2047616c74",
        presharedKey: "54686973206973206d7920417573747269616e20706572737065637469766521",
        initiatorStatic: "e61ef9919cde45dd5f82166404bd08e38bceb5dfdfded0a34c8df7ed542214d1",
        initiatorEphemeral: "893e28b9dc6ca8d611ab664754b8ceb7bac5117349a4439a6b0569da977c464a",
        responderStatic: "4a3acbfdb163dec651dfa3194dece676d437029c62a408b4c5ea9114246e4893",
        responderEphemeral: "bbdb4cdbd309f1a1f2e1456967fe288cadd6f712d65dc7b7793d5e63da6b375b",
        handshakeHash: "a477edf6a131bbdb54707f6ea30eab6cd935d9b560f0e5fd1f053a95a99669fb",
        messages: [
            ("4c756477696720766f6e204d69736573",
             "ca35def5ae56cec33dc2036731ab14896bc4c75dbb07a61f879f8e3afa4c7944c9f5ff0e8079630cb7e270c20bbf480821b77a384a645c71a2fd9b3db1c16a5f"),
            ("4d757272617920526f746862617264",
             "95ebc60d2b1fa672c1f46a8aa265ef51bfe38e7ccb39ec5be34069f144808843b123def17f71e6ae8e57e0e1dec5949c5f7415c6f33517398747d821a06dc23ad430aa1fd7381d46195c378a819fd574425462cbb2d4ca339e738a0b7001dc91423fbf55a99af0c6f1df21012ceb2f"),
            ("462e20412e20486179656b",
             "52187316111b118d4c060364f7b975dc0809b2590779aff2d63113c564f11744493384db7bf32d5ae6686df6ab06d508d2e07caaf1d6afc010b978735fc78900e71ae1d314130d042e729a"),
            ("4361726c204d656e676572", "eaedc672d4c21e0e2955758756fb98f194c4e90d5deb5b6cf30b27"),
            ("4a65616e2d426170746973746520536179", "522d543c5fe799d09a3d9da7ff54d0dc03c8af1dc7751d2ff708339d2290943e98"),
            ("457567656e2042f6686d20766f6e2042617765726b",
             "7d4e2c3873eef6a213b04e72f9df60a91666072d3544c5d96c34a09e2329b5030bee796741"),
        ]),
]

@Suite struct NoiseVectorTests {
    @Test(arguments: cacophonyVectors)
    func handshakeAndTransportMatchThePublishedVectors(vector: NoiseVector) throws {
        let psk = vector.presharedKey.map(bytes)
        let responderStatic = try key(vector.responderStatic)
        var initiator = try NoiseHandshake(
            pattern: vector.pattern, role: .initiator, prologue: bytes(vector.prologue),
            localStatic: key(vector.initiatorStatic),
            remoteStatic: vector.pattern == .IK ? Array(responderStatic.publicKey.rawRepresentation) : nil,
            presharedKey: psk, ephemeral: key(vector.initiatorEphemeral))
        var responder = try NoiseHandshake(
            pattern: vector.pattern, role: .responder, prologue: bytes(vector.prologue), localStatic: responderStatic,
            presharedKey: psk, ephemeral: key(vector.responderEphemeral))
        let handshakeLength = vector.pattern == .IK ? 2 : 3
        for (index, (payload, ciphertext)) in vector.messages.prefix(handshakeLength).enumerated() {
            let initiatorWrites = index % 2 == 0
            let written =
                initiatorWrites
                ? try initiator.writeMessage(payload: bytes(payload)) : try responder.writeMessage(payload: bytes(payload))
            #expect(HexBytesForTests.encode(written) == ciphertext, "handshake message \(index)")
            let read = initiatorWrites ? try responder.readMessage(written) : try initiator.readMessage(written)
            #expect(read == bytes(payload))
        }
        #expect(initiator.isComplete && responder.isComplete)
        #expect(HexBytesForTests.encode(initiator.handshakeHash) == vector.handshakeHash)
        #expect(responder.handshakeHash == initiator.handshakeHash)
        #expect(responder.remoteStaticPublicKey == Array(try key(vector.initiatorStatic).publicKey.rawRepresentation))

        let initiatorKeys = try initiator.split()
        let responderKeys = try responder.split()
        var counters = (initiator: UInt64(0), responder: UInt64(0))
        // Messages keep alternating after the handshake: message i comes from the initiator when i is even.
        for (index, (payload, ciphertext)) in vector.messages.enumerated().dropFirst(handshakeLength) {
            let fromInitiator = index % 2 == 0
            let counter = fromInitiator ? counters.initiator : counters.responder
            let sealed = try (fromInitiator ? initiatorKeys : responderKeys).sending.seal(bytes(payload), counter: counter)
            #expect(HexBytesForTests.encode(sealed) == ciphertext, "transport message \(index)")
            let opened = try (fromInitiator ? responderKeys : initiatorKeys).receiving.open(sealed, counter: counter)
            #expect(opened == bytes(payload))
            if fromInitiator { counters.initiator += 1 } else { counters.responder += 1 }
        }
    }
}

enum HexBytesForTests {
    static func encode(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
