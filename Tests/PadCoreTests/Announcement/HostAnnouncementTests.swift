import PadCore
import PadTestSupport
import Testing

@Suite struct HostAnnouncementTests {
    static let fingerprintHex = "66687aadf862bd776c8fc18b8e9f8e20"
    static var fingerprint: KeyFingerprint { KeyFingerprint(hex: fingerprintHex)! }

    static func entries(_ texts: String...) -> [[UInt8]] { texts.map { Array($0.utf8) } }

    @Test func aFingerprintReadsFromHexAndFromItsPrintedForm() throws {
        let fingerprint = Self.fingerprint
        #expect(fingerprint.description == "SHA256:6668-7aad-f862-bd77-6c8f-c18b-8e9f-8e20")
        #expect(KeyFingerprint(printed: fingerprint.description) == fingerprint)
        #expect(KeyFingerprint(printed: "sha256:6668-7AAD-f862-bd77-6c8f-c18b-8e9f-8e20") == fingerprint)
        #expect(KeyFingerprint(printed: "SHA256:6668-7aad") == nil)
        #expect(KeyFingerprint(hex: "66687aad") == nil)
        #expect(KeyFingerprint(bytes: [UInt8](repeating: 1, count: 15)) == nil)
    }

    @Test func theTXTRecordsRoundTrip() throws {
        for open in [false, true] {
            let record = HostAnnouncementRecord(fingerprint: Self.fingerprint, pairingOpen: open)
            #expect(try HostAnnouncementRecord(txt: record.txtEntries) == record)
        }
        let open = HostAnnouncementRecord(fingerprint: Self.fingerprint, pairingOpen: true)
        #expect(open.txtEntries.map { String(decoding: $0, as: UTF8.self) }
            == ["v=1", "fp=\(Self.fingerprintHex)", "pairing=open"])
    }

    @Test func keysAreCaseInsensitiveUnknownKeysIgnoredAndTheFirstOfTwoCounts() throws {
        // RFC 6763 6.4: keys are case-insensitive; a key given twice counts once, the first time.
        let record = try HostAnnouncementRecord(txt: Self.entries(
            "org.freedesktop.Avahi.cookie=12345", "V=1", "FP=\(Self.fingerprintHex.uppercased())", "Pairing=closed",
            "pairing=open", "future", "=nokey"))
        #expect(record == HostAnnouncementRecord(fingerprint: Self.fingerprint, pairingOpen: false))
    }

    @Test(arguments: [
        (["fp=66687aadf862bd776c8fc18b8e9f8e20"], HostAnnouncementError.missingVersion),
        (["v=2", "fp=66687aadf862bd776c8fc18b8e9f8e20"], .unsupportedVersion("2")),
        (["v", "fp=66687aadf862bd776c8fc18b8e9f8e20"], .unsupportedVersion("")),
        (["v=1"], .missingFingerprint),
        (["v=1", "fp=66687aad"], .malformedFingerprint),
        (["v=1", "fp=zz687aadf862bd776c8fc18b8e9f8e20"], .malformedFingerprint),
        (["v=1", "fp=66687aadf862bd776c8fc18b8e9f8e20", "pairing=maybe"], .malformedPairingState),
    ])
    func whatIsWrongIsNamed(texts: [String], error: HostAnnouncementError) {
        #expect(throws: error) { try HostAnnouncementRecord(txt: texts.map { Array($0.utf8) }) }
    }

    @Test func aVersionShownInAnErrorIsPrintableText() {
        let error = HostAnnouncementError.unsupportedVersion("\u{1b}[2Jx")
        #expect(!error.description.unicodeScalars.contains { $0.value < 0x20 })
        #expect(throws: HostAnnouncementError.self) {
            try HostAnnouncementRecord(txt: [[UInt8(ascii: "v"), UInt8(ascii: "="), 0xFF, 0x1B]])
        }
    }

    @Test func anyBytesDecodeToARecordOrATypedError() {
        var random = SplitMix64(seed: 20)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...6, using: &random)
            var entries: [[UInt8]] = (0..<count).map { _ in
                (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            // Some well-formed entries among the noise, so the later checks are reached too.
            if Bool.random(using: &random) { entries.insert(Array("v=1".utf8), at: 0) }
            if Bool.random(using: &random) { entries.append(Array("fp=\(Self.fingerprintHex)".utf8)) }
            do {
                let record = try HostAnnouncementRecord(txt: entries)
                #expect(try HostAnnouncementRecord(txt: record.txtEntries) == record)
            } catch {
                _ = error.description
            }
        }
    }

    @Test(arguments: [
        ("gaming-pc", "gaming-pc"),
        ("Wohnzimmer-PC (Küche)", "Wohnzimmer-PC (Küche)"),
    ])
    func serviceNamesDecode(text: String, expected: String) throws {
        #expect(try AnnouncedServiceName.decode(Array(text.utf8)) == expected)
    }

    @Test func serviceNamesThatCannotBeShownAreRefused() {
        #expect(throws: AnnouncedServiceNameError.empty) { try AnnouncedServiceName.decode([]) }
        #expect(throws: AnnouncedServiceNameError.tooLong(byteCount: 64)) {
            try AnnouncedServiceName.decode([UInt8](repeating: UInt8(ascii: "a"), count: 64))
        }
        #expect(throws: AnnouncedServiceNameError.notUTF8) { try AnnouncedServiceName.decode([0x61, 0xC3]) }
        #expect(throws: AnnouncedServiceNameError.controlCharacter) {
            try AnnouncedServiceName.decode(Array("pc\u{1b}[31m".utf8))
        }
        #expect(throws: AnnouncedServiceNameError.controlCharacter) { try AnnouncedServiceName.decode([0x61, 0x7F]) }
    }

    /// A right-to-left override or a zero-width character makes one name look like another in a table of hosts.
    @Test(arguments: ["\u{202E}cp-gnimag", "gaming\u{200B}-pc", "gaming-pc\u{2066}", "\u{FEFF}gaming-pc", "gam\u{00AD}ing"])
    func namesWithFormatCharactersAreRefusedAndNeverPublished(name: String) {
        #expect(throws: AnnouncedServiceNameError.formatCharacter) { try AnnouncedServiceName.decode(Array(name.utf8)) }
        let published = AnnouncedServiceName.publishable(name)
        #expect(!published.unicodeScalars.contains { $0.properties.generalCategory == .format }, "\(published)")
        #expect((try? AnnouncedServiceName.decode(Array(published.utf8))) == published)
    }

    @Test func anyBytesDecodeToANameOrATypedError() {
        var random = SplitMix64(seed: 21)
        for _ in 0..<5_000 {
            let bytes = (0..<Int.random(in: 0...70, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            if let name = try? AnnouncedServiceName.decode(bytes) {
                #expect(Array(name.utf8) == bytes)
                #expect(!name.unicodeScalars.contains { $0.value < 0x20 || ($0.value >= 0x7F && $0.value < 0xA0) })
            }
        }
    }

    @Test func aNameToAnnounceIsCutAtACharacterAndCleaned() throws {
        #expect(AnnouncedServiceName.publishable("gaming-pc") == "gaming-pc")
        #expect(AnnouncedServiceName.publishable("  ") == "padbridge")
        #expect(AnnouncedServiceName.publishable("a\tb\u{7}") == "a b")
        let long = String(repeating: "ü", count: 40)  // 80 bytes
        let cut = AnnouncedServiceName.publishable(long)
        #expect(cut.utf8.count == 62 && cut == String(repeating: "ü", count: 31))
        #expect(try AnnouncedServiceName.decode(Array(cut.utf8)) == cut)
    }
}
