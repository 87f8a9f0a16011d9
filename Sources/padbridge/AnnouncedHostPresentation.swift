import FoundationEssentials
import PadCore
import PadNet
import PadNetLinux

/// How `padbridge hosts` shows the hosts announced on the LAN: a table, JSON objects, `--watch` lines.
enum AnnouncedHostPresentation {
    /// Whether `host` carries the key of a paired host (by its fingerprint), and that pairing.
    static func pairing(of host: AnnouncedHost, in paired: [PairedHost]) -> PairedHost? {
        guard let fingerprint = host.fingerprint else { return nil }
        return paired.first { $0.key.keyFingerprint == fingerprint }
    }

    static func addressList(_ host: AnnouncedHost) -> String {
        host.addresses.isEmpty ? "-" : host.addresses.map(\.description).joined(separator: ", ")
    }

    static func keyText(_ host: AnnouncedHost) -> String {
        switch host.record {
        case let .success(record): record.fingerprint.description
        case let .failure(problem): "unreadable: \(problem)"
        }
    }

    static func table(_ hosts: [AnnouncedHost], paired: [PairedHost]) -> [String] {
        let header = ["#", "NAME", "ADDRESSES", "PORT", "KEY", "PAIRED", "PAIRING"]
        let rows = hosts.enumerated().map { index, host in
            [
                "\(index)", host.name, addressList(host), "\(host.port)", keyText(host),
                pairing(of: host, in: paired) == nil ? "no" : "yes", host.pairingOpen ? "open" : "closed",
            ]
        }
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toWidth: widths[column] + 2)
            }.joined()
        }
    }

    /// One `--watch` line: EVENT, then the host as a table row without its header.
    static func watchLine(_ event: String, _ host: AnnouncedHost, paired: [PairedHost]) -> String {
        "\(event.padding(toWidth: 8))\(host.name)  \(addressList(host))  port \(host.port)  \(keyText(host))  "
            + "\(pairing(of: host, in: paired) == nil ? "not paired" : "paired")  pairing \(host.pairingOpen ? "open" : "closed")"
    }

    /// The JSON object for one host (`hosts --json`, `hosts --watch --json`).
    struct Object: Encodable {
        struct Address: Encodable {
            var address: String
            var family: String
            var interface: String
            /// What `connect` and `pair` take.
            var endpoint: String
        }

        var index: Int?
        var name: String
        var domain: String
        var port: UInt16
        var addresses: [Address]
        var fingerprint: String?
        var paired: Bool
        /// The paired-hosts line's address, when paired.
        var pairedAddress: String?
        var pairingOpen: Bool
        /// Why the announcement's TXT records could not be read, or null.
        var problem: String?

        init(_ host: AnnouncedHost, index: Int?, paired: [PairedHost]) {
            self.index = index
            name = host.name
            domain = host.domain
            port = host.port
            addresses = host.addresses.map {
                Address(
                    address: $0.description, family: $0.family == .ipv4 ? "ipv4" : "ipv6", interface: $0.interface,
                    endpoint: $0.endpoint(port: host.port))
            }
            fingerprint = host.fingerprint?.description
            let pairing = AnnouncedHostPresentation.pairing(of: host, in: paired)
            self.paired = pairing != nil
            pairedAddress = pairing?.address
            pairingOpen = host.pairingOpen
            if case let .failure(problem) = host.record { self.problem = problem.description }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if let index { try container.encode(index, forKey: .index) }
            try container.encode(name, forKey: .name)
            try container.encode(domain, forKey: .domain)
            try container.encode(port, forKey: .port)
            try container.encode(addresses, forKey: .addresses)
            try container.encode(fingerprint, forKey: .fingerprint)
            try container.encode(paired, forKey: .paired)
            try container.encode(pairedAddress, forKey: .pairedAddress)
            try container.encode(pairingOpen, forKey: .pairingOpen)
            try container.encode(problem, forKey: .problem)
        }

        enum CodingKeys: String, CodingKey {
            case index, name, domain, port, addresses, fingerprint, paired, pairedAddress, pairingOpen, problem
        }
    }

    struct WatchLine: Encodable {
        var event: String
        var host: Object
    }
}
