import Glibc
import Logging
import PadCore
import PadLinux
import PadSDL
import PadSessions
import PadLinuxTestSupport
import Testing

extension Tag {
    /// Needs a kernel with uinput/uhid (the QEMU VM): skipped elsewhere.
    @Tag static var kernel: Self
}

/// Set by scripts/kernel-suite in the VM: there these tests must run (a missing device fails them).
private var kernelSuiteRequired: Bool { getenv("PADBRIDGE_KERNEL_SUITE") != nil }

@Suite(
    "Virtual pad sessions on a real kernel", .serialized, .tags(.kernel),
    .enabled(if: kernelSuiteRequired || access("/dev/uinput", R_OK | W_OK) == 0, "needs /dev/uinput (the VM)"))
struct KernelVirtualPadSessionTests {
    /// A virtual Xbox 360 pad session, run until the kernel made its node.
    static func readySession(_ loop: DeviceEventLoop) throws -> (VirtualPadSession, String) {
        var nodes: VirtualPadNodes?
        let watchdog = try LoopWatchdog(loop, seconds: 20)
        let session = try VirtualPadSession(
            kind: .xbox360, seed: "session-test", loop: loop, logger: Logger(label: "test"), onFeedback: { _ in },
            onReady: {
                nodes = $0
                loop.stop()
            })
        try loop.run()
        #expect(!watchdog.fired, "the virtual pad's node never appeared")
        return (session, try #require(nodes?.eventNodes.first))
    }

    static var held: PadSnapshot {
        var snapshot = PadSnapshot.neutral
        snapshot[.a] = true
        snapshot.leftX = 20_000
        snapshot.rightTrigger = 32_767
        return snapshot
    }

    /// What a program that opens the node now sees (the kernel's state of the device).
    static func state(_ path: String) throws -> (a: Int32?, leftX: Int32?, rightTrigger: Int32?) {
        let device = try EvdevDevice(path: path)
        return (
            device.currentValue(type: EvdevCode.evKey, code: EvdevCode.btnSouth),
            device.currentValue(type: EvdevCode.evAbs, code: EvdevCode.absX),
            device.currentValue(type: EvdevCode.evAbs, code: EvdevCode.absRZ)
        )
    }

    /// What a host does with a lost client's pad, on the device: neutral at once (the node stays, games keep the
    /// slot), shown again when the source is back, destroyed when its linger runs out.
    @Test func neutralThenBackOnTheSameNodeThenDestroyed() throws {
        let loop = try DeviceEventLoop()
        let (session, path) = try Self.readySession(loop)
        session.apply(Self.held)
        let before = try Self.state(path)
        #expect(before.a == 1 && before.leftX == 20_000 && before.rightTrigger == 255)
        session.goNeutral()
        let during = try Self.state(path)
        #expect(during.a == 0 && during.leftX == 0 && during.rightTrigger == 0, "not neutral: \(during)")
        #expect(session.isOpen && access(path, F_OK) == 0)
        session.apply(Self.held)
        #expect(try Self.state(path).a == 1, "the same node shows the source again")
        session.close()
        #expect(!session.isOpen)
        #expect(access(path, F_OK) != 0, "\(path) still exists after the pad was destroyed")
    }

    /// SDL2's game-controller view lists a virtual Xbox 360 pad by its node, with its GUID and a database mapping.
    @Test func sdlListsTheVirtualPad() throws {
        let loop = try DeviceEventLoop()
        let (session, path) = try Self.readySession(loop)
        defer { session.close() }
        let listed = try SDLControllerCatalog.current()
        let entry = try #require(listed.first { $0.path == path }, "SDL listed \(listed.map(\.path)), not \(path)")
        #expect(entry.guid.count == 32 && entry.guid.allSatisfy(\.isHexDigit))
        #expect(entry.mapping?.contains(",a:b0") == true, "mapping \(entry.mapping ?? "nil")")
    }

    /// A physical pad session reads a pad (here a virtual one, which the kernel treats as real), grabbed, through
    /// an identity profile, and reports the pad going away once.
    @Test func aPhysicalSessionForwardsFramesAndReportsThePadGoing() throws {
        let loop = try DeviceEventLoop()
        let (standIn, path) = try Self.readySession(loop)
        let logger = Logger(label: "test")
        let controller = try #require(
            try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads)
                .first { $0.nodes.evdev.contains { $0.path == path } },
            "discovery did not list \(path)")
        var outputs: [PadSnapshot] = []
        var detached = 0
        let session = try PhysicalPadSession(
            controller: controller, profile: .identity, target: .xbox360, grab: true, loop: loop, logger: logger
        ) { snapshot in
            outputs.append(snapshot)
            if snapshot[.a] && snapshot.leftX == 20_000 { loop.stop() }
        }
        session.onDetached = {
            detached += 1
            loop.stop()
        }
        #expect(outputs.first == .neutral, "the first output is the state held at start")
        standIn.apply(Self.held)
        let watchdog = try LoopWatchdog(loop)
        try loop.run()
        #expect(!watchdog.fired, "the held state never came through: \(outputs)")
        #expect(outputs.last?[.a] == true && outputs.last?.rightTrigger == Self.held.rightTrigger)

        standIn.close()
        try loop.run()
        #expect(!watchdog.fired && detached == 1 && !session.isAttached)
        session.close()
    }

    /// A reader that fell behind: the kernel dropped its node's events (SYN_DROPPED). It says so once, naming the
    /// node (`onEventsDropped`, which remap and connect log as a warning), and its snapshot is caught up to the
    /// last state the pad showed.
    @Test func aReaderThatFellBehindSaysSoOnceAndCatchesUp() throws {
        let loop = try DeviceEventLoop()
        let (standIn, path) = try Self.readySession(loop)
        defer { standIn.close() }
        let controller = try #require(
            try ControllerCatalog.discover(logger: Logger(label: "test"), sdlView: .forGenericPads)
                .first { $0.nodes.evdev.contains { $0.path == path } },
            "discovery did not list \(path)")
        let reader = try ControllerReader(controller: controller, grab: false, loop: loop) { pad in
            ControllerLayouts.layout(for: controller, padNode: pad)
        }
        defer { reader.close() }
        var dropped: [String] = []
        reader.onEventsDropped = { dropped.append($0.path) }
        // Far more than the node's buffer holds, written while the loop (and so the reader) does not run.
        var frame = PadSnapshot.neutral
        for index in 0..<3000 {
            frame[.a] = index % 2 == 0
            frame[.b] = index % 2 == 1
            frame.leftX = Int16(truncatingIfNeeded: (index * 7919) % 60000 - 30000)
            standIn.apply(frame)
        }
        var last = PadSnapshot.neutral
        last[.y] = true
        last.leftX = 12_345
        last.rightTrigger = 32_767
        standIn.apply(last)
        reader.onFrame = { snapshot, _ in
            if snapshot[.y] && snapshot.leftX == 12_345 { loop.stop() }
        }
        let watchdog = try LoopWatchdog(loop)
        try loop.run()
        #expect(!watchdog.fired, "the last state never came through: \(reader.snapshot)")
        #expect(dropped == [path], "dropped events reported once, for the pad's node")
        #expect(!reader.snapshot[.a] && !reader.snapshot[.b] && reader.snapshot[.y])
        #expect(reader.snapshot.leftX == 12_345 && reader.snapshot.rightTrigger == 32_767)
    }
}
