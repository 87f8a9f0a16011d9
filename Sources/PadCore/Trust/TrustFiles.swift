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

/// A client a host accepts: a line of `paired-clients`, `KEY NAME...`.
public struct PairedClient: Sendable, Hashable {
    public var key: LinkPublicKey
    public var name: String

    public init(key: LinkPublicKey, name: String) {
        self.key = key
        self.name = name
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

    public static func pairedClients(from text: String) throws(TextLineError) -> [PairedClient] {
        var clients: [PairedClient] = []
        for (number, fields) in lines(text) {
            guard let key = LinkPublicKey(hex: fields[0]) else {
                throw TextLineError(line: number, problem: "expected \"KEY NAME\" with KEY 64 hex digits")
            }
            clients.append(PairedClient(key: key, name: fields.dropFirst().joined(separator: " ")))
        }
        return clients
    }

    public static func line(_ host: PairedHost) -> String {
        "\(host.address) \(host.key.hex) \(sanitized(host.name))"
    }

    public static func line(_ client: PairedClient) -> String {
        "\(client.key.hex) \(sanitized(client.name))"
    }

    /// A name as one line of printable text (names come from the other machine).
    public static func sanitized(_ name: String) -> String {
        let kept = name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) }
        let text = String(kept).trimmingWhitespace
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
