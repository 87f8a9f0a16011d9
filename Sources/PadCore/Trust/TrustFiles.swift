/// A host a client has paired with: a line of `paired-hosts`, `ADDRESS KEY NAME...` (ADDRESS as the user gave it to
/// `padbridge pair`, "host:port"; KEY the host's public key in hex; NAME the rest of the line).
public struct PairedHost: Sendable, Hashable {
    public var address: String
    public var key: LinkPublicKey
    public var name: String

    public init(address: String, key: LinkPublicKey, name: String) {
        self.address = address
        self.key = key
        self.name = name
    }
}

/// A client a host accepts: a line of `paired-clients`, `KEY [PAIRED] NAME...` (PAIRED when it was paired, in UTC,
/// `2025-03-01T18:04:05Z`; lines written before padbridge recorded it have none).
public struct PairedClient: Sendable, Hashable {
    public var key: LinkPublicKey
    public var name: String
    /// When it was paired: wall-clock seconds since the Unix epoch (UTC). Nil for a pairing recorded without one.
    public var pairedSinceEpochSeconds: UInt64?

    public init(key: LinkPublicKey, name: String, pairedSinceEpochSeconds: UInt64? = nil) {
        self.key = key
        self.name = name
        self.pairedSinceEpochSeconds = pairedSinceEpochSeconds
    }
}

/// A moment as UTC text, without Foundation: the trust file's `2025-03-01T18:04:05Z` (RFC 3339, seconds, `Z`) and
/// the same for people (`2025-03-01 18:04:05 UTC`). Years 1970 to 9999.
public enum UTCDateText {
    /// `2025-03-01T18:04:05Z`.
    public static func timestamp(epochSeconds: UInt64) -> String {
        let parts = civil(epochSeconds: epochSeconds)
        return "\(digits(parts.year, 4))-\(digits(parts.month, 2))-\(digits(parts.day, 2))T"
            + "\(digits(parts.hour, 2)):\(digits(parts.minute, 2)):\(digits(parts.second, 2))Z"
    }

    /// `2025-03-01 18:04:05 UTC`.
    public static func readable(epochSeconds: UInt64) -> String {
        let parts = civil(epochSeconds: epochSeconds)
        return "\(digits(parts.year, 4))-\(digits(parts.month, 2))-\(digits(parts.day, 2)) "
            + "\(digits(parts.hour, 2)):\(digits(parts.minute, 2)):\(digits(parts.second, 2)) UTC"
    }

    /// The seconds since the epoch of a `timestamp` text exactly (20 characters, a real date, 1970 to 9999); nil
    /// for anything else.
    public static func epochSeconds(fromTimestamp text: some StringProtocol) -> UInt64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A,
            bytes[16] == 0x3A, bytes[19] == 0x5A
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), year >= 1970, (1...12).contains(month),
            (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return UInt64(days) * 86_400 + UInt64(hour * 3_600 + minute * 60 + second)
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date and time of `epochSeconds` (`civil_from_days`); a time past 9999 shows as 9999-12-31T23:59:59.
    static func civil(epochSeconds: UInt64) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let seconds = Int(min(epochSeconds, 253_402_300_799))
        let days = seconds / 86_400 + 719_468
        let era = days / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let time = seconds % 86_400
        return (year, month, day, time / 3_600, time / 60 % 60, time % 60)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func digits(_ value: Int, _ count: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }
}

/// The text formats of padbridge's trust files, like ssh's `known_hosts` and `authorized_keys`: one entry a line,
/// fields separated by spaces, `#` starts a comment line, blank lines are ignored. Revoking is deleting the line.
/// Parsing is total: any text gives entries or a `TextLineError` naming the line.
public enum TrustFileFormat {
    /// The private key file (`identity`): one line, `padbridge-identity-v1 HEX64`.
    public static let identityTag = "padbridge-identity-v1"

    public static func identityText(privateKey: [UInt8]) -> String {
        "\(identityTag) \(HexBytes.encode(privateKey))\n"
    }

    /// The 32 private-key bytes of an `identity` file.
    public static func privateKey(fromIdentity text: String) throws(TextLineError) -> [UInt8] {
        for (number, fields) in lines(text) {
            guard fields.count == 2, fields[0] == identityTag else {
                throw TextLineError(line: number, problem: "expected \"\(identityTag) <64 hex digits>\"")
            }
            guard let bytes = HexBytes.decode(fields[1]), bytes.count == 32 else {
                throw TextLineError(line: number, problem: "the key must be 64 hex digits")
            }
            return bytes
        }
        throw TextLineError(line: 1, problem: "no key in the file (expected \"\(identityTag) <64 hex digits>\")")
    }

    public static func pairedHosts(from text: String) throws(TextLineError) -> [PairedHost] {
        var hosts: [PairedHost] = []
        for (number, fields) in lines(text) {
            guard fields.count >= 2 else {
                throw TextLineError(line: number, problem: "expected \"HOST:PORT KEY NAME\"")
            }
            guard let key = LinkPublicKey(hex: fields[1]) else {
                throw TextLineError(line: number, problem: "the key must be 64 hex digits")
            }
            hosts.append(PairedHost(address: String(fields[0]), key: key, name: fields.dropFirst(2).joined(separator: " ")))
        }
        return hosts
    }

    /// `KEY [PAIRED] NAME...`: a second field that is a `UTCDateText.timestamp` is when the client was paired;
    /// without one (a line written before padbridge recorded it) the date is unknown and the name starts there.
    public static func pairedClients(from text: String) throws(TextLineError) -> [PairedClient] {
        var clients: [PairedClient] = []
        for (number, fields) in lines(text) {
            guard let key = LinkPublicKey(hex: fields[0]) else {
                throw TextLineError(line: number, problem: "expected \"KEY [PAIRED] NAME\" with KEY 64 hex digits")
            }
            let paired = fields.count > 1 ? UTCDateText.epochSeconds(fromTimestamp: fields[1]) : nil
            clients.append(PairedClient(
                key: key, name: fields.dropFirst(paired == nil ? 1 : 2).joined(separator: " "),
                pairedSinceEpochSeconds: paired))
        }
        return clients
    }

    public static func line(_ host: PairedHost) -> String {
        "\(host.address) \(host.key.hex) \(sanitized(host.name))"
    }

    public static func line(_ client: PairedClient) -> String {
        let paired = client.pairedSinceEpochSeconds.map { " " + UTCDateText.timestamp(epochSeconds: $0) } ?? ""
        return "\(client.key.hex)\(paired) \(sanitized(client.name))"
    }

    /// A name as one line of printable text (names come from the other machine): its control characters (C0, DEL,
    /// C1 and the bidirectional controls, `LinkText.isControl`) become spaces, then it is trimmed and cut to 64
    /// characters.
    public static func sanitized(_ name: String) -> String {
        let text = LinkText.printable(name).trimmingWhitespace
        return text.isEmpty ? "unnamed" : String(text.prefix(64))
    }

    /// The non-blank, non-comment lines, numbered from 1, split at spaces and tabs.
    static func lines(_ text: String) -> [(Int, [Substring])] {
        var result: [(Int, [Substring])] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            result.append((index + 1, fields))
        }
        return result
    }
}
