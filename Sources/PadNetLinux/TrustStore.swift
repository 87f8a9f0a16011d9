import PadNet
public import Crypto
import Glibc
public import PadCore
import PadLinux
import SystemPackage

/// What is wrong with padbridge's key and trust files, with what to do about it (ssh's manner).
public struct TrustStoreError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// padbridge's keys and trust, as files in one directory (`$XDG_CONFIG_HOME/padbridge`, default
/// `~/.config/padbridge`, or `--config-dir`), treated like ssh's:
/// - `identity`: this machine's private key (mode 0600; refused when others can read it), made on first use;
/// - `paired-hosts`: the hosts this machine (as a client) paired with, `HOST:PORT KEY NAME` a line;
/// - `paired-clients`: the clients this machine (as a host) accepts, `KEY PAIRED NAME` a line (PAIRED, when it was
///   paired, UTC: `2025-03-01T18:04:05Z`; lines from before padbridge recorded it have none, and keep none).
/// Revoking a pairing is deleting its line. Every file is written whole to a temporary file and renamed over the
/// old one, mode 0600, so a crash never leaves half a file.
public struct TrustStore: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// `--config-dir`, else `$XDG_CONFIG_HOME/padbridge`, else `$HOME/.config/padbridge`.
    public static func resolveDirectory(_ explicit: String?) throws(TrustStoreError) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let xdg = getenv("XDG_CONFIG_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") { return xdg + "/padbridge" }
        if let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty { return home + "/.config/padbridge" }
        throw TrustStoreError("neither $XDG_CONFIG_HOME nor $HOME is set: give --config-dir DIR")
    }

    public var identityPath: String { directory + "/identity" }
    public var pairedHostsPath: String { directory + "/paired-hosts" }
    public var pairedClientsPath: String { directory + "/paired-clients" }

    /// This machine's key pair: read from `identity`, or made and saved there when there is none.
    public func identity() throws(TrustStoreError) -> Curve25519.KeyAgreement.PrivateKey {
        if let text = try read(identityPath, secret: true) {
            do throws(TextLineError) {
                let bytes = try TrustFileFormat.privateKey(fromIdentity: text)
                guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes) else {
                    throw TextLineError(line: 1, problem: "not a Curve25519 private key")
                }
                return key
            } catch {
                throw TrustStoreError(
                    "\(identityPath): \(error). Move the file away to make a new key (every pairing must then be made again).")
            }
        }
        let key = Curve25519.KeyAgreement.PrivateKey()
        try write(identityPath, TrustFileFormat.identityText(privateKey: Array(key.rawRepresentation)))
        return key
    }

    public func pairedHosts() throws(TrustStoreError) -> [PairedHost] {
        guard let text = try read(pairedHostsPath, secret: false) else { return [] }
        do throws(TextLineError) {
            return try TrustFileFormat.pairedHosts(from: text)
        } catch {
            throw TrustStoreError("\(pairedHostsPath): \(error); fix or delete that line")
        }
    }

    public func pairedClients() throws(TrustStoreError) -> [PairedClient] {
        guard let text = try read(pairedClientsPath, secret: false) else { return [] }
        do throws(TextLineError) {
            return try TrustFileFormat.pairedClients(from: text)
        } catch {
            throw TrustStoreError("\(pairedClientsPath): \(error); fix or delete that line")
        }
    }

    /// Records `host`, replacing an earlier line for the same address, and `replacing`'s line (the same host found
    /// at a new address: its line moves there), in one rename.
    public func remember(_ host: PairedHost, replacing: PairedHost? = nil) throws(TrustStoreError) {
        var hosts = try pairedHosts().filter { $0.address != host.address && $0 != replacing }
        hosts.append(host)
        try write(pairedHostsPath, header("hosts this machine paired with (padbridge pair); delete a line to forget one")
            + hosts.map { TrustFileFormat.line($0) + "\n" }.joined())
    }

    /// Records `client`, replacing an earlier line with the same key, as paired now (wall-clock time) unless it
    /// says when it was paired. The other lines are written back as they were, dates and all.
    public func accept(_ client: PairedClient) throws(TrustStoreError) {
        var clients = try pairedClients().filter { $0.key != client.key }
        var client = client
        if client.pairedSinceEpochSeconds == nil { client.pairedSinceEpochSeconds = WallClock.nowMicroseconds / 1_000_000 }
        clients.append(client)
        try write(pairedClientsPath, header("clients this host accepts (padbridge serve --pair); delete a line to revoke one")
            + clients.map { TrustFileFormat.line($0) + "\n" }.joined())
    }

    /// Removes the paired client named `nameOrFingerprint` (its name, or its key's fingerprint or a unique prefix
    /// of it), in one rename; returns it. Throws when none, or more than one, matches.
    @discardableResult
    public func revoke(_ nameOrFingerprint: String) throws(TrustStoreError) -> PairedClient {
        let clients = try pairedClients()
        // A name names exactly; otherwise only something spelled as a fingerprint (hex digits, `-` or `:`, an
        // optional `SHA256:`) is a key's prefix: `revoke zzzz` or a mistyped name must match nobody, not whatever
        // key begins with the hex digits hidden in it.
        let named = clients.filter { $0.name == nameOrFingerprint }
        let matches: [PairedClient]
        if !named.isEmpty {
            matches = named
        } else if let digits = Self.fingerprintPrefix(nameOrFingerprint) {
            matches = clients.filter { Self.fingerprintDigits($0.key.fingerprint).hasPrefix(digits) }
        } else {
            matches = []
        }
        guard let client = matches.first else {
            let known = clients.map { "\"\($0.name)\" (\($0.key.fingerprint))" }.joined(separator: ", ")
            throw TrustStoreError(
                "no paired client is named or has the key \(nameOrFingerprint)"
                    + (clients.isEmpty ? "; no client is paired" : "; paired: \(known)"))
        }
        guard matches.count == 1 else {
            throw TrustStoreError(
                "\(nameOrFingerprint) names \(matches.count) paired clients; give the key's fingerprint: "
                    + matches.map { $0.key.fingerprint }.joined(separator: ", "))
        }
        try write(pairedClientsPath, header("clients this host accepts (padbridge serve --pair); delete a line to revoke one")
            + clients.filter { $0.key != client.key }.map { TrustFileFormat.line($0) + "\n" }.joined())
        return client
    }

    /// The hex digits of `text` when it is spelled as (the start of) a key's fingerprint: an optional `SHA256:`,
    /// then hex digits with `-` or `:` between them, at least 4 digits; nil for anything else.
    static func fingerprintPrefix(_ text: String) -> String? {
        let lowered = text.lowercased()
        let body = lowered.hasPrefix("sha256:") ? lowered.dropFirst(7) : Substring(lowered)
        guard body.allSatisfy({ $0.isHexDigit || $0 == "-" || $0 == ":" }) else { return nil }
        let digits = String(body.filter(\.isHexDigit))
        return digits.count >= 4 ? digits : nil
    }

    /// A fingerprint's hex digits, lower case ("SHA256:6668-7aad..." -> "66687aad...").
    static func fingerprintDigits(_ text: String) -> String {
        let body = text.lowercased().hasPrefix("sha256:") ? String(text.dropFirst(7)) : text.lowercased()
        return String(body.filter(\.isHexDigit))
    }

    /// Where `padbridge pairing-window` leaves a code for a running host (which takes it and deletes the file).
    public var pairingRequestPath: String { directory + "/pairing-request" }
    static let pairingRequestTag = "padbridge-pairing-request-v1"

    /// Leaves `code` for the host serving from this directory.
    public func requestPairingWindow(_ code: PairingCode) throws(TrustStoreError) {
        try write(pairingRequestPath, "\(Self.pairingRequestTag) \(code.symbols)\n")
    }

    /// The code a `pairing-window` command left, if any; the request is deleted (it is used once).
    public func takePairingRequest() -> PairingCode? {
        // A request that cannot be deleted is not taken: it would open the window again at every look.
        guard let text = try? read(pairingRequestPath, secret: true), (try? TextFile.remove(atPath: pairingRequestPath)) != nil
        else { return nil }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, fields[0] == Self.pairingRequestTag else { return nil }
        return PairingCode(typed: fields[1])
    }

    private func header(_ text: String) -> String { "# \(text)\n" }

    /// The file's text, nil when it does not exist. `secret`: refused unless only its owner can read it, and the
    /// owner is whoever runs padbridge (ssh's rule for private keys). Never read through a symbolic link.
    private func read(_ path: String, secret: Bool) throws(TrustStoreError) -> String? {
        let contents: TextFile.Contents
        do throws(FileError) {
            contents = try TextFile.read(atPath: path, maximumBytes: 1 << 20, followingSymlink: false)
        } catch {
            if error.isMissingFile { return nil }
            throw TrustStoreError("\(error)")
        }
        if secret {
            let mode = contents.permissions.rawValue & 0o777
            if mode & 0o077 != 0 {
                throw TrustStoreError(
                    "permissions \(String(mode, radix: 8)) for \(path) are too open: a private key must be readable by "
                        + "its owner alone, and this one is ignored. Run: chmod 600 \(path)")
            }
            if contents.ownerID != geteuid() {
                throw TrustStoreError(
                    "\(path) belongs to user \(contents.ownerID), not to the user running padbridge (\(geteuid())): run "
                        + "padbridge as its owner, or give --config-dir a directory of your own")
            }
        }
        if contents.isOverLimit { throw TrustStoreError("\(path) is over 1 MiB: that is not a padbridge file") }
        return contents.text
    }

    /// Replaces `path` whole with `text` (`TextFile.replace`: a new file, mode 0600, synced and renamed over the old
    /// one); makes the directory (0700) first.
    private func write(_ path: String, _ text: String) throws(TrustStoreError) {
        do throws(FileError) {
            try TextFile.makeDirectories(directory, permissions: .ownerReadWriteExecute)
            try TextFile.replace(atPath: path, with: text, permissions: .ownerReadWrite)
        } catch {
            throw TrustStoreError("\(error)")
        }
    }
}

