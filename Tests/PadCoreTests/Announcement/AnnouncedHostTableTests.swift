import PadCore
import Testing

@Suite struct AnnouncedHostTableTests {
    static let keyA = KeyFingerprint(hex: "66687aadf862bd776c8fc18b8e9f8e20")!
    static let keyB = KeyFingerprint(hex: "0123456789abcdef0123456789abcdef")!

    static func txt(_ key: KeyFingerprint, open: Bool = false) -> [[UInt8]] {
        HostAnnouncementRecord(fingerprint: key, pairingOpen: open).txtEntries
    }

    static let v4 = AnnouncedAddress(family: .ipv4, text: "192.0.2.2", isLinkLocal: false, interface: "eth0")
    static let v6 = AnnouncedAddress(family: .ipv6, text: "fe80::1", isLinkLocal: true, interface: "eth0")
    static let v6global = AnnouncedAddress(family: .ipv6, text: "2001:db8::2", isLinkLocal: false, interface: "eth0")

    static func instance(_ name: String, ipv6: Bool = false) -> AnnouncedHostTable.Instance {
        .init(interfaceIndex: 2, overIPv6: ipv6, name: name, domain: "local")
    }

    @Test func sightingsOfOneNameAreOneHostWithEveryAddressBestFirst() throws {
        var table = AnnouncedHostTable()
        let first = table.resolved(Self.instance("pc", ipv6: true), port: 48100, address: Self.v6, txt: Self.txt(Self.keyA))
        #expect(first == .appeared(AnnouncedHost(
            name: "pc", domain: "local", port: 48100, addresses: [Self.v6], record: .success(.init(fingerprint: Self.keyA, pairingOpen: false)))))
        let second = table.resolved(Self.instance("pc"), port: 48100, address: Self.v4, txt: Self.txt(Self.keyA))
        guard case let .changed(host)? = second else { Issue.record("expected a change, got \(String(describing: second))"); return }
        #expect(host.addresses == [Self.v4, Self.v6])
        #expect(table.hosts.count == 1)
        // The same again changes nothing.
        #expect(table.resolved(Self.instance("pc"), port: 48100, address: Self.v4, txt: Self.txt(Self.keyA)) == nil)
    }

    @Test func aPairingWindowOpeningIsAChangeAndTheLastSightingLeaving() throws {
        var table = AnnouncedHostTable()
        table.resolved(Self.instance("pc"), port: 48100, address: Self.v4, txt: Self.txt(Self.keyA))
        table.resolved(Self.instance("pc", ipv6: true), port: 48100, address: Self.v6, txt: Self.txt(Self.keyA))
        let opened = table.resolved(Self.instance("pc"), port: 48100, address: Self.v4, txt: Self.txt(Self.keyA, open: true))
        guard case let .changed(host)? = opened else { Issue.record("\(String(describing: opened))"); return }
        #expect(host.pairingOpen)
        guard case let .changed(after)? = table.removed(Self.instance("pc", ipv6: true)) else { Issue.record("no change"); return }
        #expect(after.addresses == [Self.v4])
        guard case let .left(gone)? = table.removed(Self.instance("pc")) else { Issue.record("not gone"); return }
        #expect(gone.name == "pc" && table.hosts.isEmpty)
        #expect(table.removed(Self.instance("pc")) == nil)
    }

    @Test func anUnreadableAnnouncementIsListedWithWhy() {
        var table = AnnouncedHostTable()
        table.resolved(Self.instance("odd"), port: 1, address: nil, txt: [Array("v=9".utf8)])
        #expect(table.hosts.first?.record == .failure(.unsupportedVersion("9")))
        #expect(table.hosts.first?.fingerprint == nil)
    }

    @Test func addressesSortIPv4ThenGlobalThenLinkLocal() {
        #expect([Self.v6, Self.v6global, Self.v4].sorted() == [Self.v4, Self.v6global, Self.v6])
        #expect(Self.v6.endpoint(port: 48100) == "[fe80::1%eth0]:48100")
        #expect(Self.v4.endpoint(port: 48100) == "192.0.2.2:48100")
    }

    static func hosts(_ names: String...) -> [AnnouncedHost] {
        var table = AnnouncedHostTable()
        for (index, name) in names.enumerated() {
            table.resolved(Self.instance(name), port: 48100 + UInt16(index), address: Self.v4, txt: Self.txt(Self.keyA))
        }
        return table.hosts
    }

    @Test func aHostIsChosenByIndexNameOrAUniqueStart() {
        let hosts = Self.hosts("gaming-pc", "Game-Room", "laptop")
        #expect(hosts.map(\.name) == ["Game-Room", "gaming-pc", "laptop"])
        #expect(AnnouncedHostChoice.choose("1", from: hosts) == .host(hosts[1]))
        #expect(AnnouncedHostChoice.choose("7", from: hosts) == .noSuchIndex(7, count: 3))
        #expect(AnnouncedHostChoice.choose("GAMING-PC", from: hosts) == .host(hosts[1]))
        #expect(AnnouncedHostChoice.choose("lap", from: hosts) == .host(hosts[2]))
        #expect(AnnouncedHostChoice.choose("gam", from: hosts) == .ambiguous([hosts[0], hosts[1]]))
        #expect(AnnouncedHostChoice.choose("nas", from: hosts) == .none)
    }

    @Test func theHostsCarryingAKeyAndTheOnesUsingItsNameWithAnother() {
        var table = AnnouncedHostTable()
        table.resolved(Self.instance("pc"), port: 48100, address: Self.v4, txt: Self.txt(Self.keyB))
        table.resolved(Self.instance("pc (2)"), port: 48100, address: Self.v6global, txt: Self.txt(Self.keyA))
        table.resolved(Self.instance("other"), port: 48100, address: Self.v6, txt: [Array("v=1".utf8)])
        let hosts = table.hosts
        #expect(hosts.carrying(Self.keyA).map(\.name) == ["pc (2)"])
        #expect(hosts.named("PC", notCarrying: Self.keyA).map(\.name) == ["pc"])
        #expect(hosts.named("pc", notCarrying: Self.keyB).isEmpty)
        #expect(hosts.named("other", notCarrying: Self.keyA).map(\.name) == ["other"])
    }
}

@Suite struct HostAddressTrialsTests {
    @Test func theStoredAddressFirstThenEachAnnouncedOneThenRoundAgain() {
        var trials = HostAddressTrials(stored: "old", atMicroseconds: 0, trialMicroseconds: 1_000)
        #expect(trials.current == "old" && trials.deadlineMicroseconds == nil)
        // Announced while the stored address is still on trial: nothing changes yet.
        #expect(trials.announced(["new", "new6"], atMicroseconds: 500) == nil)
        #expect(trials.deadlineMicroseconds == 1_000)
        #expect(trials.next(atMicroseconds: 999) == nil)
        #expect(trials.next(atMicroseconds: 1_000) == "new")
        #expect(trials.next(atMicroseconds: 1_500) == nil)
        #expect(trials.next(atMicroseconds: 2_000) == "new6")
        #expect(trials.next(atMicroseconds: 3_000) == "old")
        #expect(trials.next(atMicroseconds: 4_000) == "new")
    }

    @Test func anAddressAnnouncedAfterTheStoredOneFailedIsTriedAtOnce() {
        var trials = HostAddressTrials(stored: "old", atMicroseconds: 0, trialMicroseconds: 1_000)
        #expect(trials.next(atMicroseconds: 5_000) == nil)
        #expect(trials.announced(["new"], atMicroseconds: 6_000) == "new")
        #expect(trials.current == "new")
    }

    @Test func nothingAnnouncedMeansTheStoredAddressAlone() {
        var trials = HostAddressTrials(stored: "old", atMicroseconds: 0, trialMicroseconds: 1_000)
        #expect(trials.announced([], atMicroseconds: 2_000) == nil)
        #expect(trials.announced(["old"], atMicroseconds: 3_000) == nil)
        #expect(trials.deadlineMicroseconds == nil && trials.current == "old")
    }
}
