import Crypto
import PadNoise
import PadTestSupport
import Testing


@Suite struct NoisePropertyTests {
    static func pair(_ pattern: NoisePattern, initiatorPSK: [UInt8]? = nil, responderPSK: [UInt8]? = nil,
                     responderKnown: Curve25519.KeyAgreement.PrivateKey? = nil) throws
        -> (NoiseHandshake, NoiseHandshake, Curve25519.KeyAgreement.PrivateKey, Curve25519.KeyAgreement.PrivateKey)
    {
        let initiatorStatic = Curve25519.KeyAgreement.PrivateKey()
        let responderStatic = Curve25519.KeyAgreement.PrivateKey()
        let known = responderKnown ?? responderStatic
        let psk = [UInt8](repeating: 7, count: 32)
        let initiator = try NoiseHandshake(
            pattern: pattern, role: .initiator, prologue: Array("padbridge test".utf8), localStatic: initiatorStatic,
            remoteStatic: pattern == .IK ? Array(known.publicKey.rawRepresentation) : nil,
            presharedKey: pattern == .XXpsk3 ? (initiatorPSK ?? psk) : nil)
        let responder = try NoiseHandshake(
            pattern: pattern, role: .responder, prologue: Array("padbridge test".utf8), localStatic: responderStatic,
            presharedKey: pattern == .XXpsk3 ? (responderPSK ?? psk) : nil)
        return (initiator, responder, initiatorStatic, responderStatic)
    }

    /// Runs the handshake to the end; returns the first error.
    static func run(_ initiator: inout NoiseHandshake, _ responder: inout NoiseHandshake, flipping: (Int, Int)? = nil)
        throws(NoiseError)
    {
        var index = 0
        while !initiator.isComplete || !responder.isComplete {
            let initiatorWrites = index % 2 == 0
            var message = initiatorWrites ? try initiator.writeMessage(payload: [1, 2]) : try responder.writeMessage()
            if let (which, bit) = flipping, which == index { message[bit / 8 % message.count] ^= 1 << UInt8(bit % 8) }
            _ = initiatorWrites ? try responder.readMessage(message) : try initiator.readMessage(message)
            index += 1
        }
    }

    @Test(arguments: [NoisePattern.IK, .XXpsk3, .NN])
    func bothSidesAgreeAndLearnEachOthersStaticKey(pattern: NoisePattern) throws {
        var (initiator, responder, initiatorStatic, responderStatic) = try Self.pair(pattern)
        try Self.run(&initiator, &responder)
        #expect(initiator.handshakeHash == responder.handshakeHash)
        let a = try initiator.split()
        let b = try responder.split()
        let sealed = try a.sending.seal([9, 8, 7], counter: 41, associatedData: [1])
        #expect(try b.receiving.open(sealed, counter: 41, associatedData: [1]) == [9, 8, 7])
        #expect(throws: NoiseError.authenticationFailed) { try b.receiving.open(sealed, counter: 42, associatedData: [1]) }
        #expect(throws: NoiseError.authenticationFailed) { try b.receiving.open(sealed, counter: 41, associatedData: [2]) }
        #expect(throws: NoiseError.authenticationFailed) { try a.receiving.open(sealed, counter: 41, associatedData: [1]) }
        #expect(throws: NoiseError.counterExhausted) { try a.sending.seal([], counter: .max) }
        if pattern != .NN {
            #expect(responder.remoteStaticPublicKey == Array(initiatorStatic.publicKey.rawRepresentation))
            #expect(initiator.remoteStaticPublicKey == Array(responderStatic.publicKey.rawRepresentation))
        }
    }

    @Test(arguments: [NoisePattern.IK, .XXpsk3])
    func aFlippedBitAnywhereFailsTheHandshake(pattern: NoisePattern) throws {
        var generator = SplitMix64(seed: 0xF11B)
        for message in 0..<(pattern == .IK ? 2 : 3) {
            for _ in 0..<40 {
                var (initiator, responder, _, _) = try Self.pair(pattern)
                let bit = Int.random(in: 0..<2000, using: &generator)
                #expect(throws: NoiseError.self) { try Self.run(&initiator, &responder, flipping: (message, bit)) }
            }
        }
    }

    @Test func aWrongPairingCodeFailsAtTheLastMessage() throws {
        var (initiator, responder, _, _) = try Self.pair(.XXpsk3, initiatorPSK: [UInt8](repeating: 8, count: 32))
        let error = #expect(throws: NoiseError.self) { try Self.run(&initiator, &responder) }
        #expect(error == .presharedKeyMismatch, "its static key authenticated, the payload did not: the code differs")
        #expect(!responder.isComplete)
        // The last message's static key decrypted before its payload failed: a failed message leaves none behind.
        #expect(responder.remoteStaticPublicKey == nil)
        #expect(throws: NoiseError.failedEarlier) { _ = try responder.readMessage([]) }
    }

    /// A last message that is junk (its static key does not even authenticate) is not a wrong code.
    @Test func aJunkLastMessageIsNotAWrongCode() throws {
        var (initiator, responder, _, _) = try Self.pair(.XXpsk3)
        _ = try responder.readMessage(try initiator.writeMessage())
        _ = try initiator.readMessage(try responder.writeMessage())
        #expect(throws: NoiseError.authenticationFailed) { _ = try responder.readMessage([UInt8](repeating: 3, count: 80)) }
    }

    @Test func anIKInitiatorWithTheWrongHostKeyFails() throws {
        var (initiator, responder, _, _) = try Self.pair(.IK, responderKnown: Curve25519.KeyAgreement.PrivateKey())
        #expect(throws: NoiseError.authenticationFailed) { try Self.run(&initiator, &responder) }
    }

    @Test func outOfTurnAndMissingKeysAreTypedErrors() throws {
        var (initiator, responder, _, _) = try Self.pair(.IK)
        #expect(throws: NoiseError.outOfTurn) { _ = try responder.writeMessage() }
        #expect(throws: NoiseError.outOfTurn) { _ = try initiator.readMessage([UInt8](repeating: 0, count: 100)) }
        #expect(throws: NoiseError.outOfTurn) { _ = try initiator.split() }
        #expect(throws: NoiseError.missingKey("the responder's static public key")) {
            _ = try NoiseHandshake(pattern: .IK, role: .initiator, localStatic: Curve25519.KeyAgreement.PrivateKey())
        }
        #expect(throws: NoiseError.missingKey("a 32-byte pre-shared key")) {
            _ = try NoiseHandshake(pattern: .XXpsk3, role: .responder, localStatic: Curve25519.KeyAgreement.PrivateKey())
        }
    }

    /// Total: random bytes of every length into every reading state give a typed error, never a trap (with a key
    /// in play, nothing random authenticates).
    @Test(arguments: [NoisePattern.IK, .XXpsk3])
    func randomBytesNeverTrap(pattern: NoisePattern) throws {
        var generator = SplitMix64(seed: 0xBAD_B17E5)
        for length in 0...300 {
            let noise = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var (initiator, responder, _, _) = try Self.pair(pattern)
            #expect(throws: NoiseError.self) { _ = try responder.readMessage(noise) }
            _ = try initiator.writeMessage()
            #expect(throws: NoiseError.self) { _ = try initiator.readMessage(noise) }
        }
    }

    /// The count tests rely on to show that junk costs no public-key work: each side of IK does five X25519
    /// operations (its ephemeral key, then es, ss / ee, se on one side and es, ss, ee, se on the other), XXpsk3 four
    /// a side; handshakes outside the scope count nothing.
    @Test(arguments: [(NoisePattern.IK, 10), (.XXpsk3, 8)])
    func publicKeyOperationsAreCountedWhereAsked(pattern: NoisePattern, expected: Int) throws {
        let operations = NoisePublicKeyOperations()
        try NoisePublicKeyOperations.$current.withValue(operations) {
            var (initiator, responder, _, _) = try Self.pair(pattern)
            try Self.run(&initiator, &responder)
        }
        #expect(operations.performed == expected)
        var (initiator, responder, _, _) = try Self.pair(pattern)
        try Self.run(&initiator, &responder)
        #expect(operations.performed == expected, "outside the scope")
    }
}
