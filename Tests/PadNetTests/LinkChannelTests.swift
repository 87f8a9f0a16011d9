import Crypto
import PadCore
import PadNet
import PadNetLinux
import PadTestSupport
import Testing

@Suite struct LinkChannelTests {
    @Test func datagramsHaveTheirDocumentedBytes() {
        let transport = LinkDatagram.transport(receiverIndex: 0x0102_0304, counter: 5, ciphertext: [UInt8](repeating: 0xAA, count: 16))
        #expect(transport.encoded == [0x03, 0x04, 0x03, 0x02, 0x01, 5, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0xAA, count: 16))
        let handshake = [UInt8](repeating: 9, count: 104)
        let mac1 = [UInt8](repeating: 1, count: 32), mac2 = [UInt8](repeating: 2, count: 32)
        let initiation = LinkDatagram.initiation(senderIndex: 1, handshake: handshake, mac1: mac1, mac2: mac2).encoded
        #expect(initiation == [0x01, 1, 0, 0, 0] + handshake + mac1 + mac2 && initiation.count == LinkDatagram.initiationSize)
        #expect(LinkDatagram(initiation.dropLast()) == nil && LinkDatagram(initiation + [0]) == nil,
                "an initiation has one length")
        #expect(LinkDatagram([0x03, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] + [UInt8](repeating: 0, count: 15)) == nil,
                "a transport datagram without room for a tag")
    }

    /// Total: any bytes decode to a datagram (which encodes back to the same bytes) or to nothing.
    @Test func randomBytesNeverTrap() {
        var generator = SplitMix64(seed: 0xDA7A_6A41)
        for length in 0...200 {
            for _ in 0..<4 {
                var bytes = generator.bytes(length)
                if length > 0 { bytes[0] = UInt8.random(in: 0...4, using: &generator) }
                if let datagram = LinkDatagram(bytes) { #expect(datagram.encoded == bytes) }
            }
        }
    }

    @Test func aSessionOpensWhatItsPeerSealedOnceAndOnlyThat() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        let client = Curve25519.KeyAgreement.PrivateKey()
        let clientKey = LinkPublicKey(bytes: client.publicKey.rawRepresentation)!
        var handshake = try LinkClientHandshake(
            identity: client, hostKey: LinkPublicKey(bytes: host.publicKey.rawRepresentation)!, wallClockMicroseconds: 77)
        var clocks: [UInt64] = []
        let answer = try #require(LinkHostHandshake.respond(
            to: LinkDatagram(handshake.initiation)!, identity: host,
            accepts: { key, clock in
                clocks.append(clock)
                return key == clientKey
            }))
        #expect(clocks == [77] && answer.client == clientKey)
        let completed = handshake.complete(with: LinkDatagram(answer.response)!)
        var clientSession = try #require(completed)
        var hostSession = answer.session

        let sealed = try clientSession.seal([1, 2, 3])
        guard case let .transport(index, counter, ciphertext)? = LinkDatagram(sealed) else {
            Issue.record("not a transport datagram")
            return
        }
        #expect(index == hostSession.localIndex)
        #expect(hostSession.open(counter: counter, ciphertext: ciphertext) == [1, 2, 3])
        #expect(hostSession.open(counter: counter, ciphertext: ciphertext) == nil, "a replay")
        var forged = ciphertext
        forged[0] ^= 1
        #expect(hostSession.open(counter: counter + 1, ciphertext: forged) == nil, "a forgery")
        let back = try hostSession.seal([4])
        guard case let .transport(_, backCounter, backCiphertext)? = LinkDatagram(back) else { return }
        #expect(clientSession.open(counter: backCounter, ciphertext: backCiphertext) == [4])

        // One reused buffer, sealed into longer, shorter, equal and empty in turn (it is resized, not refilled):
        // each datagram is exactly header + plaintext + tag, and opens to its plaintext.
        var buffer: [UInt8] = []
        var plaintext: [UInt8] = []
        for length in [40, 5, 5, 0, 64, 1] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ length) }
            try clientSession.seal(message, into: &buffer)
            #expect(buffer.count == 13 + length + 16)
            let opened = buffer.withUnsafeBytes { hostSession.open(datagram: $0, into: &plaintext) }
            #expect(opened && plaintext == message, "a \(length)-byte message")
        }
    }

    @Test func anUnpairedClientOrAnOldClockGetsNoAnswer() throws {
        let host = Curve25519.KeyAgreement.PrivateKey()
        let hostKey = LinkPublicKey(bytes: host.publicKey.rawRepresentation)!
        let handshake = try LinkClientHandshake(identity: .init(), hostKey: hostKey, wallClockMicroseconds: 5)
        #expect(LinkHostHandshake.respond(to: LinkDatagram(handshake.initiation)!, identity: host, accepts: { _, _ in false })?.client == nil)
        // addressed to another host: the host cannot even read it
        let elsewhere = try LinkClientHandshake(
            identity: .init(), hostKey: LinkPublicKey(bytes: Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation)!,
            wallClockMicroseconds: 5)
        #expect(LinkHostHandshake.respond(to: LinkDatagram(elsewhere.initiation)!, identity: host, accepts: { _, _ in true })?.client == nil)
    }
}
