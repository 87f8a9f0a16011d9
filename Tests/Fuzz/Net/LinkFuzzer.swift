// libFuzzer entry point for the network path's handshake decoders: what an unauthenticated sender controls on a
// host or a client. Built by scripts/fuzz (second harness) as the package's `padbridge-link-fuzzer` product, which
// exists only when PADBRIDGE_FUZZ is set, with every Swift module instrumented. Besides "never traps", it checks:
//   * an outer link datagram that decodes encodes to bytes that decode to the same value;
//   * a host answers no initiation built from fuzz bytes (it cannot carry a valid Noise IK message 1), and finds no
//     valid mac1 on one (so it would not even do the public-key work);
//   * a client waiting for its host's response takes none built from fuzz bytes, nor a cookie from a fuzzed cookie
//     reply;
//   * a pairing host with an open window pairs no client from fuzz bytes, and a pairing client waiting for the
//     host's response pairs with none.
import Crypto
import PadCore
import PadNet
import PadNoise

let hostIdentity = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x42, count: 32))
let clientIdentity = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x17, count: 32))
let hostKey = LinkPublicKey(bytes: hostIdentity.publicKey.rawRepresentation)!
let pairingCode = PairingCode(randomBytes: [UInt8](repeating: 0x5A, count: 10))!
let clientAddress = try! SocketAddress.resolve("127.0.0.1:48100", defaultPort: 48100)[0]
let initiationMACs = LinkInitiationMACs(hostKey: hostKey)

@_cdecl("LLVMFuzzerTestOneInput")
public func linkFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))

    if let datagram = LinkDatagram(bytes) {
        precondition(LinkDatagram(datagram.encoded) == datagram, "LinkDatagram round trip")
        precondition(LinkHostHandshake.respond(to: datagram, identity: hostIdentity, accepts: { _, _ in true }) == nil,
                     "a host answered a fuzzed initiation")
    }
    precondition(!initiationMACs.hasValidMac1(bytes), "a fuzzed initiation with a valid mac1")
    // The same bytes as the handshake part of an initiation, and of a response addressed to a waiting client.
    precondition(LinkHostHandshake.respond(
        to: .initiation(senderIndex: 1, handshake: bytes, mac1: [], mac2: []), identity: hostIdentity,
        accepts: { _, _ in true }) == nil,
        "a host answered a fuzzed initiation")
    var client = try! LinkClientHandshake(identity: clientIdentity, hostKey: hostKey, wallClockMicroseconds: 1)
    precondition(client.complete(with: .response(senderIndex: 1, receiverIndex: client.localIndex, handshake: bytes)) == nil,
                 "a client took a fuzzed response")
    for cookieReply in [LinkDatagram(bytes), LinkDatagram([0x04] + (0..<4).map { UInt8(truncatingIfNeeded: client.localIndex >> (8 * UInt32($0))) } + bytes)] {
        if let cookieReply { precondition(!client.takeCookie(from: cookieReply), "a client took a fuzzed cookie") }
    }

    var responder = PairingResponder(identity: hostIdentity, hostName: "fuzz host")
    responder.open(pairingCode, atMicroseconds: 0)
    for datagram in [PairingDatagram(bytes), PairingDatagram.initiation(bytes)].compactMap({ $0 }) {
        let (_, event) = responder.handle(datagram, from: clientAddress, atMicroseconds: 1, accept: { _ in })
        if case .paired = event { preconditionFailure("a pairing host paired a fuzzed client") }
    }
    var initiator = try! PairingInitiator(code: pairingCode, identity: clientIdentity, clientName: "fuzz client")
    _ = try! initiator.start()
    for datagram in [PairingDatagram(bytes), PairingDatagram.response(bytes), PairingDatagram([0x55] + bytes)].compactMap({ $0 }) {
        switch initiator.receive(datagram) {
        case .paired: preconditionFailure("a pairing client paired with fuzz")
        case .send where !initiator.awaitingConfirmation: preconditionFailure("a pairing client took a fuzzed cookie")
        default: break
        }
    }
    return 0
}

// SwiftPM links an executable's entry point as `<module>_main`; libFuzzer's own `main` is then never pulled in,
// so the entry point hands the arguments to libFuzzer's driver itself.
@_silgen_name("LLVMFuzzerRunDriver")
func fuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_cdecl("padbridge_link_fuzzer_main")
public func linkFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return fuzzerRunDriver(&count, &arguments, linkFuzzOneInput)
}
