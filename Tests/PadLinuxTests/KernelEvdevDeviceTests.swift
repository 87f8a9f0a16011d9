import CPadLinux
import Glibc
import PadCore
@testable import PadLinux
import PadLinuxTestSupport
import Testing

/// `EvdevDevice` on real event nodes (the VM): reading, SYN_DROPPED recovery, grabs, unplug, and evtest's own
/// output for the same events as the independent reader of `EvtestFormat`.
@Suite("EvdevDevice on a real kernel", .serialized, .tags(.kernel),
       .enabled(if: KernelAvailability.hasUinput && KernelAvailability.hasUhid, "needs writable /dev/uinput and /dev/uhid"))
final class KernelEvdevDeviceTests {
    let loop: DeviceEventLoop
    let pad: VirtualXbox360Pad
    let node: String

    init() throws {
        loop = try DeviceEventLoop()
        let (pad, nodes) = try KernelPads.xbox360(on: loop)
        self.pad = pad
        node = try #require(nodes.eventNodes.first)
    }

    deinit { pad.close() }

    static let key = UInt16(EV_KEY), absolute = UInt16(EV_ABS), synchronization = UInt16(EV_SYN)

    @Test func identityAndCapabilities() throws {
        let device = try EvdevDevice(path: node)
        #expect(device.name == "Microsoft X-Box 360 pad")
        #expect(device.bus == UInt16(BUS_USB) && device.vendor == 0x045E && device.product == 0x028E)
        #expect(device.version == 0x0114)
        #expect(device.driverVersion == 0x010001)
        let hasA = device.has(type: Self.key, code: UInt16(BTN_A))
        let hasTriggerHappy = device.has(type: Self.key, code: UInt16(BTN_TRIGGER_HAPPY1))
        #expect(hasA && !hasTriggerHappy)
        #expect(device.codes(ofType: Self.absolute)
            == [ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ, ABS_HAT0X, ABS_HAT0Y].map { UInt16($0) })
        #expect(device.codes(ofType: Self.key).count == 11)
        #expect(device.absoluteInfo(UInt16(ABS_X))
            == EvdevAbsoluteInfo(value: 0, minimum: -32768, maximum: 32767, fuzz: 16, flat: 128))
        #expect(device.absoluteInfo(UInt16(ABS_Z))?.maximum == 255)
        #expect(device.absoluteInfo(UInt16(ABS_MT_SLOT)) == nil)
        #expect(device.eventTypes.contains(UInt16(EV_FF)))
        #expect(device.properties.isEmpty)
    }

    @Test func openErrorsCarryRemedies() {
        do {
            _ = try EvdevDevice(path: "/dev/input/event999")
            Issue.record("opened a node that is not there")
        } catch {
            #expect(error.code == .missingDevice && error.remedy == .connectPad)
        }
        do {
            _ = try EvdevDevice(path: "/dev/null")
            Issue.record("/dev/null taken for an event node")
        } catch {
            #expect(error.code == .unsupported, "\(error)")
            #expect(error.description.contains("not an evdev event node"))
        }
    }

    @Test func watchedDeviceReadsInjectedEvents() throws {
        var readings: [EvdevReading] = []
        let watched = try loop.watch(try EvdevDevice(path: node)) { [loop] result in
            guard case let .events(batch) = result else { return }
            readings += batch
            if batch.last?.event.type == Self.synchronization { loop.stop() }
        }
        defer { watched.close() }
        try pad.apply(PadSnapshot(buttons: ButtonSet([.a]), leftX: -20000))
        #expect(try loop.run(forAtMost: 5))
        let events = readings.map { [Int32($0.event.type), Int32($0.event.code), $0.event.value] }
        #expect(events == [[EV_KEY, BTN_A, 1], [EV_ABS, ABS_X, -20000], [EV_SYN, SYN_REPORT, 0]])
        #expect(readings.allSatisfy { !$0.isResync })
        #expect(readings.allSatisfy { $0.event.seconds > 0 })
        #expect(try watched.withDevice { $0.currentValue(type: Self.key, code: UInt16(BTN_A)) } == 1)
    }

    /// Far more events than the kernel's buffer for this reader holds, written without reading: the kernel drops
    /// them and queues SYN_DROPPED; libevdev's catch-up must end in the state last injected.
    @Test func recoversFromDroppedEvents() throws {
        let device = try EvdevDevice(path: node)
        var expected = PadSnapshot()
        for index in 0..<3000 {
            // Consecutive stick values differ by far more than the fuzz (16), so the kernel passes every one on.
            expected = PadSnapshot(
                buttons: index % 2 == 0 ? ButtonSet([.a, .x]) : ButtonSet([.b]),
                leftX: Int16(truncatingIfNeeded: (index * 7919) % 60000 - 30000),
                rightY: Int16(truncatingIfNeeded: (index * 104_729) % 60000 - 30000))
            try pad.apply(expected)
        }
        expected = PadSnapshot(buttons: ButtonSet([.b, .y]), leftX: 12345, rightY: -23456, rightTrigger: 32767)
        try pad.apply(expected)

        var readings: [EvdevReading] = []
        while case let .events(batch) = try device.readAvailable(), !batch.isEmpty { readings += batch }
        let dropped = try #require(
            readings.firstIndex { $0.event.type == Self.synchronization && $0.event.code == UInt16(SYN_DROPPED) },
            "the kernel never dropped events (\(readings.count) read)")
        #expect(readings[dropped].isResync)
        let resync = readings[dropped...].prefix { $0.isResync }
        #expect(resync.count > 1, "libevdev's catch-up is handed on")
        #expect(resync.last?.event.type == Self.synchronization && resync.last?.event.code == UInt16(SYN_REPORT))

        // The last value seen of each code, starting from the neutral state the device was opened in.
        var seen: [[UInt16]: Int32] = [:]
        for reading in readings where reading.event.type != Self.synchronization {
            seen[[reading.event.type, reading.event.code]] = reading.event.value
        }
        let expectations: [(Int32, Int32, Int32)] = [
            (EV_KEY, BTN_A, 0), (EV_KEY, BTN_B, 1), (EV_KEY, BTN_X, 0), (EV_KEY, BTN_Y, 1),
            (EV_ABS, ABS_X, 12345), (EV_ABS, ABS_RY, -23456), (EV_ABS, ABS_RZ, 255),
        ]
        for (type, code, value) in expectations {
            let key = [UInt16(type), UInt16(code)]
            #expect((seen[key] ?? 0) == value, "last seen \(EvtestFormat.codeName(key[0], key[1]))")
            let current = device.currentValue(type: key[0], code: key[1])
            #expect(current == value, "libevdev's \(EvtestFormat.codeName(key[0], key[1]))")
        }
    }

    /// The catch-up after SYN_DROPPED on a multitouch node: every slot's full state, so a contact lifted in the
    /// dropped stretch reads lifted and the other one sits where it last was (a uhid DualSense's touchpad).
    @Test func catchUpRestoresEveryTouchSlot() throws {
        let (dualSense, nodes) = try KernelPads.dualSense(on: loop)
        defer { dualSense.close() }
        let touchpadPath = try #require(
            nodes.eventNodes.first { (try? EvdevDevice(path: $0).name.hasSuffix("Touchpad")) == true },
            "no touchpad node among \(nodes.eventNodes)")
        let touchpad = try EvdevDevice(path: touchpadPath)
        var assembler = EvdevSnapshotAssembler(
            layout: .playStation, absoluteInfo: [.touchpad: touchpad.info().absoluteInfo])

        // Both fingers down and moving, far more frames than the reader's buffer holds; then the first finger
        // moves once more and the second lifts.
        for index in 0..<1500 {
            let step = Double(index % 100) / 100
            try dualSense.apply(PadSnapshot(touches: TouchContacts(
                first: TouchContact(trackingID: 1, active: true, x: step, y: 1 - step),
                second: TouchContact(trackingID: 2, active: true, x: 1 - step, y: step))))
        }
        try dualSense.apply(PadSnapshot(touches: TouchContacts(
            first: TouchContact(trackingID: 1, active: true, x: 0.25, y: 0.75), second: .lifted)))

        var readings: [EvdevReading] = []
        while case let .events(batch) = try touchpad.readAvailable(), !batch.isEmpty { readings += batch }
        #expect(readings.contains { $0.event.type == Self.synchronization && $0.event.code == UInt16(SYN_DROPPED) },
                "the kernel never dropped events (\(readings.count) read)")
        for reading in readings { assembler.apply(reading.event, from: .touchpad) }

        let touches = assembler.snapshot.touches
        #expect(touches.first.active)
        #expect(abs(touches.first.x - 0.25) < 0.01 && abs(touches.first.y - 0.75) < 0.01, "\(touches.first)")
        #expect(!touches.second.active, "the second finger lifted while events were dropped: \(touches.second)")
    }

    @Test func grabHidesEventsFromOtherReaders() throws {
        let device = try EvdevDevice(path: node)
        let other = try EvdevReader(node)
        let rival = try EvdevDevice(path: node)
        try device.withGrab { () throws(DeviceAccessError) in
            try pad.apply(PadSnapshot(buttons: ButtonSet([.start])))
            do throws(DeviceAccessError) {
                try rival.grab()
                Issue.record("a second grab succeeded")
            } catch {
                #expect(error.code == .busy)
                // Held by this very process: no other program to name, so the message says how to find one.
                #expect(error.remedy == .closeOtherProgram(nil))
                #expect(error.description.contains("fuser -v \(node)"))
            }
        }
        #expect(other.pendingEvents().isEmpty, "a grab hides the events from other readers")
        guard case let .events(grabbed) = try device.readAvailable() else { Issue.record("unplugged?"); return }
        #expect(grabbed.contains { $0.event.type == Self.key && $0.event.code == UInt16(BTN_START) && $0.event.value == 1 })
        // Released: everyone sees events again.
        try pad.apply(PadSnapshot())
        #expect(other.pendingEvents().contains { Int32($0.type) == EV_KEY && Int32($0.code) == BTN_START && $0.value == 0 })
    }

    @Test func busyGrabNamesTheHoldingProgram() throws {
        let evtest = try ChildProcess(["/usr/bin/evtest", "--grab", node])
        #expect(try evtest.waitForLines(on: loop) { $0.contains("Testing ... (interrupt to exit)") })
        // evtest grabs just after that line and then prints nothing more: try until its grab is in place.
        let device = try EvdevDevice(path: node)
        var caught: DeviceAccessError?
        for _ in 0..<200 where caught == nil {
            do throws(DeviceAccessError) {
                try device.grab()
                try device.ungrab()
            } catch {
                caught = error
                break
            }
            try loop.run(milliseconds: 25)
        }
        let error = try #require(caught, "evtest --grab never held the device")
        #expect(error.code == .busy)
        #expect(error.remedy == .closeOtherProgram("evtest (pid \(evtest.pid))"))
        #expect(error.description.contains("evtest (pid \(evtest.pid)) holds it exclusively"))
        evtest.terminate()
    }

    @Test func unplugIsALifecycleEvent() throws {
        var results: [EvdevReadResult] = []
        let watched = try loop.watch(try EvdevDevice(path: node)) { [loop] result in
            results.append(result)
            if result == .unplugged { loop.stop() }
        }
        defer { watched.close() }
        try pad.apply(PadSnapshot(buttons: ButtonSet([.a])))
        pad.close()
        #expect(try loop.run(forAtMost: 5), "no .unplugged after the pad was destroyed")
        #expect(results.last == .unplugged)
        #expect(results.filter { $0 == .unplugged }.count == 1)
        #expect(!watched.isWatching)
        let afterwards = try watched.withDevice { device throws(DeviceAccessError) in try device.readAvailable() }
        #expect(afterwards == .unplugged)
    }

    // MARK: - evtest as the reference

    /// Compares line by line, exactly: evtest 1.35 and libevdev name every code these pads have alike (BTN_SOUTH,
    /// not BTN_A; ABS_MT_POSITION_X; INPUT_PROP_ACCELEROMETER), so no line needs translating. Records each
    /// difference with both lines.
    static func compare(_ ours: [String], _ theirs: [String], what: String) {
        #expect(ours.count == theirs.count, "\(what): \(ours.count) lines from padbridge, \(theirs.count) from evtest")
        for (index, (mine, reference)) in zip(ours, theirs).enumerated() where mine != reference {
            Issue.record("\(what) line \(index):\n  padbridge: \(mine)\n  evtest:    \(reference)")
        }
    }

    /// Starts evtest on `path`, returns it with its header (the lines before "Testing ...").
    func startEvtest(_ path: String) throws -> (ChildProcess, [String]) {
        let evtest = try ChildProcess(["/usr/bin/evtest", path])
        #expect(try evtest.waitForLines(on: loop) { $0.contains("Testing ... (interrupt to exit)") },
                "evtest printed \(evtest.lines)")
        return (evtest, Array(evtest.lines.prefix { !$0.hasPrefix("Testing ...") }))
    }

    @Test func evtestPrintsTheSameForAnXbox360Pad() throws {
        let device = try EvdevDevice(path: node)
        let (evtest, header) = try startEvtest(node)
        Self.compare(EvtestFormat.headerLines(device.info()), header, what: "header")

        try pad.apply(PadSnapshot(buttons: ButtonSet([.a, .y, .guide, .dpup]), leftX: -32768, rightY: 32767,
                                  leftTrigger: 32767))
        try pad.apply(PadSnapshot(buttons: ButtonSet([.b, .leftshoulder, .back]), leftY: 1234, rightTrigger: 16000))
        try pad.apply(PadSnapshot())
        // uinput writes reach every reader's queue before apply returns: ours is complete now.
        let ourLines = try Self.drainedLines(device)
        #expect(ourLines.count > 12)
        let theirs: () -> [String] = { evtest.lines.filter { $0.hasPrefix("Event: ") } }
        #expect(try evtest.waitForLines(on: loop) { _ in theirs().count >= ourLines.count }, "evtest printed \(theirs())")
        Self.compare(ourLines, theirs(), what: "events")
        evtest.terminate()
    }

    @Test func evtestPrintsTheSameForADualSense() throws {
        let (dualSense, nodes) = try KernelPads.dualSense(on: loop)
        defer { dualSense.close() }
        // Headers of all three nodes: buttons and sticks; sensors with resolutions, MSC_TIMESTAMP and
        // INPUT_PROP_ACCELEROMETER; the touchpad's multitouch axes and its properties.
        for path in nodes.eventNodes.prefix(3) {
            let device = try EvdevDevice(path: path)
            let (evtest, header) = try startEvtest(path)
            Self.compare(EvtestFormat.headerLines(device.info()), header, what: "header of \(path)")
            evtest.terminate()
        }
        // Events on the gamepad node, which changes only when the pad's state does. A uhid input report is parsed
        // by hid-playstation within the write, so our queue is complete when apply returns.
        let gamepad = try EvdevDevice(path: nodes.eventNodes[0])
        let (evtest, _) = try startEvtest(nodes.eventNodes[0])
        try dualSense.apply(PadSnapshot(buttons: ButtonSet([.a, .b, .x, .y, .touchpad]), leftX: 32767, rightTrigger: 32767))
        try dualSense.apply(PadSnapshot())
        let ourLines = try Self.drainedLines(gamepad)
        #expect(!ourLines.isEmpty)
        let theirs: () -> [String] = { evtest.lines.filter { $0.hasPrefix("Event: ") } }
        #expect(try evtest.waitForLines(on: loop) { _ in theirs().count >= ourLines.count }, "evtest printed \(theirs())")
        Self.compare(ourLines, theirs(), what: "DualSense gamepad events")
        evtest.terminate()
    }

    static func drainedLines(_ device: borrowing EvdevDevice) throws -> [String] {
        guard case let .events(readings) = try device.readAvailable() else { return [] }
        return readings.map { EvtestFormat.eventLine($0.event) }
    }
}
