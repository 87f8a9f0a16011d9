/// The one-time code a host shows while its pairing window is open, typed on the client: 15 symbols of Crockford's
/// base32 (digits and capital letters without I, L, O and U), 75 random bits, shown in three groups of five
/// ("7KQ2M-XV9PD-R4HTW").
///
/// Why 75 bits: the code is mixed into the pairing handshake as a pre-shared key. Someone who captured a pairing
/// from the network cannot test guesses at all (the handshake's keys also need both sides' ephemeral secrets); only
/// an attacker who sits in the middle of that very exchange can test guesses offline, and 2^75 of them is out of
/// reach. Online, a host closes its window after three wrong tries.
public struct PairingCode: Sendable, Hashable, CustomStringConvertible {
    public static let symbolCount = 15
    public static let bitCount = symbolCount * 5
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// The 15 symbols, upper case, without separators.
    public let symbols: String

    /// A code from at least 10 random bytes (the caller draws them from the system's generator; the first 75 bits
    /// are used).
    public init?(randomBytes: [UInt8]) {
        guard randomBytes.count * 8 >= Self.bitCount else { return nil }
        var symbols: [UInt8] = []
        for index in 0..<Self.symbolCount {
            var value: UInt8 = 0
            for bit in (index * 5)..<(index * 5 + 5) {
                value = value << 1 | (randomBytes[bit / 8] >> (7 - UInt8(bit % 8)) & 1)
            }
            symbols.append(Self.alphabet[Int(value)])
        }
        self.symbols = String(decoding: symbols, as: UTF8.self)
    }

    /// A code as a person typed it: case, spaces and dashes do not matter, and the letters people confuse with
    /// digits read as those digits (O as 0, I and L as 1), as Crockford's base32 intends. nil for anything else.
    public init?(typed text: some StringProtocol) {
        var symbols: [UInt8] = []
        for character in text.utf8 {
            switch character {
            case UInt8(ascii: "-"), UInt8(ascii: " "): continue
            default: break
            }
            var upper = character
            if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(upper) { upper -= 32 }
            switch upper {
            case UInt8(ascii: "O"): upper = UInt8(ascii: "0")
            case UInt8(ascii: "I"), UInt8(ascii: "L"): upper = UInt8(ascii: "1")
            default: break
            }
            guard Self.alphabet.contains(upper) else { return nil }
            symbols.append(upper)
        }
        guard symbols.count == Self.symbolCount else { return nil }
        self.symbols = String(decoding: symbols, as: UTF8.self)
    }

    /// Grouped for reading and typing: "7KQ2M-XV9PD-R4HTW".
    public var description: String {
        let characters = Array(symbols)
        return stride(from: 0, to: characters.count, by: 5)
            .map { String(characters[$0..<min($0 + 5, characters.count)]) }
            .joined(separator: "-")
    }

    /// The bytes the pairing handshake derives its pre-shared key from (the network adapter hashes them with a
    /// label): the canonical symbols, so every way of typing the same code gives the same key.
    public var keyMaterial: [UInt8] { Array("padbridge pairing code v1:".utf8) + Array(symbols.utf8) }
}
