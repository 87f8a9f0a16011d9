/// The 11 bytes of one adaptive-trigger block (mode + 10 parameters, doc §3), stored inline.
public struct TriggerEffectBlock: Sendable, Hashable {
    public static let count = 11

    /// Bytes 0...7, little-endian.
    private var low: UInt64 = 0
    /// Bytes 8...10 in bits 0...23.
    private var high: UInt32 = 0

    /// All zero.
    public init() {}

    /// The first 11 bytes of `bytes`, padded with zeros if fewer.
    public init(_ bytes: some Collection<UInt8>) {
        var index = 0
        for byte in bytes {
            guard index < Self.count else { break }
            self[index] = byte
            index += 1
        }
    }

    /// The first 11 bytes of `buffer`, padded with zeros if fewer. Does not allocate.
    public init(unsafe buffer: UnsafeRawBufferPointer) {
        for index in 0..<min(Self.count, buffer.count) { self[index] = buffer[index] }
    }

    /// Byte `index` (0 = mode). Indices outside 0...10 read as 0 and ignore writes.
    public subscript(index: Int) -> UInt8 {
        get {
            switch index {
            case 0..<8: UInt8(truncatingIfNeeded: low >> (8 * index))
            case 8..<11: UInt8(truncatingIfNeeded: high >> (8 * (index - 8)))
            default: 0
            }
        }
        set {
            switch index {
            case 0..<8:
                let shift = UInt64(8 * index)
                low = low & ~(0xFF << shift) | UInt64(newValue) << shift
            case 8..<11:
                let shift = UInt32(8 * (index - 8))
                high = high & ~(0xFF << shift) | UInt32(newValue) << shift
            default:
                break
            }
        }
    }

    /// Byte 0.
    public var mode: UInt8 { self[0] }

    public var bytes: [UInt8] { (0..<Self.count).map { self[$0] } }

    /// 22 lowercase hex digits.
    public var hex: String { HexBytes.encode(bytes) }

    /// Exactly 22 hex digits (either case); nil otherwise.
    public init?(hex: String) {
        guard let bytes = HexBytes.decode(hex), bytes.count == Self.count else { return nil }
        for (index, byte) in bytes.enumerated() { self[index] = byte }
    }

    /// Writes the 11 bytes to the start of `buffer` (fewer if the buffer is shorter). Does not allocate.
    public func write(to buffer: UnsafeMutableRawBufferPointer) {
        for index in 0..<min(Self.count, buffer.count) { buffer[index] = self[index] }
    }
}

extension TriggerEffectBlock: CustomStringConvertible {
    public var description: String { hex }
}
