import Logging
import PadCore
import PadDNSSD
import PadLinux
import PadNet
import PadNetLinux

/// The HOST argument of `pair` and `connect`: an address or host name as before, or a host announced on the LAN by
/// its name, a unique start of it, or the index `padbridge hosts` printed.
enum HostArgument {
    /// How long `pair` and `connect` wait for the LAN's announcements before deciding (avahi-daemon says it has
    /// everything within about a second; a host that answers later is not waited for).
    static let browseMilliseconds: UInt64 = 3_000

    /// Whether `text` is plainly an address rather than a name to look up among the announcements: it has a port
    /// or is an IPv6 address (a ":"), is bracketed, or is an IPv4 address.
    static func isPlainAddress(_ text: String) -> Bool {
        if text.contains(Character(":")) || text.hasPrefix("[") { return true }  // (a Character: the String overload is Foundation's, which the release build does not link)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) }
    }

    /// The hosts announced on the LAN, browsed on `loop` until every one seen is resolved or `milliseconds` passed.
    static func browse(
        loop: DeviceEventLoop, logger: Logger, milliseconds: UInt64 = browseMilliseconds
    ) -> Result<[AnnouncedHost], DNSSDUnavailable> {
        var failure: DNSSDUnavailable?
        let browser: AnnouncedHostBrowser
        do {
            browser = try AnnouncedHostBrowser(loop: loop, logger: logger) { event in
                switch event {
                case .settled: loop.stop()
                case let .unavailable(problem):
                    failure = problem
                    loop.stop()
                case .changed: break
                }
            }
        } catch {
            return .failure(error)
        }
        defer { browser.close() }
        guard !browser.isSettled else { return .success(browser.table.hosts) }
        let deadline = loop.deadline(afterMilliseconds: milliseconds) { loop.stop() }
        do {
            try loop.run()
        } catch {
            logger.warning("the event loop failed while browsing: \(error)")
        }
        deadline.cancel()
        if let failure { return .failure(failure) }
        return .success(browser.table.hosts)
    }

    /// The lines listing `hosts` for a message (several match, or several paired ones are announced).
    static func listing(_ hosts: [AnnouncedHost], paired: [PairedHost]) -> String {
        AnnouncedHostPresentation.table(hosts, paired: paired).map { "\n  " + $0 }.joined()
    }

    /// The announced host `text` names, or a failure that says what to do; nil when no announced name fits (the
    /// caller then takes `text` as a host name).
    static func announced(
        _ text: String, among hosts: [AnnouncedHost], paired: [PairedHost], command: String
    ) throws(CommandFailure) -> AnnouncedHost? {
        switch AnnouncedHostChoice.choose(text, from: hosts) {
        case let .host(host):
            return host
        case .none:
            return nil
        case let .ambiguous(matches):
            throw CommandFailure(
                "\"\(text)\" could be any of these hosts announced on the LAN; give more of the name, or its index "
                    + "(`padbridge \(command) NAME`):" + listing(matches, paired: paired))
        case let .noSuchIndex(index, count):
            throw CommandFailure(
                count == 0
                    ? "no host is announced on the LAN, so \(index) is no index of `padbridge hosts`; give the host's name or address"
                    : "`padbridge hosts` lists \(count) host(s) now, numbered from 0, so \(index) is none of them:"
                        + listing(hosts, paired: paired))
        }
    }

    /// Where to send to `host`: its best address (IPv4 first).
    static func endpoint(_ host: AnnouncedHost) throws(CommandFailure) -> LinkHostAddress {
        guard let best = host.addresses.first else {
            throw CommandFailure("\"\(host.name)\" is announced on the LAN without an address yet; try again in a moment")
        }
        do {
            return try LinkHostAddress(best.endpoint(port: host.port), defaultPort: LinkCommandDefaults.port)
        } catch {
            throw CommandFailure("\"\(host.name)\" is announced at \(best.endpoint(port: host.port)), which is not an address: \(error)")
        }
    }

    /// The message for an announcement under a paired host's name that carries another key: never connected to.
    static func keyDiffers(_ impostor: AnnouncedHost, paired: PairedHost, store: TrustStore) -> String {
        let where_ = impostor.addresses.first.map { " at \($0.endpoint(port: impostor.port))" } ?? ""
        let key = impostor.fingerprint.map { "host key \($0)" } ?? "no readable key"
        return "WARNING: \"\(impostor.name)\" is announced on the LAN\(where_) with \(key), but the key paired with "
            + "\"\(paired.name)\" is \(paired.key.fingerprint): not connecting to it. If that host was reinstalled (a "
            + "new key), check the key `padbridge serve` prints there, then delete its line in \(store.pairedHostsPath) "
            + "and pair again (`padbridge pair \(impostor.name) CODE`); otherwise another machine is using its name"
    }
}

/// Which paired host `connect` forwards to, and where it tries first.
struct ConnectTarget {
    var paired: PairedHost
    /// Where the handshake goes first: the address given, else the stored address (where the LAN announces the
    /// paired key is tried only after it, by `PairedHostFinder`).
    var first: LinkHostAddress
    /// Said before connecting (how the host was chosen), if anything.
    var note: String?

    /// `connect [HOST]`: HOST as a paired address (as before, no browsing), an announced index, the name of one
    /// paired host, or an announced name (or a unique start of it); no HOST: the one paired host announced, else
    /// the only paired host. An announced host is taken only if it carries a paired key.
    static func resolve(
        _ host: String?, store: TrustStore, loop: DeviceEventLoop, logger: Logger
    ) throws -> ConnectTarget {
        let paired = try store.pairedHosts()
        let pairFirst =
            "on the host run `padbridge serve --pair` (or `padbridge pairing-window` while it serves), then here "
                + "`padbridge pair NAME CODE` with the code it shows (`padbridge hosts` lists the hosts announced on the LAN)"
        func pairedEntry(carrying host: AnnouncedHost) -> PairedHost? {
            host.fingerprint.flatMap { fingerprint in paired.first { $0.key.keyFingerprint == fingerprint } }
        }
        func stored(_ entry: PairedHost, note: String?) throws -> ConnectTarget {
            ConnectTarget(paired: entry, first: try LinkHostAddress(entry.address, defaultPort: LinkCommandDefaults.port), note: note)
        }

        guard let host else {
            guard !paired.isEmpty else { throw CommandFailure("not paired with any host: \(pairFirst)") }
            let hosts: [AnnouncedHost]
            switch HostArgument.browse(loop: loop, logger: logger) {
            case let .success(found): hosts = found
            case let .failure(problem):
                guard paired.count == 1 else {
                    throw CommandFailure(
                        "this machine is paired with \(paired.count) hosts and cannot look for them on the LAN (\(problem)); "
                            + "name one: " + paired.map { "`padbridge connect \($0.address)` (\($0.name))" }.joined(separator: ", "))
                }
                return try stored(paired[0], note: "the one paired host, \"\(paired[0].name)\", at its stored address "
                    + "(not looking for it on the LAN: \(problem))")
            }
            // Announcements are grouped by the paired key they carry: the fingerprint is public (it is in every
            // announcement), so anyone may announce it under other names too; that is one paired host, tried at
            // its stored address first (the announced ones only after, `PairedHostFinder`).
            let announcedPaired = hosts.filter { pairedEntry(carrying: $0) != nil }
            var announcedEntries: [PairedHost] = []
            for announced in announcedPaired {
                if let entry = pairedEntry(carrying: announced), !announcedEntries.contains(where: { $0.key == entry.key }) {
                    announcedEntries.append(entry)
                }
            }
            if announcedEntries.count == 1 {
                let entry = announcedEntries[0]
                return try stored(entry, note: "the one paired host announced on the LAN: \"\(entry.name)\"")
            }
            if announcedEntries.count > 1 {
                throw CommandFailure(
                    "several paired hosts are announced on the LAN; name one (`padbridge connect NAME`):"
                        + HostArgument.listing(announcedPaired, paired: paired))
            }
            guard paired.count == 1 else {
                throw CommandFailure(
                    "none of the \(paired.count) paired hosts is announced on the LAN; name one: "
                        + paired.map { "`padbridge connect \($0.address)` (\($0.name))" }.joined(separator: ", "))
            }
            return try stored(paired[0], note: "the one paired host, \"\(paired[0].name)\", at its stored address (it is "
                + "not announced on the LAN)")
        }

        // An address as given to `padbridge pair`: as before.
        if let address = try? LinkHostAddress(host, defaultPort: LinkCommandDefaults.port),
            let entry = paired.first(where: { $0.address == address.canonical })
        {
            return ConnectTarget(paired: entry, first: address, note: nil)
        }
        // The name of one paired host (the name it told at pairing, which it announces): its stored address first;
        // if that does not answer, connect looks for its key on the LAN.
        let byName = paired.filter { $0.name.lowercased() == host.lowercased() }
        if AnnouncedHostChoice.index(host) == nil, byName.count == 1 {
            return try stored(byName[0], note: nil)
        }
        guard AnnouncedHostChoice.index(host) != nil || !HostArgument.isPlainAddress(host) else {
            throw CommandFailure("not paired with \(host): \(pairFirst)")
        }
        switch HostArgument.browse(loop: loop, logger: logger) {
        case let .failure(problem):
            throw CommandFailure("not paired with \(host) (and not looking for it on the LAN: \(problem)): \(pairFirst)")
        case let .success(hosts):
            guard let announced = try HostArgument.announced(host, among: hosts, paired: paired, command: "connect") else {
                throw CommandFailure("not paired with \(host), and no host of that name is announced on the LAN: \(pairFirst)")
            }
            guard let entry = pairedEntry(carrying: announced) else {
                if let namesake = byName.first ?? paired.first(where: { $0.name.lowercased() == announced.name.lowercased() }) {
                    throw CommandFailure(HostArgument.keyDiffers(announced, paired: namesake, store: store))
                }
                throw CommandFailure(
                    "not paired with \"\(announced.name)\" (announced on the LAN with host key "
                        + "\(announced.fingerprint?.description ?? "unreadable")): \(pairFirst)")
            }
            // Its stored address first: the announcement selects the paired host, never where to go before it.
            return try stored(entry, note: nil)
        }
    }
}
