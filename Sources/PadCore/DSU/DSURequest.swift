/// One datagram a DSU client sent, decoded: who sent it (the id it picks at start) and what it asks.
public struct DSURequest: Sendable, Hashable {
    public var clientID: UInt32
    public var message: Message

    public enum Message: Sendable, Hashable {
        /// The highest protocol version the server speaks.
        case version
        /// A description of each of these slots (a client asks about at most four; slots past the fourth are left out).
        case portInfo(DSUSlotSet)
        /// Send this client the pads' data from now on (for the next few seconds: a client renews it).
        case padData(DSUPadSelection)
    }

    public init(clientID: UInt32, message: Message) {
        self.clientID = clientID
        self.message = message
    }
}

/// Which pads a pad-data request subscribes to.
public struct DSUPadSelection: Sendable, Hashable {
    /// The pad in this slot (flag 1), if asked.
    public var slot: UInt8?
    /// The pad with this MAC (flag 2), if asked.
    public var mac: DSUMACAddress?

    /// Neither: every pad.
    public init(slot: UInt8? = nil, mac: DSUMACAddress? = nil) {
        self.slot = slot
        self.mac = mac
    }

    public static let everyPad = DSUPadSelection()
    public var isEveryPad: Bool { slot == nil && mac == nil }
}

/// Why a datagram is not a DSU request padbridge answers. Each case is dropped without an answer.
public enum DSURequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer bytes than the header and message type, or than the header says follow it.
    case truncated(expected: Int, actual: Int)
    /// Not "DSUC" (a server's "DSUS", or not DSU at all).
    case notAClientMessage
    case unsupportedVersion(UInt16)
    case checksumMismatch(expected: UInt32, actual: UInt32)
    /// A message type this server does not serve (the unofficial motor and rumble messages among them).
    case unsupportedMessageType(UInt32)
    /// A port-info request asking about a negative number of ports, or more than four.
    case badPortCount(Int32)

    public var description: String {
        switch self {
        case let .truncated(expected, actual): "truncated: \(actual) bytes, expected \(expected)"
        case .notAClientMessage: "not a DSU client message (no DSUC magic)"
        case let .unsupportedVersion(version): "protocol version \(version), not 1001"
        case let .checksumMismatch(expected, actual):
            "CRC-32 mismatch: computed \(hex(expected)), the datagram says \(hex(actual))"
        case let .unsupportedMessageType(type): "message type \(hex(type)) is not served"
        case let .badPortCount(count): "a port-info request for \(count) ports (0 to 4 are possible)"
        }
    }

    private func hex(_ value: UInt32) -> String { "0x" + String(value, radix: 16) }
}

extension DSURequest {
    /// Decodes one datagram. Total: any bytes give a request or a `DSURequestError`, never a trap.
    ///
    /// As the protocol's description says: a datagram shorter than its header's length is dropped, one longer is cut
    /// to it (the CRC covers the header and the length it gives).
    public init(decoding datagram: UnsafeRawBufferPointer) throws(DSURequestError) {
        guard datagram.count >= DSUProtocol.minimumDatagramBytes else {
            throw .truncated(expected: DSUProtocol.minimumDatagramBytes, actual: datagram.count)
        }
        guard ReportBytes.loadUInt32(datagram, at: 0) == DSUProtocol.clientMagic else { throw .notAClientMessage }
        let version = ReportBytes.loadUInt16(datagram, at: 4)
        guard version == DSUProtocol.version else { throw .unsupportedVersion(version) }
        let length = DSUProtocol.headerBytes + Int(ReportBytes.loadUInt16(datagram, at: 6))
        guard length >= DSUProtocol.minimumDatagramBytes, datagram.count >= length else {
            throw .truncated(expected: max(length, DSUProtocol.minimumDatagramBytes), actual: datagram.count)
        }
        let bytes = UnsafeRawBufferPointer(rebasing: datagram[0..<length])
        let stored = ReportBytes.loadUInt32(bytes, at: 8)
        let computed = DSUChecksum.crc(bytes)
        guard stored == computed else { throw .checksumMismatch(expected: computed, actual: stored) }
        clientID = ReportBytes.loadUInt32(bytes, at: 12)
        let type = ReportBytes.loadUInt32(bytes, at: 16)
        let payload = UnsafeRawBufferPointer(rebasing: bytes[DSUProtocol.minimumDatagramBytes...])
        switch DSUMessageType(rawValue: type) {
        case .version:
            message = .version
        case .portInfo:
            guard payload.count >= 4 else { throw .truncated(expected: length + 4 - payload.count, actual: length) }
            let count = Int32(bitPattern: ReportBytes.loadUInt32(payload, at: 0))
            guard count >= 0 && count <= Int32(DSUProtocol.slotCount) else { throw .badPortCount(count) }
            guard payload.count >= 4 + Int(count) else {
                throw .truncated(expected: length + 4 + Int(count) - payload.count, actual: length)
            }
            var slots = DSUSlotSet()
            for index in 0..<Int(count) { slots.insert(Int(payload[4 + index])) }
            message = .portInfo(slots)
        case .padData:
            guard payload.count >= 8 else { throw .truncated(expected: length + 8 - payload.count, actual: length) }
            let flags = payload[0]
            var selection = DSUPadSelection()
            if flags & 1 != 0 { selection.slot = payload[1] }
            if flags & 2 != 0 {
                var mac: UInt64 = 0
                for index in 2..<8 { mac = mac << 8 | UInt64(payload[index]) }
                selection.mac = DSUMACAddress(rawValue: mac)
            }
            message = .padData(selection)
        case nil:
            throw .unsupportedMessageType(type)
        }
    }

    public init(decoding datagram: [UInt8]) throws(DSURequestError) {
        let decoded: Result<DSURequest, DSURequestError> = datagram.withUnsafeBytes { bytes in
            do throws(DSURequestError) { return .success(try DSURequest(decoding: bytes)) } catch { return .failure(error) }
        }
        self = try decoded.get()
    }

    /// The datagram a client sends for this request (for tests and the fuzzer's round trip): canonical, sealed.
    public func encoded() -> [UInt8] {
        var payload: [UInt8] = []
        let type: DSUMessageType
        switch message {
        case .version:
            type = .version
        case let .portInfo(slots):
            type = .portInfo
            let listed = Array(slots)
            payload = [UInt8(listed.count), 0, 0, 0] + listed.map { UInt8($0) }
        case let .padData(selection):
            type = .padData
            let mac = selection.mac?.rawValue ?? 0
            payload = [(selection.slot == nil ? 0 : 1) | (selection.mac == nil ? 0 : 2), selection.slot ?? 0]
                + (0..<6).map { UInt8(truncatingIfNeeded: mac >> (8 * (5 - $0))) }
        }
        var datagram = [UInt8](repeating: 0, count: DSUProtocol.minimumDatagramBytes + payload.count)
        datagram.withUnsafeMutableBytes { bytes in
            ReportBytes.storeUInt32(DSUProtocol.clientMagic, into: bytes, at: 0)
            ReportBytes.storeUInt16(DSUProtocol.version, into: bytes, at: 4)
            ReportBytes.storeUInt16(UInt16(bytes.count - DSUProtocol.headerBytes), into: bytes, at: 6)
            ReportBytes.storeUInt32(clientID, into: bytes, at: 12)
            ReportBytes.storeUInt32(type.rawValue, into: bytes, at: 16)
            for (index, byte) in payload.enumerated() { bytes[DSUProtocol.minimumDatagramBytes + index] = byte }
            DSUChecksum.seal(bytes)
        }
        return datagram
    }
}
