/// The Bluetooth MAC address of a virtual DualSense, derived from a seed so the same seed names the same pad on
/// every run (games and Steam remember controllers by it), and different seeds name different pads.
///
/// Why it matters: `hid-playstation` refuses a second device with a MAC it already knows ("Duplicate device found
/// for MAC address", probe fails with -EEXIST), and it publishes the MAC as `uniq` of all of the pad's input nodes,
/// which is how SDL and Steam tie the gamepad, motion-sensor and touchpad nodes together.
///
/// Derivation: FNV-1a 64 over the seed's UTF-8 bytes; the six low-order bytes of the hash, most significant first,
/// are the address as printed. The first printed octet gets the locally-administered bit (0x02) set and the
/// multicast bit (0x01) cleared, so a derived address never collides with a vendor-assigned one.
public struct DualSenseIdentity: Sendable, Hashable {
    /// The seed the address was derived from.
    public let seed: String
    /// The address in printed order: `octets[0]` is the first pair of `uniq` ("aa" in "aa:bb:cc:dd:ee:ff").
    public let octets: [UInt8]

    public init(seed: String) {
        self.seed = seed
        let hash = Self.fnv1a64(Array(seed.utf8))
        var octets = (0..<6).map { index in UInt8(truncatingIfNeeded: hash >> (8 * (5 - UInt64(index)))) }
        octets[0] = (octets[0] | 0x02) & ~0x01
        self.octets = octets
    }

    /// The address as the kernel prints `uniq` for a DualSense (`%pMR` of the pairing report's bytes 1-6):
    /// lowercase, colon-separated, the pairing report's byte 6 first.
    public var uniq: String {
        octets.map { HexBytes.encode([$0]) }.joined(separator: ":")
    }

    /// The address as feature report 0x09 carries it at bytes 1-6: least-significant byte first.
    public var pairingReportOrder: [UInt8] { octets.reversed() }

    static func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}
