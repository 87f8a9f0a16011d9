import Glibc
import Logging
import PadCore
@testable import PadLinux
import SystemPackage
import Testing

/// SDL 2 (Debian's 2.26, through pysdl2) as an independent reader of the virtual Bluetooth DualSense: its HIDAPI
/// PS5 driver must take it as a full PS5 controller (touchpad, sensors, serial = our MAC), read its input, and
/// its lightbar and rumble requests must come back as feedback.
@Suite("SDL sees the virtual DualSense", .tags(.kernel),
       .enabled(if: KernelAvailability.hasUhid && KernelAvailability.hasPySDL2, "needs uhid and pysdl2"))
final class KernelSDLTests {
    static let python = KernelAvailability.python
    static let script = """
        import os, sys, time
        import sdl2
        sdl2.SDL_Init(sdl2.SDL_INIT_GAMECONTROLLER | sdl2.SDL_INIT_SENSOR)
        c = None
        # Other suites may have their own virtual DualSense up: pick ours by its serial (the MAC, with dashes).
        for i in range(sdl2.SDL_NumJoysticks()):
            if sdl2.SDL_IsGameController(i) and sdl2.SDL_GameControllerTypeForIndex(i) == sdl2.SDL_CONTROLLER_TYPE_PS5:
                candidate = sdl2.SDL_GameControllerOpen(i)
                if (sdl2.SDL_GameControllerGetSerial(candidate) or b"").decode() == os.environ["EXPECTED_SERIAL"]:
                    c = candidate
                    break
                sdl2.SDL_GameControllerClose(candidate)
        if not c:
            print("no PS5 controller among", sdl2.SDL_NumJoysticks(), flush=True)
            sys.exit(2)
        print("touchpads", sdl2.SDL_GameControllerGetNumTouchpads(c))
        print("accel", sdl2.SDL_GameControllerHasSensor(c, sdl2.SDL_SENSOR_ACCEL))
        print("serial", (sdl2.SDL_GameControllerGetSerial(c) or b"").decode())
        sdl2.SDL_GameControllerSetLED(c, 255, 0, 0)
        sdl2.SDL_GameControllerRumble(c, 0xFFFF, 0x8000, 2000)
        for _ in range(25):
            sdl2.SDL_GameControllerUpdate()
            time.sleep(0.02)
        print("a", sdl2.SDL_GameControllerGetButton(c, sdl2.SDL_CONTROLLER_BUTTON_A))
        print("leftx", sdl2.SDL_GameControllerGetAxis(c, sdl2.SDL_CONTROLLER_AXIS_LEFTX), flush=True)
        """

    @Test func sdlTakesItAsAFullPS5Controller() throws {
        let loop = try DeviceEventLoop()
        var feedback: [FeedbackEvent] = []
        var ready = false
        let pad = try VirtualDualSense.create(
            name: nil, seed: "kernel-test-sdl-\(getpid())", loop: loop, logger: Logger(label: "kernel-test"),
            onFeedback: { feedback.append($0) },
            onReady: { _ in
                ready = true
                loop.stop()
            })
        defer { pad.close() }
        #expect(try loop.run(forAtMost: 30))
        try #require(ready)
        try pad.apply(PadSnapshot(buttons: ButtonSet([.a]), leftX: 32767))
        feedback.removeAll()

        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let arguments = [Self.python, "-c", Self.script]
        let serial = String(pad.macAddress.map { $0 == ":" ? "-" : $0 })
        let environment = [
            "PYSDL2_DLL_PATH=/usr/lib/x86_64-linux-gnu", "SDL_JOYSTICK_DISABLE_UDEV=1", "HOME=/tmp",
            "EXPECTED_SERIAL=\(serial)",
        ]
        var argv = arguments.map { strdup($0) } + [nil]
        var envp = environment.map { strdup($0) } + [nil]
        var child: pid_t = 0
        let status = posix_spawn(&child, Self.python, &actions, nil, &argv, &envp)
        argv.forEach { free($0) }
        envp.forEach { free($0) }
        posix_spawn_file_actions_destroy(&actions)
        close(fds[1])
        try #require(status == 0)

        var output: [UInt8] = []
        let reader = FileDescriptor(rawValue: fds[0])
        let token = try loop.watch(reader, path: "python stdout") { [loop] _ in
            var chunk = [UInt8](repeating: 0, count: 1024)
            let count = (try? chunk.withUnsafeMutableBytes { try reader.read(into: $0) }) ?? 0
            if count == 0 { loop.stop() } else { output += chunk.prefix(count) }
        }
        // Python and SDL start slowly under emulation.
        let finished = try loop.run(forAtMost: 150)
        loop.removeWatch(token)
        close(fds[0])
        var exitStatus: Int32 = 0
        if !finished { kill(child, SIGKILL) }
        waitpid(child, &exitStatus, 0)
        let text = String(decoding: output, as: UTF8.self)
        #expect(finished, "SDL script did not finish: \(text)")
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.contains("touchpads 1"), "\(text)")
        #expect(lines.contains("accel 1") || lines.contains("accel True"), "\(text)")
        #expect(lines.contains("serial \(serial)"), "\(text)")
        #expect(lines.contains("a 1"), "\(text)")
        #expect(lines.contains("leftx 32767"), "\(text)")
        #expect(feedback.contains(.lightbar(LightbarColor(red: 255, green: 0, blue: 0))), "\(feedback)")
        #expect(feedback.contains { if case let .rumble(rumble) = $0 { rumble.strong == 1 } else { false } }, "\(feedback)")
    }
}
