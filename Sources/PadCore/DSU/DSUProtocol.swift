/// The cemuhook ("DSU") protocol, version 1001, as emulators (Cemu, Dolphin, Citra's and Yuzu's successors, RPCS3)
/// speak it over UDP to read a pad's motion, buttons and sticks (https://v1993.github.io/cemuhook-protocol/).
///
/// Every datagram: a 16-byte header (magic "DSUC" from a client, "DSUS" from a server; u16 protocol version 1001;
/// u16 length of what follows the header; u32 CRC-32 (zlib's) of the whole datagram with this field zeroed; u32 the
/// sender's id), then a u32 message type and the message. Little-endian throughout, except the MAC addresses, which
/// are sent in the order they are written (most significant byte first).
public enum DSUProtocol {
    /// The only version of the protocol there is.
    public static let version: UInt16 = 1001
    public static let headerBytes = 16
    /// Header and message type.
    public static let minimumDatagramBytes = 20
    /// The port clients look for by default.
    public static let defaultPort: UInt16 = 26760
    /// Slots a server reports (a client asks about at most four).
    public static let slotCount = 4
    /// "DSUC", little-endian.
    static let clientMagic: UInt32 = 0x4355_5344
    /// "DSUS", little-endian.
    static let serverMagic: UInt32 = 0x5355_5344
}

/// What a DSU message is about; a reply carries the type of the request it answers.
public enum DSUMessageType: UInt32, Sendable, Hashable, CaseIterable {
    /// The highest protocol version the server speaks.
    case version = 0x10_0000
    /// Which pads sit in which slots.
    case portInfo = 0x10_0001
    /// A subscription to pads' data (request); one pad's state (reply).
    case padData = 0x10_0002
}

/// A pad's MAC address as DSU sends it: six bytes, most significant first. Clients use it to tell a pad again across
/// runs; zero means none.
public struct DSUMACAddress: Sendable, Hashable, CustomStringConvertible {
    /// The 48-bit address in the low bits.
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    public static let none = DSUMACAddress(rawValue: 0)

    /// "aa:bb:cc:dd:ee:ff" (either case, colons or dashes); nil for anything else.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == ":" || $0 == "-" }
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.init(rawValue: value)
    }

    /// A made-up address for a pad that has none (a wired pad without a serial): the first 12 hex digits of
    /// `identifier` (padbridge's pad IDs are hex), marked locally administered and unicast, so it is the same for the
    /// same pad every run and is never a real vendor's. Nil when `identifier` has fewer than 12 hex digits.
    public init?(locallyAdministeredFrom identifier: String) {
        let digits = identifier.prefix(12)
        guard digits.count == 12, let value = UInt64(digits, radix: 16) else { return nil }
        // The first byte's bit 1 set (locally administered), bit 0 clear (unicast).
        self.init(rawValue: (value & ~(UInt64(0x01) << 40)) | (UInt64(0x02) << 40))
    }

    public var description: String {
        (0..<6).map { index in
            let byte = UInt8(truncatingIfNeeded: rawValue >> (8 * (5 - index)))
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined(separator: ":")
    }
}

/// How a pad is connected, as a slot's description says it.
public enum DSUConnectionType: UInt8, Sendable, Hashable {
    case notApplicable = 0
    case usb = 1
    case bluetooth = 2
}

/// What motion a pad has ("device model" in the protocol's description).
public enum DSUMotionModel: UInt8, Sendable, Hashable {
    case none = 0
    /// An accelerometer, or a partial gyroscope.
    case partialGyro = 1
    /// Accelerometer and a three-axis gyroscope.
    case fullGyro = 2
}

/// The slots a request names, as a bit set (slot n is bit n); slots past the fourth do not exist.
public struct DSUSlotSet: Sendable, Hashable, Sequence {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }
    public init() { rawValue = 0 }
    public init(_ slots: some Sequence<Int>) {
        rawValue = 0
        for slot in slots { insert(slot) }
    }

    public static let all = DSUSlotSet(rawValue: 0x0F)

    public var isEmpty: Bool { rawValue == 0 }
    public func contains(_ slot: Int) -> Bool { slot >= 0 && slot < DSUProtocol.slotCount && rawValue & (1 << slot) != 0 }
    /// Slots past the fourth are ignored.
    public mutating func insert(_ slot: Int) {
        guard slot >= 0 && slot < DSUProtocol.slotCount else { return }
        rawValue |= 1 << slot
    }
    public mutating func remove(_ slot: Int) {
        guard slot >= 0 && slot < DSUProtocol.slotCount else { return }
        rawValue &= ~(1 << slot)
    }
    public func intersection(_ other: DSUSlotSet) -> DSUSlotSet { DSUSlotSet(rawValue: rawValue & other.rawValue) }
    public func union(_ other: DSUSlotSet) -> DSUSlotSet { DSUSlotSet(rawValue: rawValue | other.rawValue) }

    /// The slots in ascending order.
    public func makeIterator() -> some IteratorProtocol<Int> {
        (0..<DSUProtocol.slotCount).lazy.filter { self.rawValue & (1 << $0) != 0 }.makeIterator()
    }
}

/// CRC-32 as DSU uses it: zlib's (the same table as PlayStationCRC32, with no seed byte) over the whole datagram,
/// its CRC field (bytes 8-11) read as zero.
public enum DSUChecksum {
    /// The CRC of `bytes` with bytes 8..<12 taken as zero. `bytes` must hold the 16-byte header.
    public static func crc(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        // The table is fetched once per datagram, not per byte (through `PlayStationCRC32.update`, its lazy-global
        // check and call cost about 40 instructions a byte in callgrind): this runs twice per pad frame.
        PlayStationCRC32.table.withUnsafeBufferPointer { table in
            var crc: UInt32 = 0xFFFF_FFFF
            for index in 0..<bytes.count {
                let byte = index >= 8 && index < 12 ? 0 : bytes[index]
                crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
            }
            return ~crc
        }
    }

    /// Writes the CRC of the datagram into its bytes 8..<12.
    public static func seal(_ bytes: UnsafeMutableRawBufferPointer) {
        ReportBytes.storeUInt32(crc(UnsafeRawBufferPointer(bytes)), into: bytes, at: 8)
    }
}
