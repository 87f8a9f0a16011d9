import PadCore
import PadTestSupport
import Testing

@Suite struct NodeHidingTests {
    @Test(arguments: [
        ("/dev/hidraw3", true), ("/dev/input/event12", true), ("/dev/hidraw0", true),
        ("/dev/hidraw", false), ("/dev/hidraw03", false), ("/dev/hidraw3/", false), ("/dev/input/../hidraw3", false),
        ("/dev/input/event-1", false), ("/dev/input/js0", false), ("/etc/passwd", false), ("/dev/hidraw1234567", false),
        ("/dev/input/event 1", false), ("dev/hidraw3", false),
    ])
    func onlyHidrawAndEventNodesSpelledExactly(path: String, accepted: Bool) {
        let node = HideableNode(path: path)
        #expect((node != nil) == accepted, "\(path)")
        if let node { #expect(node.path == path) }
    }

    @Test func nodesNameTheirSysfsDevice() throws {
        #expect(try #require(HideableNode(path: "/dev/hidraw3")).sysfsClassPath == "/sys/class/hidraw/hidraw3")
        #expect(try #require(HideableNode(path: "/dev/input/event7")).sysfsClassPath == "/sys/class/input/event7")
    }

    @Test func messagesRoundTrip() {
        let messages: [NodeHidingMessage] = [
            .hide(["/dev/hidraw3", "/dev/input/event5"]), .show(["/dev/hidraw3"]), .hidden("/dev/hidraw3"),
            .shown("/dev/input/event5"), .refused("/dev/hidraw9", reason: "the requesting process does not hold it open"),
            .end,
        ]
        for message in messages {
            #expect(NodeHidingMessage(line: Substring(message.line)) == message, "\(message.line)")
        }
        #expect(NodeHidingMessage(line: "hide") == nil)
        #expect(NodeHidingMessage(line: "") == nil)
        #expect(NodeHidingMessage(line: "end now") == nil)
        #expect(NodeHidingMessage(line: "refused x line\nbreak") != nil, "a reason is the rest of the line")
        #expect(NodeHidingMessage.refused("x", reason: "two\nlines").line == "refused x two lines")
    }

    @Test func theRuleMatchesTheDevicePathAndTakesTheNodeFromEveryone() throws {
        let node = try #require(HideableNode(path: "/dev/hidraw3"))
        let devpath = "/devices/virtual/misc/uhid/0005:054C:0CE6.0003/hidraw/hidraw3"
        #expect(HiddenNodeRule.isMatchable(devpath))
        let text = HiddenNodeRule.text(for: node, devpath: devpath)
        #expect(text.contains(#"DEVPATH=="\#(devpath)""#))
        #expect(text.contains(#"MODE:="0000""#) && text.contains(#"OWNER:="root""#) && text.contains(#"ENV{ID_SEAT}="padbridge-hidden""#))
        #expect(HiddenNodeRule.fileName(for: node) == "72-padbridge-hidden-hidraw3.rules")
        // Sorts after 70-padbridge.rules and 60-steam-input.rules, before 73-seat-late.rules.
        #expect("70-padbridge.rules" < HiddenNodeRule.fileName(for: node))
        #expect(HiddenNodeRule.fileName(for: node) < "73-seat-late.rules")
    }

    @Test(arguments: [
        "/devices/a*b", "/devices/a?", "/devices/[ab]", "/devices/a b", #"/devices/a"b"#, "/sys/devices/x",
        "/devices/x/../y", "/devices/a|b",
    ])
    func devicePathsWithPatternCharactersAreNotMatched(devpath: String) {
        #expect(!HiddenNodeRule.isMatchable(devpath))
    }

    @Test func recordsRoundTrip() throws {
        let record = HiddenNodeRecord(
            node: try #require(HideableNode(path: "/dev/input/event5")),
            devpath: "/devices/virtual/misc/uhid/0005:054C:0CE6.0003/input/input12/event5", device: 3333, inode: 812,
            mode: 0o20660, uid: 0, gid: 105, accessACL: [2, 0, 0, 0, 1, 0, 6, 0, 255, 255, 255, 255])
        #expect(HiddenNodeRecord(line: Substring(record.line.dropLast())) == record)
        var without = record
        without.accessACL = nil
        #expect(without.line.contains(" acl=-"))
        #expect(HiddenNodeRecord(line: Substring(without.line.dropLast())) == without)
    }

    /// Any text in, a record or nil out (the service reads these files at start).
    @Test func recordsAreReadTotally() {
        var random = SplitMix64(seed: 0x41D_DE17)
        let good = "padbridge-hidden 1 path=/dev/hidraw3 devpath=/devices/x device=1 inode=2 mode=3 uid=4 gid=5 acl=-"
        #expect(HiddenNodeRecord(line: Substring(good)) != nil)
        for _ in 0..<2000 {
            var bytes = Array(good.utf8)
            for _ in 0..<Int(random.next() % 4) {
                let index = Int(random.next() % UInt64(bytes.count))
                bytes[index] = UInt8(truncatingIfNeeded: random.next())
            }
            _ = HiddenNodeRecord(line: Substring(String(decoding: bytes, as: UTF8.self)))
            _ = NodeHidingMessage(line: Substring(String(decoding: bytes, as: UTF8.self)))
        }
        #expect(HiddenNodeRecord(line: "padbridge-hidden 1 path=/etc/passwd devpath=/devices/x device=1 inode=2 mode=3 uid=4 gid=5 acl=-") == nil)
        #expect(HiddenNodeRecord(line: "padbridge-hidden 1 path=/dev/hidraw3 path=/dev/hidraw4") == nil)
    }
}
