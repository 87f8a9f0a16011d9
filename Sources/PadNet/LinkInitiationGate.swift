public import Crypto
public import PadCore

/// An initiation's MACs (WireGuard's mac1, with HMAC-SHA256 where WireGuard has keyed BLAKE2s: swift-crypto has
/// no BLAKE2):
/// - mac1 = HMAC-SHA256(SHA-256("padbridge link 3 mac1" | the host's public key), the datagram before mac1). Only
///   a machine that knows the host's public key can make it (its paired clients: pairing is how a client learns
///   it), and a host checks it with one HMAC, in constant time, before any public-key work.
/// - mac2 = zeros (see `LinkInitiationGate`).
public struct LinkInitiationMACs: Sendable {
    private let mac1Key: SymmetricKey

    public init(hostKey: LinkPublicKey) {
        mac1Key = SymmetricKey(data: SHA256.hash(data: Array("padbridge link 3 mac1".utf8) + hostKey.bytes))
    }

    /// Where mac1 starts in an initiation (it covers everything before), and mac2.
    static let mac1Offset = 1 + 4 + LinkDatagram.initiationHandshakeSize
    static let mac2Offset = mac1Offset + LinkDatagram.macSize

    /// The initiation datagram carrying `handshake` (IK's first message), its MACs filled in.
    public func initiation(senderIndex: UInt32, handshake: [UInt8]) -> [UInt8] {
        let covered = [0x01] + LinkDatagram.u32(senderIndex) + handshake
        return covered + Array(HMAC<SHA256>.authenticationCode(for: covered, using: mac1Key))
            + [UInt8](repeating: 0, count: LinkDatagram.macSize)
    }

    /// Whether `datagram` is an initiation whose mac1 is this host's: swift-crypto's constant-time comparison.
    public func hasValidMac1(_ datagram: [UInt8]) -> Bool {
        guard datagram.count == LinkDatagram.initiationSize else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            datagram[Self.mac1Offset..<Self.mac2Offset], authenticating: datagram[0..<Self.mac1Offset], using: mac1Key)
    }
}

/// What a host checks of an initiation before any public-key work (a Curve25519 operation costs a thousand times
/// an HMAC), cheapest first: its length (the decoder), then its mac1. Junk, forgeries and initiations made for
/// another host's key stop there. Pure (the time comes in), so it is tested without sockets.
struct LinkInitiationGate {
    private let macs: LinkInitiationMACs

    init(hostKey: LinkPublicKey) { macs = LinkInitiationMACs(hostKey: hostKey) }

    enum Verdict: Sendable, Equatable {
        /// Do the public-key work (and answer if the handshake is a paired client's).
        case answer
        /// Nothing: why, for the dropped count.
        case drop(String)
    }

    mutating func check(_ datagram: [UInt8], from address: SocketAddress, atMicroseconds now: UInt64) -> Verdict {
        guard macs.hasValidMac1(datagram) else {
            return .drop("a handshake not made for this host's key (junk, a forgery, or a client paired with another host)")
        }
        return .answer
    }
}
