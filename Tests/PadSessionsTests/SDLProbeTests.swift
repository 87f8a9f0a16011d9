import Glibc
import Logging
import PadCore
import PadLinux
import PadSDL
@testable import PadSessions
import PadLinuxTestSupport
import PadTestSupport
import Testing

@Suite("SDL2's view through a helper process: its reply, and a helper that crashes")
struct SDLProbeTests {
    private let logger = Logger(label: "test")

    @Test func aReplyWithControllersDecodes() throws {
        let reply = #"{"controllers":[{"guid":"030072264c050000e60c000000006800","mappingName":"PS5 Controller","#
            + #""mapping":"030072264c050000e60c000000006800,*,a:b0","path":"/dev/hidraw0"},"#
            + #"{"guid":"03000000de2800000512000011010000","path":"/dev/input/event7"}]}"#
        let controllers = try SDLProbe.decodeReply(Array(reply.utf8))
        #expect(
            controllers == [
                SDLControllerInfo(
                    guid: "030072264c050000e60c000000006800", mappingName: "PS5 Controller",
                    mapping: "030072264c050000e60c000000006800,*,a:b0", path: "/dev/hidraw0"),
                SDLControllerInfo(
                    guid: "03000000de2800000512000011010000", mappingName: nil, mapping: nil, path: "/dev/input/event7"),
            ])
    }

    @Test(arguments: [
        ("libraryUnavailable", SDLCatalogError.Code.libraryUnavailable),
        ("subsystemFailed", .subsystemFailed), ("somethingNew", .helperFailed),
    ])
    func anErrorReplyKeepsItsCode(name: String, code: SDLCatalogError.Code) {
        let reply = #"{"error":{"code":"\#(name)","reason":"libSDL2-2.0.so.0: cannot open"}}"#
        #expect {
            try SDLProbe.decodeReply(Array(reply.utf8))
        } throws: { error in
            (error as? SDLCatalogError)?.code == code && (error as? SDLCatalogError)?.reason == "libSDL2-2.0.so.0: cannot open"
        }
    }

    /// Any bytes in, a view or a typed error out.
    @Test func anyBytesGiveAViewOrATypedError() {
        var random = SplitMix64(seed: 0x5D1_960BE)
        let samples: [[UInt8]] =
            [[], Array("{}".utf8), Array("null".utf8), Array(#"{"controllers":7}"#.utf8)]
            + (0..<2000).map { _ in (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        for bytes in samples {
            do {
                _ = try SDLProbe.decodeReply(bytes)
            } catch {
                #expect(error.code == .helperFailed, "\(bytes)")
            }
        }
    }

    /// What the helper prints, the parent reads (SDL2 is installed here; it lists whatever it sees, usually nothing).
    @Test func theReplyThisProcessWouldPrintDecodes() throws {
        let line = SDLProbe.replyLine()
        #expect(!line.contains("\n"))
        let controllers = try SDLProbe.decodeReply(Array(line.utf8))
        #expect(controllers.allSatisfy { !$0.path.isEmpty && $0.guid.count == 32 })
    }

    @Test func aHelperThatAnswersIsRead() throws {
        let reply = #"{"controllers":[{"guid":"03000000de2800000512000011010000","path":"/dev/input/event7"}]}"#
        let controllers = try SDLProbe.controllers(
            from: .helperProcess(executable: "/bin/sh", arguments: ["-c", "printf '%s\\n' '\(reply)'"]), logger: logger)
        #expect(controllers.map(\.path) == ["/dev/input/event7"])
    }

    /// SDL 2.26 can crash scanning a device that goes away under it: the command lives on without SDL's view.
    @Test func aHelperThatCrashesTwiceIsAnErrorNotACrash() throws {
        let counter = "/tmp/padbridge-sdl-probe-test-\(getpid())"
        defer { unlink(counter) }
        #expect {
            try SDLProbe.controllers(
                from: .helperProcess(executable: "/bin/sh", arguments: ["-c", "echo try >> \(counter); kill -SEGV $$"]),
                logger: logger)
        } throws: { error in
            (error as? SDLCatalogError)?.code == .helperFailed
                && "\(error)".contains("signal 11")
        }
        #expect(try TextFile.contents(atPath: counter).split(separator: "\n").count == 2, "asked twice")
    }

    @Test func aHelperThatCrashesOnceIsAskedAgain() throws {
        let marker = "/tmp/padbridge-sdl-probe-once-\(getpid())"
        defer { unlink(marker) }
        let reply = #"{"controllers":[{"guid":"03000000de2800000512000011010000","path":"/dev/input/event9"}]}"#
        let script = "if [ -e \(marker) ]; then printf '%s' '\(reply)'; else : > \(marker); kill -SEGV $$; fi"
        let controllers = try SDLProbe.controllers(
            from: .helperProcess(executable: "/bin/sh", arguments: ["-c", script]), logger: logger)
        #expect(controllers.map(\.path) == ["/dev/input/event9"])
    }
}

/// The hotplug path of the long-running commands (remap's resume) lists the pads on the device loop: SDL's helper
/// (up to 10 s) must not stall the loop, where the other bridges' frames are forwarded.
@Suite("SDL2's view asked from a running loop", .serialized)
struct SDLProbeOnTheLoopTests {
    private let logger = Logger(label: "test")

    @Test func theLoopKeepsServingWhileTheHelperRuns() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        var ticks = 0
        let ticker = loop.repeating(everyMilliseconds: 20) { ticks += 1 }
        var ticksWhenDone: Int?
        var listed: Result<[Controller], any Error>?
        let reply = #"{"controllers":[]}"#
        let discovery = ControllerCatalog.discover(
            logger: logger, sdlView: .always,
            sdlSource: .helperProcess(executable: "/bin/sh", arguments: ["-c", "sleep 0.4; printf '%s' '\(reply)'"]),
            on: loop
        ) { result in
            listed = result
            ticksWhenDone = ticks
            loop.stop()
        }
        try loop.run()
        ticker.cancel()
        discovery.cancel()
        #expect(!watchdog.fired)
        #expect(try listed?.get() != nil)
        #expect((ticksWhenDone ?? 0) >= 10, "the loop served \(ticksWhenDone ?? 0) ticks of 20 ms during a 400 ms helper")
    }

    @Test func aHelperPastItsDeadlineIsKilledWithoutStallingTheLoop() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        var outcome: HelperProcess.Outcome?
        let started = MonotonicInstant.now()
        let helper = try LoopHelperProcess(
            executable: "/bin/sh", arguments: ["-c", "sleep 30"], timeout: .milliseconds(200), loop: loop
        ) { result in
            outcome = try? result.get()
            loop.stop()
        }
        try loop.run()
        helper.cancel()
        #expect(!watchdog.fired)
        #expect(outcome?.termination == .timedOut)
        #expect(MonotonicInstant.now().nanoseconds - started.nanoseconds < 2_000_000_000)
    }
}
