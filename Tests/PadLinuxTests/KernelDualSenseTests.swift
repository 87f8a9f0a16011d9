import CPadLinux
import Glibc
import Logging
import PadCore
@testable import PadLinux
import PadLinuxTestSupport
import NIOConcurrencyHelpers
import SystemPackage
import Testing

/// Drives a real uhid device bound by hid-playstation (run inside the VM with `modprobe hid-playstation`).
/// Independent readers: the evdev nodes the kernel driver creates, and the hidraw node.
@Suite("Virtual DualSense on a real kernel", .serialized, .tags(.kernel),
       .enabled(if: KernelAvailability.hasUhid, "needs a writable /dev/uhid"))
final class KernelDualSenseTests {
    let loop: DeviceEventLoop
    let pad: VirtualDualSense
    let nodes: VirtualPadNodes
    var feedback: [FeedbackEvent] = []
    var onFeedback: ((FeedbackEvent) -> Void)?
    static let name = "Sony Interactive Entertainment DualSense Wireless Controller"

    init() throws {
        let loop = try DeviceEventLoop()
        var nodes: VirtualPadNodes?
        var logger = Logger(label: "kernel-test")
        logger.logLevel = .debug
        weak var box: KernelDualSenseTests?
        var early: [FeedbackEvent] = []
        pad = try VirtualDualSense.create(
            name: nil, seed: "kernel-test-\(getpid())-\(UInt64.random(in: 0...UInt64.max))", loop: loop,
            logger: logger,
            onFeedback: { event in
                if let box {
                    box.feedback.append(event)
                    box.onFeedback?(event)
                } else {
                    early.append(event)
                }
            },
            onReady: { ready in
                nodes = ready
                loop.stop()
            })
        self.loop = loop
        #expect(try loop.run(forAtMost: 30), "hid-playstation did not bind (is the module loaded?)")
        self.nodes = try #require(nodes)
        feedback = early
        box = self
    }

    deinit { pad.close() }

    @Test func hidPlaystationMadeAllNodes() throws {
        #expect(nodes.eventNodes.count >= 3)
        let hidraw = try #require(nodes.hidrawNode)
        #expect(hidraw.hasPrefix("/dev/hidraw"))
        #expect(nodes.sysfsPath.contains(":054C:0CE6."))
        let names = try nodes.eventNodes.prefix(3).map { try EvdevReader($0).name }
        #expect(names == [Self.name, "\(Self.name) Motion Sensors", "\(Self.name) Touchpad"])
        for node in nodes.eventNodes.prefix(3) {
            let reader = try EvdevReader(node)
            #expect(try reader.uniq == pad.macAddress)
            let id = try reader.id
            #expect(id.bustype == UInt16(BUS_BLUETOOTH) && id.vendor == 0x054C && id.product == 0x0CE6)
            #expect(id.version & 0x8000 != 0, "hid-playstation marks its mapping")
        }
        #expect(SysfsInputDevices.readAttribute("\(nodes.sysfsPath)/firmware_version") == "0x01100224")
    }

    /// hid-playstation sets the lightbar and player LEDs at probe; they must reach onFeedback.
    @Test func probeLedsArriveAsFeedback() throws {
        func seenBoth() -> Bool {
            feedback.contains { if case .lightbar = $0 { true } else { false } }
                && feedback.contains { if case .playerLeds = $0 { true } else { false } }
        }
        if !seenBoth() {
            onFeedback = { [loop] _ in if seenBoth() { loop.stop() } }
            #expect(try loop.run(forAtMost: 5))
        }
        #expect(feedback.contains(.lightbar(LightbarColor(red: 0, green: 0, blue: 128))))
    }

    @Test func appliedSnapshotShowsOnTheGamepadNode() throws {
        let gamepad = try EvdevReader(nodes.eventNodes[0])
        try pad.apply(PadSnapshot(
            buttons: ButtonSet([.a, .y, .guide, .dpup, .leftshoulder]), leftX: 32767, leftY: -32768,
            rightTrigger: 32767))
        // Read the queue first: EVIOCGKEY flushes queued key events.
        let events = gamepad.pendingEvents().map { [Int32($0.type), Int32($0.code), $0.value] }
        #expect(events.contains([EV_KEY, BTN_SOUTH, 1]))
        // The digital R2 bit follows the analog trigger.
        #expect(try gamepad.pressedKeys == [BTN_SOUTH, BTN_NORTH, BTN_MODE, BTN_TL, BTN_TR2])
        #expect(try gamepad.axis(ABS_X).value == 255)
        #expect(try gamepad.axis(ABS_Y).value == 0)
        #expect(try gamepad.axis(ABS_RZ).value == 255)
        #expect(try gamepad.axis(ABS_HAT0Y).value == -1)

        try pad.apply(.neutral)
        #expect(try gamepad.pressedKeys.isEmpty)
        #expect(try gamepad.axis(ABS_HAT0Y).value == 0)
    }

    /// Rumble through the kernel's own FF path: EVIOCSFF on the gamepad node → hid-playstation → UHID_OUTPUT.
    @Test func gamepadRumbleArrivesAsFeedback() throws {
        let gamepad = try EvdevReader(nodes.eventNodes[0], writable: true)
        // The rumble awaited is the first one not off: the loop may drain more reports in the same turn (an "off"
        // after it, when the machine is slow enough that the effect's end comes in the same batch).
        var awaited: Rumble?
        onFeedback = { [loop] event in
            if case let .rumble(rumble) = event, !rumble.isOff, awaited == nil {
                awaited = rumble
                loop.stop()
            }
        }
        let id = try gamepad.upload(EvdevReader.rumble(strong: 0xFFFF, weak: 0x8000))
        try gamepad.write(type: EV_FF, code: Int32(id), value: 1)
        #expect(try loop.run(forAtMost: 5), "no rumble output report")
        let rumble = try #require(awaited)
        #expect(rumble.strong == 1.0)
        #expect(abs(rumble.weak - 128.0 / 255) < 0.001)
    }

    /// The pad streams input reports (heartbeat) with a sensor clock past SDL's 10 200 000-tick threshold.
    @Test func hidrawSeesAStreamOfSealedReports() throws {
        let hidraw = try FileDescriptor.open(
            FilePath(try #require(nodes.hidrawNode)), .readWrite, options: [.nonBlocking, .closeOnExec])
        defer { try? hidraw.close() }
        var reports: [[UInt8]] = []
        let watch = try loop.makeWatch(hidraw, path: "hidraw") { [loop] _ throws(DeviceAccessError) in
            var buffer = [UInt8](repeating: 0, count: 128)
            if case let .success(count) = buffer.withUnsafeMutableBytes({ hidraw.readResult(into: $0) }) {
                reports.append(Array(buffer.prefix(count)))
                if reports.count >= 5 { loop.stop() }
            }
        }
        #expect(try loop.run(forAtMost: 5), "fewer than 5 reports in 5 s")
        watch.cancel()
        for report in reports {
            #expect(report.count == 78 && report[0] == 0x31)
            #expect(report.withUnsafeBytes { PlayStationCRC32.isValid($0, seed: PlayStationCRC32.inputSeed) })
        }
        let last = try #require(reports.last)
        let ticks = UInt32(last[29]) | UInt32(last[30]) << 8 | UInt32(last[31]) << 16 | UInt32(last[32]) << 24
        #expect(ticks > 10_200_000)

        // SDL's CRC-less "tickle" is dropped; a sealed SDL-layout report arrives as feedback.
        feedback.removeAll()
        var tickle = [UInt8](repeating: 0, count: 78)
        tickle[0] = 0x31
        tickle[1] = 0x02
        _ = try tickle.withUnsafeBytes { try hidraw.write($0) }
        let red = DualSenseOutputReport.encoded(
            Feedback(lightbar: LightbarColor(red: 255, green: 0, blue: 0)), layout: .bluetoothSDL2)
        onFeedback = { [loop] _ in loop.stop() }
        _ = try red.withUnsafeBytes { try hidraw.write($0) }
        #expect(try loop.run(forAtMost: 5))
        #expect(feedback == [.lightbar(LightbarColor(red: 255, green: 0, blue: 0))])
    }

    @Test func unknownFeatureRequestsFailFast() throws {
        let hidraw = try FileDescriptor.open(FilePath(try #require(nodes.hidrawNode)), .readWrite, options: [.closeOnExec])
        defer { try? hidraw.close() }
        // GET_REPORT blocks the caller until the pad answers on the loop thread: ask from another thread.
        let path = try #require(nodes.hidrawNode)
        let outcome = NIOLockedValueBox<(Int32, UInt64)?>(nil)
        let client = ClientThread {
            let fd = open(path, O_RDWR | O_CLOEXEC)
            var buffer = [UInt8](repeating: 0, count: 64)
            buffer[0] = 0x22
            let start = MonotonicInstant.now()
            let result = buffer.withUnsafeMutableBytes {
                CPadLinux_ioctlPointer(fd, CPadLinux_HIDIOCGFEATURE(64), $0.baseAddress)
            }
            let failure = result < 0 ? errno : 0
            close(fd)
            outcome.withLockedValue { $0 = (failure, (MonotonicInstant.now().nanoseconds - start.nanoseconds) / 1_000_000) }
        }
        try loop.run(milliseconds: 1500)
        client.join()
        let (failure, milliseconds) = try #require(outcome.withLockedValue { $0 })
        #expect(failure == EIO)
        #expect(milliseconds < 1000, "answered at once, not after uhid's 5 s timeout")
    }

    @Test func closeReleasesAndRemovesTheDevice() throws {
        let gamepad = try EvdevReader(nodes.eventNodes[0])
        try pad.apply(PadSnapshot(buttons: ButtonSet([.b]), leftTrigger: 32767))
        #expect(try gamepad.pressedKeys == [BTN_EAST, BTN_TL2])
        _ = gamepad.pendingEvents()
        pad.close()
        #expect(access(nodes.sysfsPath, F_OK) != 0)
        #expect(gamepad.readFailure() == .operationNotSupportedByDevice)
        pad.close()
    }

    /// hid-playstation binds the USB bus too (64-byte 0x01 reports, no CRCs); SDL would use its evdev node.
    @Test func usbBusBindsToo() throws {
        var nodes: VirtualPadNodes?
        let usbPad = try VirtualDualSense.create(
            name: "padbridge USB DualSense", seed: "kernel-test-usb-\(getpid())", bus: .usb, loop: loop,
            logger: Logger(label: "kernel-test"), onFeedback: { _ in },
            onReady: { [loop] ready in
                nodes = ready
                loop.stop()
            })
        defer { usbPad.close() }
        #expect(try loop.run(forAtMost: 30))
        let ready = try #require(nodes)
        let gamepad = try EvdevReader(ready.eventNodes[0])
        #expect(try gamepad.id.bustype == UInt16(BUS_USB))
        #expect(try gamepad.name == "padbridge USB DualSense")
        try usbPad.apply(PadSnapshot(buttons: ButtonSet([.x]), rightX: -32768))
        #expect(try gamepad.pressedKeys == [BTN_WEST])
        #expect(try gamepad.axis(ABS_RX).value == 0)
    }
}
