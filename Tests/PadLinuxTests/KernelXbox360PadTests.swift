import CPadLinux
import Glibc
import Logging
import PadCore
@testable import PadLinux
import PadLinuxTestSupport
import NIOConcurrencyHelpers
import SystemPackage
import Testing

/// Drives a real uinput device (run inside the VM: see kernel-bench.md). Independent reader: plain evdev ioctls.
@Suite("Virtual Xbox 360 pad on a real kernel", .serialized, .tags(.kernel),
       .enabled(if: KernelAvailability.hasUinput, "needs a writable /dev/uinput"))
final class KernelXbox360PadTests {
    let loop: DeviceEventLoop
    let pad: VirtualXbox360Pad
    let nodes: VirtualPadNodes
    var feedback: [Rumble] = []
    var onRumble: ((Rumble) -> Void)?

    init() throws {
        let loop = try DeviceEventLoop()
        var nodes: VirtualPadNodes?
        var logger = Logger(label: "kernel-test")
        logger.logLevel = .debug
        weak var box: KernelXbox360PadTests?
        let collector: (FeedbackEvent) -> Void = { event in
            if case let .rumble(rumble) = event {
                box?.feedback.append(rumble)
                box?.onRumble?(rumble)
            }
        }
        pad = try VirtualXbox360Pad.create(
            name: nil, loop: loop, logger: logger, onFeedback: collector,
            onReady: { ready in
                nodes = ready
                loop.stop()
            })
        self.loop = loop
        #expect(try loop.run(forAtMost: 5))
        self.nodes = try #require(nodes)
        box = self
    }

    deinit { pad.close() }

    @Test func capabilitiesMatchXpad() throws {
        #expect(nodes.eventNodes.count == 1)
        #expect(nodes.hidrawNode == nil)
        #expect(nodes.sysfsPath.hasPrefix("/sys/devices/virtual/input/input"))
        let reader = try EvdevReader(nodes.eventNodes[0])
        #expect(try reader.name == "Microsoft X-Box 360 pad")
        let id = try reader.id
        #expect(id.bustype == UInt16(BUS_USB) && id.vendor == 0x045E && id.product == 0x028E && id.version == 0x0114)
        #expect(try reader.capabilities(EV_KEY) == [
            BTN_A, BTN_B, BTN_X, BTN_Y, BTN_TL, BTN_TR, BTN_SELECT, BTN_START, BTN_MODE, BTN_THUMBL, BTN_THUMBR,
        ])
        #expect(try reader.capabilities(EV_ABS) == [ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ, ABS_HAT0X, ABS_HAT0Y])
        #expect(try reader.capabilities(EV_FF).isSuperset(of: [
            FF_RUMBLE, FF_PERIODIC, FF_SINE, FF_TRIANGLE, FF_SQUARE, FF_GAIN,
        ]))
        for stick in [ABS_X, ABS_Y, ABS_RX, ABS_RY] {
            let info = try reader.axis(stick)
            #expect(info.minimum == -32768 && info.maximum == 32767 && info.fuzz == 16 && info.flat == 128)
        }
        for trigger in [ABS_Z, ABS_RZ] {
            let info = try reader.axis(trigger)
            #expect(info.minimum == 0 && info.maximum == 255 && info.fuzz == 0 && info.flat == 0)
        }
        #expect(try reader.axis(ABS_HAT0X).minimum == -1 && reader.axis(ABS_HAT0Y).maximum == 1)
    }

    @Test func appliedStateIsReadable() throws {
        let reader = try EvdevReader(nodes.eventNodes[0])
        try pad.apply(PadSnapshot(
            buttons: ButtonSet([.a, .guide, .dpup, .dpright, .paddle1]), leftX: -20000, rightY: 12345,
            rightTrigger: 32767))
        // Read the queue before EVIOCGKEY/EVIOCGABS: evdev flushes queued events of the type a state ioctl reads.
        let events = reader.pendingEvents().map { [Int32($0.type), Int32($0.code), $0.value] }
        #expect(events.contains([EV_KEY, BTN_A, 1]))
        #expect(events.contains([EV_KEY, BTN_MODE, 1]))
        #expect(events.last == [EV_SYN, SYN_REPORT, 0])
        #expect(try reader.pressedKeys == [BTN_A, BTN_MODE])
        #expect(try reader.axis(ABS_X).value == -20000)
        #expect(try reader.axis(ABS_RY).value == 12345)
        #expect(try reader.axis(ABS_RZ).value == 255)
        #expect(try reader.axis(ABS_HAT0X).value == 1 && reader.axis(ABS_HAT0Y).value == -1)

        // State-based: what is not in the next snapshot is released, and only changes are written.
        try pad.apply(PadSnapshot(buttons: ButtonSet([.b]), leftX: -20000))
        let second = reader.pendingEvents().map { [Int32($0.type), Int32($0.code), $0.value] }
        #expect(try reader.pressedKeys == [BTN_B])
        #expect(!second.contains { $0[0] == EV_ABS && $0[1] == ABS_X }, "unchanged axis not re-sent")
        #expect(second.contains([EV_KEY, BTN_A, 0]) && second.contains([EV_ABS, ABS_RZ, 0]))
    }

    /// A client uploads and plays a rumble effect (EVIOCSFF blocks until the pad answers on the loop thread).
    @Test func forceFeedbackUploadAndPlay() throws {
        let path = nodes.eventNodes[0]
        let clientResult = NIOLockedValueBox<String?>(nil)
        let done = Gate()
        onRumble = { [loop] rumble in if !rumble.isOff { loop.stop() } }
        // The client keeps its fd open until the test has seen the rumble: closing it erases its effects.
        let client = ClientThread {
            do {
                let reader = try EvdevReader(path, writable: true)
                let id = try reader.upload(EvdevReader.rumble(strong: 0x8000, weak: 0x4000))
                try reader.write(type: EV_FF, code: Int32(id), value: 1)
                clientResult.withLockedValue { $0 = "played \(id)" }
                done.wait()
            } catch {
                clientResult.withLockedValue { $0 = "failed: \(error)" }
            }
        }
        let sawRumble = try loop.run(forAtMost: 10)
        done.open()
        #expect(sawRumble, "no rumble reported")
        // Closing the client's fd stops and erases its effect: the motors go quiet.
        onRumble = { [loop] rumble in if rumble.isOff { loop.stop() } }
        #expect(try loop.run(forAtMost: 10), "closing the client did not stop the rumble")
        client.join()
        #expect(feedback.last == .off)
        feedback.removeLast()
        #expect(clientResult.withLockedValue { $0 }?.hasPrefix("played") == true, "\(String(describing: clientResult.withLockedValue { $0 }))")
        let rumble = try #require(feedback.last)
        #expect(abs(rumble.strong - Double(0x8000) / 65535) < 0.001)
        #expect(abs(rumble.weak - Double(0x4000) / 65535) < 0.001)
    }

    /// replay.length ends the effect by itself (timerfd), and the pad reports the motors going quiet.
    @Test func effectLengthIsHonoured() throws {
        let path = nodes.eventNodes[0]
        var sawOn = false
        onRumble = { [loop] rumble in
            if !rumble.isOff { sawOn = true } else if sawOn { loop.stop() }
        }
        let start = MonotonicInstant.now()
        let done = Gate(), finished = Gate()
        let client = ClientThread {
            defer { finished.open() }
            guard let reader = try? EvdevReader(path, writable: true),
                let id = try? reader.upload(EvdevReader.rumble(strong: 0xFFFF, weak: 0, length: 150))
            else { return }
            try? reader.write(type: EV_FF, code: Int32(id), value: 1)
            done.wait()
        }
        let stopped = try loop.run(forAtMost: 10)
        done.open()
        // The client's close erases its effect, which blocks until the loop answers: keep servicing until it is done.
        let gate = try loop.makeWatch(finished.descriptorForPolling, path: "gate") { [loop] _ in loop.stop() }
        #expect(try loop.run(forAtMost: 10))
        gate.cancel()
        client.join()
        #expect(stopped, "the effect never stopped")
        let elapsedMilliseconds = (MonotonicInstant.now().nanoseconds - start.nanoseconds) / 1_000_000
        #expect(sawOn)
        #expect(elapsedMilliseconds >= 150)
        #expect(feedback.last == .off)
    }

    @Test func closeReleasesAndRemovesTheNode() throws {
        let reader = try EvdevReader(nodes.eventNodes[0])
        try pad.apply(PadSnapshot(buttons: ButtonSet([.x]), leftTrigger: 32767))
        _ = reader.pendingEvents()
        pad.close()
        // evdev refuses reads from a vanished device (ENODEV) even with events queued, so the release that close()
        // sends before UI_DEV_DESTROY cannot be observed here; the node must be gone.
        #expect(access(nodes.sysfsPath, F_OK) != 0)
        #expect(reader.readFailure() == .operationNotSupportedByDevice)
        pad.close()  // idempotent
    }
}
