import PadCore
import Testing

/// What connect keeps of the announcements while it looks for its paired host (issue 31, findings 5 and 8): bounded
/// whatever is announced, updated from each change alone, impostors reported once per name.
@Suite struct PairedHostSightingsTests {
    typealias Table = AnnouncedHostTableTests

    static func address(_ index: Int) -> AnnouncedAddress {
        AnnouncedAddress(family: .ipv4, text: "192.0.2.\(index % 250 + 1)", isLinkLocal: false, interface: "eth\(index / 250)")
    }

    @Test func hostsAnnouncingTheKeyAreKeptAndForgottenAsTheyComeAndGo() throws {
        var table = AnnouncedHostTable()
        var sightings = PairedHostSightings(fingerprint: Table.keyA, pairedName: "gaming-pc")
        let appearedChange = table.resolved(Table.instance("gaming-pc"), port: 48100, address: Self.address(1), txt: Table.txt(Table.keyA))
        let appeared = try #require(appearedChange)
        #expect(sightings.apply(appeared).carryingChanged)
        // Anyone may announce the key under another name: kept too (the handshake decides), the stored address first.
        let forgedChange = table.resolved(Table.instance("forged"), port: 48100, address: Self.address(2), txt: Table.txt(Table.keyA))
        let forged = try #require(forgedChange)
        #expect(sightings.apply(forged).carryingChanged)
        #expect(sightings.carrying.map(\.name) == ["gaming-pc", "forged"])
        let leftChange = table.removed(Table.instance("forged"))
        let left = try #require(leftChange)
        #expect(sightings.apply(left).carryingChanged)
        #expect(sightings.carrying.map(\.name) == ["gaming-pc"])
        // Another key under another name: nothing to keep or say.
        let otherChange = table.resolved(Table.instance("other"), port: 48100, address: Self.address(3), txt: Table.txt(Table.keyB))
        let other = try #require(otherChange)
        let outcome = sightings.apply(other)
        #expect(!outcome.carryingChanged && outcome.impostor == nil)
    }

    @Test func aFloodOfAnnouncementsKeepsWhatIsKeptBounded() throws {
        var table = AnnouncedHostTable()
        var sightings = PairedHostSightings(fingerprint: Table.keyA, pairedName: "gaming-pc")
        for index in 0..<1_000 {
            let instance = AnnouncedHostTable.Instance(interfaceIndex: Int32(index % 7), overIPv6: false, name: "flood \(index % 100)", domain: "local")
            if let change = table.resolved(instance, port: 48100, address: Self.address(index), txt: Table.txt(Table.keyA)) {
                _ = sightings.apply(change)
            }
        }
        #expect(table.count == 100)
        #expect(sightings.carrying.count == PairedHostSightings.maximumHosts)
        #expect(sightings.carrying.allSatisfy { $0.addresses.count <= PairedHostSightings.maximumAddressesPerHost })
    }

    @Test func anImpostorUnderThePairedNameIsReportedOnceEvenWhenItsKeyKeepsChanging() throws {
        var table = AnnouncedHostTable()
        var sightings = PairedHostSightings(fingerprint: Table.keyA, pairedName: "gaming-pc")
        var reported = 0
        for round in 0..<50 {
            let digits = String(round + 1, radix: 16)
            let key = KeyFingerprint(hex: String(repeating: "0", count: 32 - digits.count) + digits)!
            if let change = table.resolved(Table.instance("Gaming-PC"), port: 48100, address: Self.address(1), txt: Table.txt(key)),
                sightings.apply(change).impostor != nil
            {
                reported += 1
            }
        }
        #expect(reported == 1)
        #expect(sightings.carrying.isEmpty)
    }
}
