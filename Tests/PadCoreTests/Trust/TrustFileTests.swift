import PadCore
import PadTestSupport
import Testing

@Suite struct TrustFileTests {
    static let keyHex = "8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f"

    @Test func hexRoundTripsAndRefusesWhatIsNotHex() {
        #expect(HexBytes.encode([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
        #expect(HexBytes.decode("000FA5ff") == [0x00, 0x0f, 0xa5, 0xff])
        #expect(HexBytes.decode("abc") == nil)
        #expect(HexBytes.decode("zz") == nil)
        #expect(LinkPublicKey(hex: Self.keyHex)?.hex == Self.keyHex)
        #expect(LinkPublicKey(hex: String(Self.keyHex.dropLast(2))) == nil)
    }

    @Test func pairedHostsParseWithCommentsBlankLinesAndNamesWithSpaces() throws {
        let text = """
            # hosts this machine paired with
            gaming-pc:48100 \(Self.keyHex) Living room PC

            [::1]:48100 \(Self.keyHex.uppercased())
            """
        let hosts = try TrustFileFormat.pairedHosts(from: text)
        #expect(hosts.count == 2)
        #expect(hosts[0] == PairedHost(address: "gaming-pc:48100", key: LinkPublicKey(hex: Self.keyHex)!, name: "Living room PC"))
        #expect(hosts[1].address == "[::1]:48100" && hosts[1].name.isEmpty)
        #expect(try TrustFileFormat.pairedHosts(from: TrustFileFormat.line(hosts[0])) == [hosts[0]])
    }

    @Test func aBrokenLineIsNamed() {
        #expect(throws: TextLineError(line: 3, problem: "the key must be 64 hex digits")) {
            try TrustFileFormat.pairedHosts(from: "# c\nhost:1 \(Self.keyHex) a\nhost:2 1234 b\n")
        }
        #expect(throws: TextLineError.self) { try TrustFileFormat.pairedClients(from: "notakey name") }
    }

    @Test func clientsRoundTripAndNamesAreOneLineOfText() throws {
        let client = PairedClient(key: LinkPublicKey(hex: Self.keyHex)!, name: "deck\nevil \u{7}line")
        let line = TrustFileFormat.line(client)
        #expect(!line.contains("\n") && !line.contains("\u{7}"))
        #expect(try TrustFileFormat.pairedClients(from: line + "\n").first?.name == "deck evil line")
    }

    /// A client's line carries when it was paired (UTC); a line from before that was recorded (`KEY NAME`) still
    /// loads, its date unknown, and is written back without one.
    @Test func clientsCarryTheirPairingDateAndOldLinesWithoutOneLoad() throws {
        let key = LinkPublicKey(hex: Self.keyHex)!
        let dated = PairedClient(key: key, name: "steam deck", pairedSinceEpochSeconds: 1_740_852_245)
        #expect(TrustFileFormat.line(dated) == "\(Self.keyHex) 2025-03-01T18:04:05Z steam deck")
        #expect(try TrustFileFormat.pairedClients(from: TrustFileFormat.line(dated) + "\n") == [dated])
        let old = try TrustFileFormat.pairedClients(from: "# clients\n\(Self.keyHex) steam deck\n\(Self.keyHex)\n")
        #expect(old == [PairedClient(key: key, name: "steam deck"), PairedClient(key: key, name: "")])
        #expect(TrustFileFormat.line(old[0]) == "\(Self.keyHex) steam deck")
        // Only a whole, real timestamp is a date: anything else is the start of the name.
        for name in ["2025-02-30T00:00:00Z x", "2025-03-01T18:04:05 x", "2025-03-01 x", "1740852245 x"] {
            #expect(try TrustFileFormat.pairedClients(from: "\(Self.keyHex) \(name)").first?.name == name)
        }
    }

    @Test func utcDatesMatchTheCalendar() {
        #expect(UTCDateText.timestamp(epochSeconds: 0) == "1970-01-01T00:00:00Z")
        #expect(UTCDateText.timestamp(epochSeconds: 951_782_400) == "2000-02-29T00:00:00Z")
        #expect(UTCDateText.readable(epochSeconds: 1_740_852_245) == "2025-03-01 18:04:05 UTC")
        #expect(UTCDateText.epochSeconds(fromTimestamp: "2000-02-29T00:00:00Z") == 951_782_400)
        #expect(UTCDateText.epochSeconds(fromTimestamp: "2100-02-29T00:00:00Z") == nil)
        #expect(UTCDateText.epochSeconds(fromTimestamp: "1969-12-31T23:59:59Z") == nil)
        var generator = SplitMix64(seed: 0xDA7E)
        for _ in 0..<2_000 {
            let seconds = UInt64.random(in: 0...253_402_300_799, using: &generator)
            #expect(UTCDateText.epochSeconds(fromTimestamp: UTCDateText.timestamp(epochSeconds: seconds)) == seconds)
        }
    }

    @Test func identityRoundTripsAndRefusesOtherText() throws {
        let key = (0..<32).map { UInt8($0) }
        #expect(try TrustFileFormat.privateKey(fromIdentity: TrustFileFormat.identityText(privateKey: key)) == key)
        #expect(throws: TextLineError.self) { try TrustFileFormat.privateKey(fromIdentity: "") }
        #expect(throws: TextLineError.self) { try TrustFileFormat.privateKey(fromIdentity: "ssh-ed25519 AAAA") }
    }

    /// Total: random text never traps (entries or a typed error).
    @Test func randomTextNeverTraps() {
        var generator = SplitMix64(seed: 0x7125_7F11)
        let pieces = ["\n", " ", "#", "\t", Self.keyHex, "host:1", "zz", "\u{0}", "é", "padbridge-identity-v1"]
        for _ in 0..<3_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                .joined()
            _ = try? TrustFileFormat.pairedHosts(from: text)
            _ = try? TrustFileFormat.pairedClients(from: text)
            _ = try? TrustFileFormat.privateKey(fromIdentity: text)
        }
    }
}

@Suite struct PairingCodeTests {
    @Test func seventyFiveBitsInThreeGroupsOfFive() throws {
        let code = try #require(PairingCode(randomBytes: [0xFF, 0x00, 0xAA, 0x55, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC]))
        // The first 75 bits in fives: 11111 11100 00000 01010 10100 10101 01000 10010 00110 10001 01011 00111 10001
        // 00110 10101, i.e. 31 28 0 10 20 21 8 18 6 17 11 7 17 6 21 in Crockford's alphabet.
        #expect(code.symbols == "ZW0AMN8J6HB7H6N")
        #expect(code.description == "ZW0AM-N8J6H-B7H6N")
        #expect(PairingCode.bitCount >= 60)
        #expect(PairingCode(randomBytes: [1, 2, 3]) == nil)
    }

    @Test func typingIsForgiving() throws {
        let code = try #require(PairingCode(typed: "ZW0AN-NH8T5-CY4TQ"))
        #expect(PairingCode(typed: "zwoan nh8t5 cy4tq") == code)
        #expect(PairingCode(typed: "ZW0AN-NH8T5-CY4T") == nil)
        #expect(PairingCode(typed: "ZW0AN-NH8T5-CY4TU") == nil)
        #expect(PairingCode(typed: "1LI00-00000-00000") == PairingCode(typed: "11100-00000-00000"))
        #expect(code.keyMaterial == Array("padbridge pairing code v1:ZW0ANNH8T5CY4TQ".utf8))
    }

    @Test func everySymbolIsReachableAndCodesDiffer() {
        var generator = SplitMix64(seed: 0xC0DE)
        var seen = Set<Character>()
        var codes = Set<String>()
        for _ in 0..<2_000 {
            let code = PairingCode(randomBytes: generator.bytes(10))!
            seen.formUnion(code.symbols)
            codes.insert(code.symbols)
        }
        #expect(seen.count == 32)
        #expect(codes.count == 2_000)
    }
}
