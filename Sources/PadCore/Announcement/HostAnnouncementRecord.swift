/// What a padbridge host announces about itself in its DNS-SD service's TXT records (service type
/// `_padbridge._udp`, RFC 6763): the format version, its key's fingerprint and whether a pairing window is open.
///
/// An announcement is unauthenticated: anyone on the LAN can announce anything. It only tells a client where to
/// *try*; the Noise handshake with the pinned key is what proves the host. So decoding is total (any bytes give a
/// record or a `HostAnnouncementError`) and nothing here is trusted beyond choosing an address.
///
/// The records: `v=1`, `fp=` and the 32 hex digits of the key's fingerprint, `pairing=open` or `pairing=closed`.
/// Keys are matched without regard to case, a key given twice counts the first time, and unknown keys (Avahi's own
/// `org.freedesktop.Avahi.cookie`, a later version's additions) are ignored, as RFC 6763 section 6 asks.
public struct HostAnnouncementRecord: Sendable, Hashable {
    /// The DNS-SD service type padbridge hosts announce.
    public static let serviceType = "_padbridge._udp"
    /// The TXT format this version writes and reads (`v=`).
    public static let formatVersion = "1"

    public var fingerprint: KeyFingerprint
    /// Whether the host admits a new pairing now (`serve --pair`, `padbridge pairing-window`).
    public var pairingOpen: Bool

    public init(fingerprint: KeyFingerprint, pairingOpen: Bool) {
        self.fingerprint = fingerprint
        self.pairingOpen = pairingOpen
    }

    /// The TXT strings, one per record, as announced.
    public var txtEntries: [[UInt8]] {
        ["v=\(Self.formatVersion)", "fp=\(fingerprint.hex)", "pairing=\(pairingOpen ? "open" : "closed")"]
            .map { Array($0.utf8) }
    }

    /// Reads the TXT strings of an announcement (any bytes).
    public init(txt entries: [[UInt8]]) throws(HostAnnouncementError) {
        var values: [String: [UInt8]?] = [:]
        for entry in entries {
            // RFC 6763 6.4: the key runs up to the first "="; without one, the entry is a boolean attribute.
            let separator = entry.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = entry[..<(separator ?? entry.endIndex)]
            guard !keyBytes.isEmpty, keyBytes.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else { continue }
            let key = String(decoding: keyBytes, as: UTF8.self).lowercased()
            guard values[key] == nil else { continue }
            values[key] = separator.map { Array(entry[entry.index(after: $0)...]) } ?? .some(nil)
        }
        guard let version = values["v"] else { throw .missingVersion }
        guard let version, version == Array(Self.formatVersion.utf8) else {
            throw .unsupportedVersion(HostAnnouncementError.printable(version ?? []))
        }
        guard let fingerprintValue = values["fp"] else { throw .missingFingerprint }
        guard let fingerprintValue, let fingerprint = KeyFingerprint(hex: String(decoding: fingerprintValue, as: UTF8.self))
        else { throw .malformedFingerprint }
        var pairingOpen = false
        if let pairing = values["pairing"] {
            switch pairing.map({ String(decoding: $0, as: UTF8.self) }) {
            case "open"?: pairingOpen = true
            case "closed"?: pairingOpen = false
            default: throw .malformedPairingState
            }
        }
        self.init(fingerprint: fingerprint, pairingOpen: pairingOpen)
    }
}

/// Why an announcement's TXT records could not be read.
public enum HostAnnouncementError: Error, Sendable, Hashable, CustomStringConvertible {
    case missingVersion
    /// A `v=` this version does not read (printable text only: announcements come from anyone).
    case unsupportedVersion(String)
    case missingFingerprint
    case malformedFingerprint
    case malformedPairingState

    public var description: String {
        switch self {
        case .missingVersion: "no format version (v=) in its TXT records"
        case let .unsupportedVersion(version):
            "TXT format version \"\(Self.printable(Array(version.utf8)))\", which this padbridge does not read (it reads \(HostAnnouncementRecord.formatVersion)); update padbridge here"
        case .missingFingerprint: "no key fingerprint (fp=) in its TXT records"
        case .malformedFingerprint: "its key fingerprint (fp=) is not 32 hex digits"
        case .malformedPairingState: "its pairing state (pairing=) is neither open nor closed"
        }
    }

    /// At most 16 bytes of `bytes` as printable ASCII ("?" for anything else).
    static func printable(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(16).map { $0 >= 0x20 && $0 <= 0x7E ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}

/// A DNS-SD service instance name ("gaming-pc"): up to 63 bytes of UTF-8 (RFC 6763 4.1.1), shown to people, so
/// control characters are refused (a name that moved the terminal's cursor would be an attack on the person), and
/// so are Unicode's format characters (category Cf: bidirectional overrides such as U+202E, zero-width joiners and
/// spaces), with which a name can be made to look like another host's.
public enum AnnouncedServiceName {
    public static let maximumBytes = 63

    /// The name of an announcement (any bytes).
    public static func decode(_ bytes: [UInt8]) throws(AnnouncedServiceNameError) -> String {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= maximumBytes else { throw .tooLong(byteCount: bytes.count) }
        var scalars = String.UnicodeScalarView()
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        decoding: while true {
            switch decoder.decode(&iterator) {
            case let .scalarValue(scalar):
                guard !isControl(scalar) else { throw .controlCharacter }
                guard !isFormat(scalar) else { throw .formatCharacter }
                scalars.append(scalar)
            case .emptyInput: break decoding
            case .error: throw .notUTF8
            }
        }
        return String(scalars)
    }

    /// `name` as a service name to announce: control characters become spaces, surrounding spaces go, cut to 63
    /// bytes at a character; "padbridge" if nothing is left.
    public static func publishable(_ name: String) -> String {
        let cleaned = String(
            String.UnicodeScalarView(name.unicodeScalars.filter { !isFormat($0) }.map { isControl($0) ? " " : $0 })
        ).trimmingWhitespace
        var result = ""
        for character in cleaned {
            guard result.utf8.count + character.utf8.count <= maximumBytes else { break }
            result.append(character)
        }
        let trimmed = String(result.trimmingWhitespace)
        return trimmed.isEmpty ? "padbridge" : trimmed
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
    }

    /// Unicode's general category Cf (format): invisible, or reorders what follows.
    static func isFormat(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.generalCategory == .format }
}

/// Why an announced service name cannot be shown.
public enum AnnouncedServiceNameError: Error, Sendable, Hashable, CustomStringConvertible {
    case empty
    case tooLong(byteCount: Int)
    case notUTF8
    case controlCharacter
    case formatCharacter

    public var description: String {
        switch self {
        case .empty: "an empty service name"
        case let .tooLong(count): "a service name of \(count) bytes (at most \(AnnouncedServiceName.maximumBytes))"
        case .notUTF8: "a service name that is not UTF-8"
        case .controlCharacter: "a service name with control characters"
        case .formatCharacter: "a service name with invisible or reordering characters (Unicode format, Cf)"
        }
    }
}
