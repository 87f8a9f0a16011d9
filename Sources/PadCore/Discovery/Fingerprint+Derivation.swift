/// The 64-bit FNV-1a hash (Fowler–Noll–Vo): small, stable across runs, machines and Swift versions (unlike
/// `Hasher`, which is seeded per process). Not cryptographic; fingerprints only need to be stable and spread.
public struct FNV1a64: Sendable, Hashable {
    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    public static let prime: UInt64 = 0x0000_0100_0000_01b3

    public private(set) var value: UInt64 = offsetBasis

    public init() {}

    public mutating func combine(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value ^= UInt64(byte)
            value &*= Self.prime
        }
    }

    public static func hash(_ text: String) -> UInt64 {
        var hasher = FNV1a64()
        hasher.combine(text.utf8)
        return hasher.value
    }
}

/// MurmurHash3's 64-bit finalizer (`fmix64`): every input bit flips each output bit with probability about 1/2.
/// FNV-1a alone mixes its last bytes only into the low bits; texts that differ only at their end (the serials and
/// MACs of one batch of pads) then share their high bits.
public enum Fmix64 {
    @inlinable public static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return x
    }
}

extension Fingerprint {
    /// The version tag that starts every canonical string; a change to the recipe changes the tag.
    public static let canonicalVersion = "padbridge-fingerprint-v2"

    /// The text a fingerprint hashes:
    /// `padbridge-fingerprint-v2|bus=<usb|bluetooth|virtual|other>|vendor=<4 hex>|product=<4 hex>|` followed by
    /// `serial=<serial>` when the pad reports one, else `port=<portPath>` (empty when that is unknown too), then
    /// `#<occurrence>` for the second and later pads of one enumeration that would otherwise share it.
    ///
    /// Left out on purpose: the name and version (firmware updates change them), node numbers, inputN numbers and
    /// HID instance numbers (they change at every connection). Two identical pads without serials are told
    /// apart by the port they hang off, so such a pad keeps its fingerprint only while it stays on its port.
    public static func canonicalString(
        bus: ControllerBus, vendorID: UInt16, productID: UInt16, serial: String?, portPath: String?,
        occurrence: Int = 1
    ) -> String {
        var text = "\(canonicalVersion)|bus=\(bus.rawValue)|vendor=\(NumberText.hex4(vendorID))|product=\(NumberText.hex4(productID))|"
        if let serial, !serial.isEmpty {
            text += "serial=\(serial)"
        } else {
            text += "port=\(portPath ?? "")"
        }
        if occurrence > 1 { text += "#\(occurrence)" }
        return text
    }

    /// A controller's fingerprint: the first 12 hex digits (the high 48 bits) of `fmix64(FNV-1a-64(text))`, text
    /// being `canonicalString(...)` in UTF-8. `occurrence` is 1 except when `ControllerGrouping` disambiguates a
    /// collision. (v1 took FNV-1a's high bits unmixed: pads whose serials differed in the last character got IDs
    /// that differed in one digit in the middle.)
    public static func derive(
        bus: ControllerBus, vendorID: UInt16, productID: UInt16, serial: String?, portPath: String?,
        occurrence: Int = 1
    ) -> Fingerprint {
        let text = canonicalString(
            bus: bus, vendorID: vendorID, productID: productID, serial: serial, portPath: portPath,
            occurrence: occurrence)
        let digits = String(Fmix64.mix(FNV1a64.hash(text)) >> 16, radix: 16)
        return Fingerprint(rawValue: String(repeating: "0", count: 12 - digits.count) + digits)
    }
}
