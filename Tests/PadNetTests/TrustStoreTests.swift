import Glibc
import PadCore
import PadNet
import PadNetLinux
import Testing

@Suite("TrustStore", .serialized)
struct TrustStoreTests {
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/padbridge-trust-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(cString: made!)
    }

    static func mode(_ path: String) -> mode_t {
        var status = stat()
        stat(path, &status)
        return status.st_mode & 0o777
    }

    @Test func theIdentityIsMadeOnceWithMode0600AndReadBack() throws {
        let store = TrustStore(directory: Self.temporaryDirectory() + "/nested/padbridge")
        let first = try store.identity()
        #expect(Self.mode(store.identityPath) == 0o600)
        #expect(Self.mode(store.directory) == 0o700)
        let again = try store.identity()
        #expect(first.rawRepresentation == again.rawRepresentation)
    }

    @Test func anIdentityOthersCanReadIsRefusedWithTheFix() throws {
        let store = TrustStore(directory: Self.temporaryDirectory())
        _ = try store.identity()
        chmod(store.identityPath, 0o644)
        let error = #expect(throws: TrustStoreError.self) { try store.identity() }
        #expect(error?.description.contains("chmod 600 \(store.identityPath)") == true, "\(String(describing: error))")
    }

    @Test func pairingsAreRememberedReplacedAndListed() throws {
        let store = TrustStore(directory: Self.temporaryDirectory())
        #expect(try store.pairedHosts().isEmpty && store.pairedClients().isEmpty)
        let one = LinkPublicKey(bytes: [UInt8](repeating: 1, count: 32))!
        let two = LinkPublicKey(bytes: [UInt8](repeating: 2, count: 32))!
        try store.remember(PairedHost(address: "pc:48100", key: one, name: "pc"))
        try store.remember(PairedHost(address: "tv:48100", key: two, name: "tv"))
        try store.remember(PairedHost(address: "pc:48100", key: two, name: "pc again"))
        #expect(try store.pairedHosts().map(\.address) == ["tv:48100", "pc:48100"])
        #expect(try store.pairedHosts().last?.key == two)
        try store.accept(PairedClient(key: one, name: "deck", pairedSinceEpochSeconds: 1_000))
        try store.accept(PairedClient(key: one, name: "deck renamed", pairedSinceEpochSeconds: 2_000))
        #expect(try store.pairedClients() == [PairedClient(key: one, name: "deck renamed", pairedSinceEpochSeconds: 2_000)])
        #expect(Self.mode(store.pairedClientsPath) == 0o600)
    }

    static var wallClockSeconds: UInt64 {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        return UInt64(clock.tv_sec)
    }

    /// Pairing (`accept`, what serve's pairing calls) records the wall-clock time; a revoke rewrites the file with
    /// the other clients' dates kept, a line without a date (written before padbridge recorded one) included.
    @Test func aPairingIsDatedAndARevokeKeepsTheOthersDates() throws {
        let store = TrustStore(directory: Self.temporaryDirectory())
        let zero = LinkPublicKey(bytes: [UInt8](repeating: 0, count: 32))!
        let one = LinkPublicKey(bytes: [UInt8](repeating: 1, count: 32))!
        let two = LinkPublicKey(bytes: [UInt8](repeating: 2, count: 32))!
        let old = "# clients this host accepts\n\(zero.hex) old deck\n"
        #expect(FileManagerless.write(old, to: store.pairedClientsPath))
        let before = Self.wallClockSeconds
        try store.accept(PairedClient(key: one, name: "laptop"))
        let after = Self.wallClockSeconds
        let laptopPaired = try #require(try store.pairedClients().first { $0.key == one }?.pairedSinceEpochSeconds)
        #expect((before...after).contains(laptopPaired))
        try store.accept(PairedClient(key: two, name: "tv", pairedSinceEpochSeconds: 1_740_852_245))
        #expect(try store.pairedClients().map(\.pairedSinceEpochSeconds) == [nil, laptopPaired, 1_740_852_245])
        try store.revoke("laptop")
        #expect(try store.pairedClients() == [
            PairedClient(key: zero, name: "old deck"), PairedClient(key: two, name: "tv", pairedSinceEpochSeconds: 1_740_852_245),
        ])
        let text = try #require(FileManagerless.read(store.pairedClientsPath))
        #expect(text.contains("\(two.hex) 2025-03-01T18:04:05Z tv\n") && text.contains("\(zero.hex) old deck\n"), "\(text)")
    }

    @Test func aClientIsRevokedByNameOrFingerprintAndOnlyWhenThatIsUnambiguous() throws {
        let store = TrustStore(directory: Self.temporaryDirectory())
        let zero = LinkPublicKey(bytes: [UInt8](repeating: 0, count: 32))!  // SHA256:6668-7aad-...
        let one = LinkPublicKey(bytes: [UInt8](repeating: 1, count: 32))!
        let two = LinkPublicKey(bytes: [UInt8](repeating: 2, count: 32))!
        for (key, name) in [(zero, "deck"), (one, "laptop"), (two, "laptop")] { try store.accept(PairedClient(key: key, name: name)) }
        #expect(try store.revoke("deck").key == zero)
        #expect(try store.pairedClients().map(\.name) == ["laptop", "laptop"])
        #expect(Self.mode(store.pairedClientsPath) == 0o600)
        let ambiguous = #expect(throws: TrustStoreError.self) { try store.revoke("laptop") }
        #expect(ambiguous?.description.contains("names 2 paired clients") == true, "\(String(describing: ambiguous))")
        let missing = #expect(throws: TrustStoreError.self) { try store.revoke("tv") }
        #expect(missing?.description.contains("paired: \"laptop\"") == true, "\(String(describing: missing))")
        // By the key's fingerprint, whole or by its first digits (dashes and case as typed).
        #expect(try store.revoke(one.fingerprint).key == one)
        let prefix = String(two.fingerprint.dropFirst("SHA256:".count).prefix(9)).uppercased()
        #expect(try store.revoke(prefix).key == two)
        #expect(try store.pairedClients().isEmpty)
    }

    /// Issue 42, item 8: letters that are not hex digits were stripped before the prefix match, so `revoke zzzz`
    /// matched every client and `revoke laptop` (no such name) a key beginning with `a`.
    @Test func onlyAFingerprintsSpellingMatchesAKeyPrefix() throws {
        let store = TrustStore(directory: Self.temporaryDirectory())
        let candidates = (0...255).map { LinkPublicKey(bytes: [UInt8](repeating: UInt8($0), count: 32))! }
        // A key whose fingerprint begins with `a` (what `laptop` matched), and 15 others.
        let startingWithA = try #require(candidates.first { TrustStoreDigits.of($0).hasPrefix("a") })
        let keys = Array(candidates.filter { $0 != startingWithA }.prefix(15)) + [startingWithA]
        for (index, key) in keys.enumerated() { try store.accept(PairedClient(key: key, name: "pad \(index)")) }
        for wrong in ["zzzz", "laptop", "lap-top", "SHA256:zzzz", "a", "ab:c", "sha256:", "pad"] {
            #expect(throws: TrustStoreError.self, "\(wrong)") { try store.revoke(wrong) }
        }
        #expect(try store.pairedClients().count == 16, "nothing was revoked by a word that is neither a name nor a key")
        let digits = TrustStoreDigits.of(startingWithA)
        let spelled = "SHA256:" + digits.prefix(4) + "-" + digits.dropFirst(4).prefix(4)
        #expect(try store.revoke(spelled).key == startingWithA)
        #expect(try store.revoke("pad 3").key == keys[3])
        #expect(try store.pairedClients().count == 14)
    }

    /// Issue 42, item 9: client names lose C1 controls (CSI, U+009B) and bidirectional overrides, as pad names do.
    @Test func clientNamesKeepNoTerminalOrBidirectionalControls() throws {
        let store = TrustStore(directory: Self.temporaryDirectory())
        let key = LinkPublicKey(bytes: [UInt8](repeating: 7, count: 32))!
        try store.accept(PairedClient(key: key, name: "lap\u{9B}31mtop\u{202E}gpj.exe\u{2066}x\u{1B}[2J"))
        let name = try #require(try store.pairedClients().first?.name)
        #expect(name.unicodeScalars.allSatisfy { !LinkText.isControl($0) }, "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
        #expect(name == "lap 31mtop gpj.exe x [2J")
        let text = try #require(FileManagerless.read(store.pairedClientsPath))
        #expect(!text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) })
    }

    @Test func aKeyFingerprintIsStableAndReadable() {
        let key = LinkPublicKey(bytes: [UInt8](repeating: 0, count: 32))!
        // SHA-256 of 32 zero bytes is 66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925.
        #expect(key.fingerprint == "SHA256:6668-7aad-f862-bd77-6c8f-c18b-8e9f-8e20")
    }
}

/// Plain file reads and writes for the tests (no Foundation).
enum FileManagerless {
    static func write(_ text: String, to path: String) -> Bool {
        guard let file = fopen(path, "w") else { return false }
        defer { fclose(file) }
        return fputs(text, file) >= 0
    }

    static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        while true {
            let byte = fgetc(file)
            guard byte != EOF else { break }
            bytes.append(UInt8(byte))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A key's fingerprint digits, as `revoke` compares them.
enum TrustStoreDigits {
    static func of(_ key: LinkPublicKey) -> String {
        String(key.fingerprint.dropFirst("SHA256:".count).lowercased().filter(\.isHexDigit))
    }
}
