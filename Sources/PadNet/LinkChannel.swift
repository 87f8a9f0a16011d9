public import Crypto
public import PadCore
public import PadNoise

/// The link's outer datagrams (after pairing): a Noise `IK` handshake, then transport messages. WireGuard's shape:
///
/// ```
/// 0x01 initiation   | u32 sender index | IK message 1 (104 bytes: -> e, es, s, ss; payload: u64 the client's wall
///                     clock, µs) | mac1 (32) | mac2 (32)                                              173 bytes
/// 0x02 response     | u32 sender index | u32 receiver index | IK message 2 (<- e, ee, se)
/// 0x03 transport    | u32 receiver index | u64 counter | ChaCha20-Poly1305(message), the 13-byte header authenticated
/// 0x04 cookie reply | u32 receiver index | nonce (12) | the host's cookie for the client's address, sealed (48)
/// ```
/// Indexes are random per session, so a datagram finds its session without revealing who sent it. mac1 proves the
/// sender knows the host's public key (only paired clients do) and is checked before any public-key work; mac2 is
/// zeros, or proves the sender's address with the cookie a host under load asked for (`LinkInitiationMACs`).
/// Decoding is total.
public enum LinkDatagram: Sendable, Hashable {
    /// A link datagram's first byte, its type (WireGuard's `message_type`). Pairing's datagrams have types of their
    /// own (`PairingDatagram.firstByte`), outside these.
    public enum MessageType: UInt8, Sendable {
        case initiation = 0x01
        case response = 0x02
        case transport = 0x03
        case cookieReply = 0x04
    }


    case initiation(senderIndex: UInt32, handshake: [UInt8], mac1: [UInt8], mac2: [UInt8])
    case response(senderIndex: UInt32, receiverIndex: UInt32, handshake: [UInt8])
    case transport(receiverIndex: UInt32, counter: UInt64, ciphertext: [UInt8])
    case cookieReply(receiverIndex: UInt32, nonce: [UInt8], sealedCookie: [UInt8])

    /// Bumped with every change of the handshake's datagrams (3 added the initiation's MACs) and with every new message
    /// version (5 came with messages 4: four rumble motors, more virtual kinds).
    public static let prologue = Array("padbridge link 6".utf8)
    /// IK's first message with its 8-byte payload: e (32), s sealed (48), the clock sealed (24).
    public static let initiationHandshakeSize = 104
    public static let macSize = 32
    /// An initiation, whole: every other length is not one.
    public static let initiationSize = 1 + 4 + initiationHandshakeSize + 2 * macSize
    /// A cookie reply, whole: smaller than the initiation it answers.
    public static let cookieReplySize = 1 + 4 + 12 + macSize + 16
    /// The largest datagram either side sends (a transport datagram carries at most
    /// `LinkClientMessage.maximumEncodedSize` bytes of message): never fragmented, even over IPv6.
    public static let maximumSize = 1_200
    static let transportHeaderSize = 13

    public init?(_ bytes: some Collection<UInt8>) {
        var reader = LinkByteReader(Array(bytes))
        do throws(LinkDecodingError) {
            switch MessageType(rawValue: try reader.u8()) {
            case .initiation:
                guard bytes.count == Self.initiationSize else { return nil }
                self = .initiation(
                    senderIndex: try reader.u32(), handshake: Array(try reader.take(Self.initiationHandshakeSize)),
                    mac1: Array(try reader.take(Self.macSize)), mac2: Array(try reader.take(Self.macSize)))
            case .response:
                let sender = try reader.u32()
                self = .response(senderIndex: sender, receiverIndex: try reader.u32(), handshake: Array(reader.rest()))
            case .transport:
                let receiver = try reader.u32()
                let counter = try reader.u64()
                guard reader.remaining >= 16 else { return nil }  // not even a tag
                self = .transport(receiverIndex: receiver, counter: counter, ciphertext: Array(reader.rest()))
            case .cookieReply:
                guard bytes.count == Self.cookieReplySize else { return nil }
                self = .cookieReply(
                    receiverIndex: try reader.u32(), nonce: Array(try reader.take(12)), sealedCookie: Array(reader.rest()))
            case nil:
                return nil
            }
        } catch {
            return nil
        }
    }

    public var encoded: [UInt8] {
        switch self {
        case let .initiation(sender, handshake, mac1, mac2):
            [MessageType.initiation.rawValue] + Self.u32(sender) + handshake + mac1 + mac2
        case let .response(sender, receiver, handshake):
            [MessageType.response.rawValue] + Self.u32(sender) + Self.u32(receiver) + handshake
        case let .transport(receiver, counter, ciphertext): Self.transportHeader(receiver, counter) + ciphertext
        case let .cookieReply(receiver, nonce, sealed): [MessageType.cookieReply.rawValue] + Self.u32(receiver) + nonce + sealed
        }
    }

    static func transportHeader(_ receiver: UInt32, _ counter: UInt64) -> [UInt8] {
        var writer = LinkByteWriter()
        writer.u8(MessageType.transport.rawValue)
        writer.u32(receiver)
        writer.u64(counter)
        return writer.bytes
    }

    static func u32(_ value: UInt32) -> [UInt8] {
        var writer = LinkByteWriter()
        writer.u32(value)
        return writer.bytes
    }
}

extension LinkDatagram {
    /// A transport datagram's receiver index and counter, read where it lies (nil: not a transport datagram).
    public static func transportHeader(of bytes: UnsafeRawBufferPointer) -> (receiverIndex: UInt32, counter: UInt64)? {
        guard bytes.count >= transportHeaderSize + 16, bytes[0] == MessageType.transport.rawValue else { return nil }
        var index: UInt32 = 0
        for shift in 0..<4 { index |= UInt32(bytes[1 + shift]) << (8 * UInt32(shift)) }
        var counter: UInt64 = 0
        for shift in 0..<8 { counter |= UInt64(bytes[5 + shift]) << (8 * UInt64(shift)) }
        return (index, counter)
    }
}

/// An established session's keys: seals with a counter never reused, opens through the replay window. The
/// per-datagram calls (`seal(_:into:)`, `open(datagram:into:)`) write into buffers the caller keeps and allocate
/// nothing.
public struct LinkSessionKeys: Sendable {
    public let localIndex: UInt32
    public let remoteIndex: UInt32
    let keys: NoiseTransportKeys
    /// The counter the next datagram is sealed with: 0 for a new session (internal, not private: the protocol
    /// vectors of docs/protocol-vectors.json seal at a counter further on).
    var nextCounter: UInt64 = 0
    private var window = ReplayWindow()

    init(localIndex: UInt32, remoteIndex: UInt32, keys: NoiseTransportKeys) {
        self.localIndex = localIndex
        self.remoteIndex = remoteIndex
        self.keys = keys
    }

    /// Makes `datagram` (its capacity reused) the transport datagram carrying `plaintext`: the 13-byte header, the
    /// ciphertext, the tag.
    public mutating func seal(_ plaintext: [UInt8], into datagram: inout [UInt8]) throws(NoiseError) {
        let counter = nextCounter
        nextCounter += 1
        let end = LinkDatagram.transportHeaderSize + plaintext.count
        // Sized in one step and then written whole, in place: the header, the plaintext, the tag (appending byte by
        // byte checked the buffer's uniqueness 29 times a seal; refilling it with zeros cost ~200 instructions).
        let size = end + 16
        if datagram.count > size {
            datagram.removeLast(datagram.count - size)
        } else if datagram.count < size {
            datagram.append(contentsOf: repeatElement(0, count: size - datagram.count))
        }
        let sending = keys.sending
        let remoteIndex = remoteIndex
        let outcome: Result<Void, NoiseError> = datagram.withUnsafeMutableBytes { bytes in
            bytes[0] = LinkDatagram.MessageType.transport.rawValue
            bytes.storeBytes(of: remoteIndex.littleEndian, toByteOffset: 1, as: UInt32.self)
            bytes.storeBytes(of: counter.littleEndian, toByteOffset: 5, as: UInt64.self)
            plaintext.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: bytes[LinkDatagram.transportHeaderSize..<end]).copyMemory(from: $0) }
            return Result { () throws(NoiseError) in
                try sending.seal(
                    inPlace: UnsafeMutableRawBufferPointer(rebasing: bytes[LinkDatagram.transportHeaderSize..<end]),
                    tag: UnsafeMutableRawBufferPointer(rebasing: bytes[end...]), counter: counter,
                    associatedData: UnsafeRawBufferPointer(rebasing: bytes[0..<LinkDatagram.transportHeaderSize]))
            }
        }
        try outcome.get()
    }

    /// A transport datagram carrying `plaintext`.
    public mutating func seal(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        var datagram: [UInt8] = []
        try seal(plaintext, into: &datagram)
        return datagram
    }

    /// Opens a whole transport datagram of this session into `plaintext` (its capacity reused); false for a replay,
    /// a forgery, a corrupted datagram or another session's.
    public mutating func open(datagram: UnsafeRawBufferPointer, into plaintext: inout [UInt8]) -> Bool {
        guard let (index, counter) = LinkDatagram.transportHeader(of: datagram), index == localIndex,
            window.check(counter)
        else { return false }
        let tagStart = datagram.count - 16
        plaintext.removeAll(keepingCapacity: true)
        plaintext.append(contentsOf: UnsafeRawBufferPointer(rebasing: datagram[LinkDatagram.transportHeaderSize..<tagStart]))
        let receiving = keys.receiving
        let opened: Bool = plaintext.withUnsafeMutableBytes { bytes in
            (try? receiving.open(
                inPlace: bytes, tag: UnsafeRawBufferPointer(rebasing: datagram[tagStart...]), counter: counter,
                associatedData: UnsafeRawBufferPointer(rebasing: datagram[0..<LinkDatagram.transportHeaderSize]))) != nil
        }
        guard opened else { return false }
        window.accept(counter)
        return true
    }

    /// The plaintext of a transport datagram for this session; nil for a replay, a forgery or a corrupted one.
    public mutating func open(counter: UInt64, ciphertext: [UInt8]) -> [UInt8]? {
        let datagram = LinkDatagram.transportHeader(localIndex, counter) + ciphertext
        var plaintext: [UInt8] = []
        let opened = datagram.withUnsafeBytes { open(datagram: $0, into: &plaintext) }
        return opened ? plaintext : nil
    }
}

/// The client's side of a session: the IK initiation (it knows the host's pinned key), then the keys.
public struct LinkClientHandshake {
    public let localIndex: UInt32
    private var handshake: NoiseHandshake
    private let macs: LinkInitiationMACs
    private let message: [UInt8]
    /// The datagram to send (again, unchanged, until the host answers or asks for a cookie).
    public private(set) var initiation: [UInt8]
    /// The host's cookie for this client's address that the initiation carries (its mac2), if any.
    public private(set) var cookie: [UInt8]?

    /// `wallClockMicroseconds` goes in the encrypted payload: the host accepts each client's initiations only with
    /// a growing clock, so a captured initiation replayed later opens no session (WireGuard's TAI64N timestamp).
    /// `cookie`: the one a host under load gave this client lately (it proves the client's address at once).
    public init(
        identity: Curve25519.KeyAgreement.PrivateKey, hostKey: LinkPublicKey, wallClockMicroseconds: UInt64,
        cookie: [UInt8]? = nil
    ) throws(NoiseError) {
        try self.init(
            identity: identity, hostKey: hostKey, wallClockMicroseconds: wallClockMicroseconds, cookie: cookie,
            localIndex: UInt32.random(in: 1...UInt32.max), ephemeral: nil)
    }

    /// `localIndex` and `ephemeral` fixed: only the protocol vectors (docs/protocol-vectors.json) give them; the
    /// public initializer draws a random index and a fresh ephemeral key.
    init(
        identity: Curve25519.KeyAgreement.PrivateKey, hostKey: LinkPublicKey, wallClockMicroseconds: UInt64,
        cookie: [UInt8]?, localIndex: UInt32, ephemeral: Curve25519.KeyAgreement.PrivateKey?
    ) throws(NoiseError) {
        self.localIndex = localIndex
        handshake = try NoiseHandshake(
            pattern: .IK, role: .initiator, prologue: LinkDatagram.prologue, localStatic: identity,
            remoteStatic: hostKey.bytes, ephemeral: ephemeral)
        macs = LinkInitiationMACs(hostKey: hostKey)
        let clock = (0..<8).map { UInt8(truncatingIfNeeded: wallClockMicroseconds >> (8 * UInt64($0))) }
        message = try handshake.writeMessage(payload: clock)
        self.cookie = cookie
        initiation = macs.initiation(senderIndex: localIndex, handshake: message, cookie: cookie)
    }

    /// A host under load answered this initiation with a cookie: the initiation now carries it (send it again).
    /// False for anything else: another handshake's cookie reply, a forgery, the same cookie again.
    public mutating func takeCookie(from datagram: LinkDatagram) -> Bool {
        guard case let .cookieReply(receiver, nonce, sealed) = datagram, receiver == localIndex,
            let cookie = macs.openCookie(nonce: nonce, sealedCookie: sealed, answering: initiation), cookie != self.cookie
        else { return false }
        self.cookie = cookie
        initiation = macs.initiation(senderIndex: localIndex, handshake: message, cookie: cookie)
        return true
    }

    /// The session, if `datagram` is the host's response to this initiation.
    public mutating func complete(with datagram: LinkDatagram) -> LinkSessionKeys? {
        guard case let .response(sender, receiver, message) = datagram, receiver == localIndex,
            (try? handshake.readMessage(message)) != nil, let keys = try? handshake.split()
        else { return nil }
        return LinkSessionKeys(localIndex: localIndex, remoteIndex: sender, keys: keys)
    }
}

/// The host's side: answers an initiation from a paired client. Returns the response datagram, the client's key
/// and the session; nil for anything else (an unpaired key, a replayed initiation, a forgery, garbage). Public-key
/// work: a host checks the initiation's MACs first (`LinkInitiationGate`).
public enum LinkHostHandshake {
    /// `accepts(client, clock)`: whether the client is paired and `clock` is later than its last initiation's.
    public static func respond(
        to datagram: LinkDatagram, identity: Curve25519.KeyAgreement.PrivateKey,
        accepts: (LinkPublicKey, _ wallClockMicroseconds: UInt64) -> Bool
    ) -> (response: [UInt8], client: LinkPublicKey, session: LinkSessionKeys)? {
        respond(
            to: datagram, identity: identity, accepts: accepts, localIndex: UInt32.random(in: 1...UInt32.max),
            ephemeral: nil)
    }

    /// `localIndex` and `ephemeral` fixed: only the protocol vectors (docs/protocol-vectors.json) give them; the
    /// public function draws a random index and a fresh ephemeral key.
    static func respond(
        to datagram: LinkDatagram, identity: Curve25519.KeyAgreement.PrivateKey,
        accepts: (LinkPublicKey, _ wallClockMicroseconds: UInt64) -> Bool, localIndex: UInt32,
        ephemeral: Curve25519.KeyAgreement.PrivateKey?
    ) -> (response: [UInt8], client: LinkPublicKey, session: LinkSessionKeys)? {
        guard case let .initiation(sender, message, _, _) = datagram,
            var handshake = try? NoiseHandshake(
                pattern: .IK, role: .responder, prologue: LinkDatagram.prologue, localStatic: identity,
                ephemeral: ephemeral),
            let payload = try? handshake.readMessage(message), payload.count == 8,
            let remote = handshake.remoteStaticPublicKey, let client = LinkPublicKey(bytes: remote),
            accepts(client, payload.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }),
            let response = try? handshake.writeMessage(), let keys = try? handshake.split()
        else { return nil }
        return (
            LinkDatagram.response(senderIndex: localIndex, receiverIndex: sender, handshake: response).encoded, client,
            LinkSessionKeys(localIndex: localIndex, remoteIndex: sender, keys: keys)
        )
    }
}
