/// One of an input device's capability bitmaps (`EV=`, `KEY=`, `ABS=`, `FF=`, `PROP=`, `MSC=` in its uevent),
/// parsed from the text the kernel prints: space-separated hex words, most significant word first, each word
/// `BITS_PER_LONG` wide (64 bits on 64-bit kernels), leading zero words omitted. `KEY=7fdb000000000000 0 0 0 0`
/// is five words, so its set bits are codes 0x130, 0x131, 0x133, 0x134, 0x136...0x13e.
///
/// Parsing is total: any text yields a bitmap. Text that is not a well-formed bitmap (a word that is not hex, or
/// wider than 16 hex digits) yields the empty bitmap rather than a guess, since a shifted word would name wrong codes.
public struct InputCapabilityBitmap: Sendable, Hashable {
    /// The 64-bit words, least significant first: `words[0]` holds codes 0...63.
    public private(set) var words: [UInt64]

    /// The empty bitmap.
    public init() { words = [] }

    /// A bitmap with exactly these codes set.
    public init(codes: some Sequence<UInt16>) {
        words = []
        for code in codes {
            let index = Int(code / 64)
            if index >= words.count { words.append(contentsOf: repeatElement(0, count: index - words.count + 1)) }
            words[index] |= 1 << UInt64(code % 64)
        }
    }

    /// Parses the kernel's text form (see the type's documentation); `nil` gives the empty bitmap.
    public init(kernelText: String?) {
        words = []
        guard let kernelText else { return }
        var parsed: [UInt64] = []
        for word in kernelText.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
            guard word.utf8.count <= 16, let value = UInt64(word, radix: 16) else { return }
            parsed.append(value)
        }
        words = parsed.reversed()
        while words.last == 0 { words.removeLast() }
    }

    public var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    public func contains(_ code: UInt16) -> Bool {
        let index = Int(code / 64)
        return index < words.count && words[index] & (1 << UInt64(code % 64)) != 0
    }

    /// Whether any code in `range` is set.
    public func containsAny(in range: ClosedRange<UInt16>) -> Bool {
        range.contains { contains($0) }
    }

    /// The set codes, ascending.
    public var codes: [UInt16] {
        var result: [UInt16] = []
        for (index, word) in words.enumerated() where word != 0 {
            for bit in 0..<64 where word & (1 << UInt64(bit)) != 0 {
                let code = index * 64 + bit
                guard code <= Int(UInt16.max) else { return result }
                result.append(UInt16(code))
            }
        }
        return result
    }

    /// The kernel's text form of this bitmap (the inverse of `init(kernelText:)` for 64-bit words).
    public var kernelText: String {
        guard !isEmpty else { return "0" }
        return words.reversed().drop(while: { $0 == 0 }).map { String($0, radix: 16) }.joined(separator: " ")
    }
}
