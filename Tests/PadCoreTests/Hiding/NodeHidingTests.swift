import PadCore
import PadTestSupport
import Testing

@Suite struct NodeHidingTests {
    @Test(arguments: [
        ("/dev/hidraw3", true), ("/dev/input/event12", true), ("/dev/hidraw0", true),
        ("/dev/hidraw", false), ("/dev/hidraw03", false), ("/dev/hidraw3/", false), ("/dev/input/../hidraw3", false),
        ("/dev/input/event-1", false), ("/dev/input/js0", true), ("/dev/input/js12", true), ("/dev/input/js", false),
        ("/dev/input/js01", false), ("/dev/input/jsx", false), ("/dev/input/mouse0", false), ("/dev/js0", false),
        ("/etc/passwd", false), ("/dev/hidraw1234567", false), ("/dev/input/event 1", false), ("dev/hidraw3", false),
    ])
    func onlyHidrawEventAndJoystickNodesSpelledExactly(path: String, accepted: Bool) {
        let node = HideableNode(path: path)
        #expect((node != nil) == accepted, "\(path)")
        if let node { #expect(node.path == path) }
    }

    @Test func nodesNameTheirSysfsDevice() throws {
        #expect(try #require(HideableNode(path: "/dev/hidraw3")).sysfsClassPath == "/sys/class/hidraw/hidraw3")
        #expect(try #require(HideableNode(path: "/dev/input/event7")).sysfsClassPath == "/sys/class/input/event7")
        let joystick = try #require(HideableNode(path: "/dev/input/js2"))
        #expect(joystick.sysfsClassPath == "/sys/class/input/js2" && joystick.name == "js2" && joystick.kind == .joystick)
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
        let fileName = HiddenNodeRule.fileName(for: node, inode: 812)
        #expect(fileName == "72-padbridge-hidden-hidraw3-812.rules")
        // A node unplugged while hidden and a new one given its name have a file each.
        #expect(HiddenNodeRule.fileName(for: node, inode: 813) != fileName)
        // Sorts after 70-padbridge.rules and 60-steam-input.rules, before 73-seat-late.rules.
        #expect("70-padbridge.rules" < fileName)
        #expect(fileName < "73-seat-late.rules")
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

    // MARK: Which nodes may be hidden

    static let gamepad = InputDeviceCapabilities(
        keys: InputCapabilityBitmap(codes: Array(0x130...0x13e)), absolutes: InputCapabilityBitmap(codes: [0, 1, 2, 3, 4, 5]))
    static let motion = InputDeviceCapabilities(
        absolutes: InputCapabilityBitmap(codes: [0, 1, 2, 3, 4, 5]), properties: InputCapabilityBitmap(codes: [6]))
    static let touchpad = InputDeviceCapabilities(
        keys: InputCapabilityBitmap(codes: [0x110, 0x14a, 0x145]), absolutes: InputCapabilityBitmap(codes: [0x2f, 0x35, 0x36, 0x39]))
    static let keyboard = InputDeviceCapabilities(keys: InputCapabilityBitmap(codes: (1...120).map { UInt16($0) }))
    static let mouse = InputDeviceCapabilities(
        keys: InputCapabilityBitmap(codes: [0x110, 0x111, 0x112]), relatives: InputCapabilityBitmap(codes: [0, 1, 8]))

    @Test func aGamepadAndItsMotionAndTouchpadNodesMayBeHidden() {
        #expect(HidingEligibility.refusal(eventNode: Self.gamepad, siblings: []) == nil)
        #expect(HidingEligibility.refusal(eventNode: Self.motion, siblings: [Self.gamepad, Self.touchpad]) == nil)
        #expect(HidingEligibility.refusal(eventNode: Self.touchpad, siblings: [Self.gamepad, Self.motion]) == nil)
    }

    @Test func aKeyboardOrAMouseIsNeverHiddenEvenBesideAGamepad() throws {
        let keyboard = try #require(HidingEligibility.refusal(eventNode: Self.keyboard, siblings: [Self.gamepad]))
        #expect(keyboard.contains("keyboard"))
        let mouse = try #require(HidingEligibility.refusal(eventNode: Self.mouse, siblings: [Self.gamepad]))
        #expect(mouse.contains("mouse"))
        // A laptop's touchpad or accelerometer, with no game controller beside it.
        #expect(HidingEligibility.refusal(eventNode: Self.touchpad, siblings: [Self.keyboard]) != nil)
        #expect(HidingEligibility.refusal(eventNode: Self.motion, siblings: []) != nil)
        #expect(HidingEligibility.refusal(eventNode: InputDeviceCapabilities(), siblings: []) != nil)
    }

    @Test func aHidrawNodeMayBeHiddenOnlyWhenItIsAGameController() {
        // Usage Page (Generic Desktop), Usage (Game Pad), Collection (Application) ... End Collection
        let gamepad: [UInt8] = [0x05, 0x01, 0x09, 0x05, 0xA1, 0x01, 0x09, 0x30, 0x81, 0x02, 0xC0]
        // The Switch Pro Controller declares a joystick (0x04), with Logical Minimum before the usage.
        let joystick: [UInt8] = [0x05, 0x01, 0x15, 0x00, 0x09, 0x04, 0xA1, 0x01, 0xC0]
        // A keyboard, and a FIDO security key (usage page 0xF1D0, a 2-byte page).
        let keyboard: [UInt8] = [0x05, 0x01, 0x09, 0x06, 0xA1, 0x01, 0x05, 0x07, 0x81, 0x02, 0xC0]
        let fido: [UInt8] = [0x06, 0xD0, 0xF1, 0x09, 0x01, 0xA1, 0x01, 0x09, 0x20, 0x81, 0x02, 0xC0]
        #expect(HidingEligibility.refusal(hidrawDescriptor: gamepad, inputDevices: []) == nil)
        #expect(HidingEligibility.refusal(hidrawDescriptor: joystick, inputDevices: []) == nil)
        #expect(HidingEligibility.refusal(hidrawDescriptor: keyboard, inputDevices: [Self.keyboard]) != nil)
        #expect(HidingEligibility.refusal(hidrawDescriptor: fido, inputDevices: []) != nil)
        // A vendor-page descriptor (the Steam Deck's) whose HID device the kernel made a gamepad of.
        let vendor: [UInt8] = [0x06, 0x00, 0xFF, 0x09, 0x01, 0xA1, 0x01, 0xC0]
        #expect(HidingEligibility.refusal(hidrawDescriptor: vendor, inputDevices: [Self.gamepad]) == nil)
        #expect(HidingEligibility.refusal(hidrawDescriptor: vendor, inputDevices: [Self.mouse]) != nil)
    }

    @Test func applicationCollectionsAreReadAtTheTopLevelOnly() {
        // A mouse application holding a nested (physical) pointer collection, then a 4-byte usage with its own page.
        let descriptor: [UInt8] = [
            0x05, 0x01, 0x09, 0x02, 0xA1, 0x01, 0x09, 0x01, 0xA1, 0x00, 0xC0, 0xC0,
            0x0B, 0x05, 0x00, 0x01, 0x00, 0xA1, 0x01, 0xC0,
            0x09, 0x04, 0xA1, 0x02, 0xC0,  // a logical collection: not an application
        ]
        let summary = HIDReportDescriptorSummary(descriptor)
        #expect(summary.applicationCollections == [.mouse, .gamepad])
        #expect(summary.declaresGameController)
        #expect(HIDReportDescriptorSummary([0xA1]).applicationCollections.isEmpty, "a truncated item ends the walk")
    }
}
