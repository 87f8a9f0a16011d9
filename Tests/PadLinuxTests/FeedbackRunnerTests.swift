import Glibc
import Logging
import PadCore
@testable import PadLinux
import PadLinuxTestSupport
import Testing

/// Records what the runner writes; can fail a write with a given error.
private final class RecordingSink: PhysicalFeedbackSink {
    let supported: FeedbackParts
    var writes: [Feedback] = []
    var failure: DeviceAccessError?
    var closed = false
    /// Called after each write that went through.
    var onWrite: (() -> Void)?

    init(supported: FeedbackParts = .dualSense) { self.supported = supported }

    func write(_ feedback: Feedback) throws(DeviceAccessError) {
        if let failure { throw failure }
        writes.append(feedback)
        onWrite?()
    }

    func close() { closed = true }
}

@Suite("FeedbackDrainRunner", .serialized)
struct FeedbackRunnerTests {
    let logger = Logger(label: "test.feedback")

    @Test func writesOnlyTheChangedFieldsAtOnce() throws {
        let loop = try DeviceEventLoop()
        let sink = RecordingSink()
        let runner = try FeedbackDrainRunner(sink: sink, restoring: Feedback(), loop: loop, logger: logger) { _ in }
        runner.submit(Feedback(lightbar: LightbarColor(red: 1, green: 2, blue: 3)))
        #expect(sink.writes == [Feedback(lightbar: LightbarColor(red: 1, green: 2, blue: 3))])
        runner.close()
        #expect(sink.closed)
    }

    @Test func timedRumbleStopsOnTheLoopAndThenGoesIdle() throws {
        let loop = try DeviceEventLoop()
        let sink = RecordingSink()
        let runner = try FeedbackDrainRunner(sink: sink, restoring: Feedback(), loop: loop, logger: logger) { _ in }
        var idleCount = 0
        runner.onIdle = {
            idleCount += 1
            loop.stop()
        }
        let started = MonotonicInstant.now()
        runner.submit(Feedback(rumble: Rumble(strong: 0.5, weak: 0.25)), rumbleDurationMilliseconds: 40)
        #expect(!runner.isIdle)
        let guardDeadline = loop.deadline(afterMilliseconds: 5000) { loop.stop() }
        try loop.run()
        guardDeadline.cancel()
        let elapsed = MonotonicInstant.now().nanoseconds - started.nanoseconds
        #expect(sink.writes == [Feedback(rumble: Rumble(strong: 0.5, weak: 0.25)), Feedback(rumble: .off)])
        #expect(elapsed >= 40_000_000)
        #expect(idleCount == 1)
        #expect(runner.isIdle)
    }

    @Test func closingWriteQuietsAndRestores() throws {
        let loop = try DeviceEventLoop()
        let sink = RecordingSink()
        let initial = Feedback(lightbar: LightbarColor(red: 0, green: 0, blue: 128), playerLeds: 0x04)
        let runner = try FeedbackDrainRunner(
            sink: sink, restoring: initial, loop: loop, logger: logger, pacingIntervalNanoseconds: 0) { _ in }
        runner.submit(Feedback(rumble: Rumble(strong: 1, weak: 1), lightbar: LightbarColor(red: 9, green: 9, blue: 9)))
        runner.submit(Feedback(rightTrigger: try TriggerEffect(commandLine: "weapon:2:6:8")))
        runner.close()
        let closing = try #require(sink.writes.last)
        #expect(closing.rumble == .off)
        #expect(closing.rightTrigger == .off)
        #expect(closing.lightbar == LightbarColor(red: 0, green: 0, blue: 128))
        runner.close()  // idempotent: nothing more written
        #expect(sink.writes.count == 3)
    }

    @Test func goneEndsTheDrainCleanly() throws {
        let loop = try DeviceEventLoop()
        let sink = RecordingSink()
        var ended: [DeviceAccessError?] = []
        let runner = try FeedbackDrainRunner(sink: sink, restoring: Feedback(), loop: loop, logger: logger) {
            ended.append($0)
        }
        sink.failure = DeviceAccessError(code: .gone, path: "/dev/hidraw9", operation: "write")
        runner.submit(Feedback(micLed: true))
        #expect(ended.count == 1 && ended[0] == nil)
        #expect(runner.hasEnded)
        sink.failure = nil
        runner.submit(Feedback(micLed: false))
        runner.close()
        #expect(sink.writes.isEmpty)
    }

    /// A write error that is not the pad going away (ETIMEDOUT over Bluetooth, EPIPE of a USB stall) does not end
    /// the pad's feedback for the session: the same fields are written again once the pad takes writes again.
    @Test func aTransientWriteErrorIsWrittenAgain() throws {
        let loop = try DeviceEventLoop()
        let watchdog = try LoopWatchdog(loop)
        let sink = RecordingSink()
        var ended: [DeviceAccessError?] = []
        let runner = try FeedbackDrainRunner(sink: sink, restoring: Feedback(), loop: loop, logger: logger) {
            ended.append($0)
        }
        sink.failure = DeviceAccessError(code: .ioFailed, path: "/dev/hidraw9", operation: "write", cause: .timedOut)
        runner.submit(Feedback(playerLeds: 3))
        #expect(sink.writes.isEmpty)
        sink.failure = nil
        sink.onWrite = { loop.stop() }
        try loop.run()
        #expect(!watchdog.fired)
        #expect(ended.isEmpty && !runner.hasEnded)
        #expect(sink.writes == [Feedback(playerLeds: 3)])
    }

    /// A one-shot command (`padbridge feedback --lightbar ...`) ends on a write error with the error.
    @Test func aRunnerThatEndsOnWriteErrorsReportsThem() throws {
        let loop = try DeviceEventLoop()
        let sink = RecordingSink()
        var ended: [DeviceAccessError?] = []
        let runner = try FeedbackDrainRunner(
            sink: sink, restoring: Feedback(), loop: loop, logger: logger, onWriteError: .end
        ) { ended.append($0) }
        let failure = DeviceAccessError(code: .ioFailed, path: "/dev/hidraw9", operation: "write")
        sink.failure = failure
        runner.submit(Feedback(playerLeds: 3))
        #expect(ended == [failure])
    }

    @Test func unsupportedPartsAreNotWritten() throws {
        let loop = try DeviceEventLoop()
        let sink = RecordingSink(supported: .rumbleOnly)
        let runner = try FeedbackDrainRunner(sink: sink, restoring: Feedback(), loop: loop, logger: logger) { _ in }
        runner.submit(Feedback(lightbar: LightbarColor(red: 1, green: 1, blue: 1)))
        #expect(sink.writes.isEmpty)
        runner.submit(Feedback(rumble: Rumble(strong: 1, weak: 0), lightbar: LightbarColor(red: 2, green: 2, blue: 2)))
        #expect(sink.writes == [Feedback(rumble: Rumble(strong: 1, weak: 0))])
    }

    @Test func stopRumbleNowWritesOffOnlyWhenRunning() throws {
        let loop = try DeviceEventLoop()
        let sink = RecordingSink()
        let runner = try FeedbackDrainRunner(sink: sink, restoring: Feedback(), loop: loop, logger: logger) { _ in }
        runner.stopRumbleNow()
        #expect(sink.writes.isEmpty)
        runner.submit(Feedback(rumble: Rumble(strong: 1, weak: 1)))
        runner.stopRumbleNow()
        #expect(sink.writes.last == Feedback(rumble: .off))
    }
}

@Suite("PlayStationHidrawSink reports")
struct FeedbackPlayStationReportTests {
    /// /dev/null stands in for the hidraw node: the sink only encodes and writes.
    private func sink(_ model: PlayStationHidrawSink.Model, _ transport: HIDTransport) throws -> PlayStationHidrawSink {
        PlayStationHidrawSink(device: try HidrawDevice(path: "/dev/null"), model: model, transport: transport)
    }

    @Test func dualSenseUSBUsesTheKernelLayout() throws {
        let sink = try sink(.dualSense(rumbleMethod: .improved), .usb)
        let report = sink.report(for: Feedback(lightbar: LightbarColor(red: 0xFF, green: 0, blue: 0x40)))
        #expect(report.count == 63 && report[0] == 0x02)
        #expect(report[2] == 0x04 && Array(report[45...47]) == [0xFF, 0x00, 0x40])
        try sink.write(Feedback(micLed: true))
        sink.close()
    }

    @Test func dualSenseBluetoothAdvancesItsSequenceAndWraps() throws {
        let sink = try sink(.dualSense(rumbleMethod: .compatible), .bluetooth)
        var sequences: [UInt8] = []
        for _ in 0..<17 {
            let report = sink.report(for: Feedback(rumble: Rumble(strong: 0.5, weak: 0.25)))
            #expect(report.count == 78 && report[0] == 0x31 && report[2] == 0x10)
            #expect(report[3] & 0x03 == 0x03 && report[6] == 128 && report[5] == 64)
            #expect(try DualSenseOutputReport.decode(report).rumble != nil)
            sequences.append(report[1] >> 4)
        }
        #expect(sequences == Array(0...15) + [0])
    }

    @Test(arguments: [HIDTransport.usb, .bluetooth])
    func dualShock4(transport: HIDTransport) throws {
        let sink = try sink(.dualShock4, transport)
        #expect(sink.supported == .dualShock4)
        let report = sink.report(for: Feedback(lightbar: LightbarColor(red: 1, green: 2, blue: 3)))
        #expect(report.count == (transport == .usb ? 32 : 78))
        #expect(try DualShock4OutputReport.decode(report) == Feedback(lightbar: LightbarColor(red: 1, green: 2, blue: 3)))
    }
}

@Suite("PlayStation LED state from sysfs")
struct FeedbackLedStateTests {
    func makeTree(_ files: [String: String]) throws -> String {
        var template = Array("/tmp/padbridge-leds-XXXXXX".utf8CString)
        let root = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        for (relative, content) in files {
            let path = "\(root)/\(relative)"
            var directory = ""
            for component in path.split(separator: "/").dropLast() {
                directory += "/\(component)"
                mkdir(directory, 0o755)
            }
            let file = try #require(fopen(path, "w"))
            fputs(content, file)
            fclose(file)
        }
        return root
    }

    @Test func dualSenseLightbarAndPlayerLeds() throws {
        let leds = "hidraw7/device/leds"
        var files = [
            "\(leds)/input9:rgb:indicator/multi_intensity": "20 40 200\n",
            "\(leds)/input9:rgb:indicator/brightness": "128\n",
            "\(leds)/input9:rgb:indicator/max_brightness": "255\n",
        ]
        for k in 1...5 { files["\(leds)/input9:white:player-\(k)/brightness"] = k == 3 || k == 5 ? "1\n" : "0\n" }
        let root = try makeTree(files)
        let state = PlayStationLedState(hidrawPath: "/dev/hidraw7", sysfsRoot: root)
        #expect(state.lightbar == LightbarColor(red: 10, green: 20, blue: 100))
        #expect(state.playerLeds == 0b10100)
    }

    @Test func dualShock4Channels() throws {
        let leds = "hidraw2/device/leds"
        let root = try makeTree([
            "\(leds)/input3:red/brightness": "5\n", "\(leds)/input3:green/brightness": "6\n",
            "\(leds)/input3:blue/brightness": "7\n", "\(leds)/input3:global/brightness": "1\n",
        ])
        let state = PlayStationLedState(hidrawPath: "/dev/hidraw2", sysfsRoot: root)
        #expect(state.lightbar == LightbarColor(red: 5, green: 6, blue: 7))
        #expect(state.playerLeds == nil)
    }

    @Test func missingDirectoryIsUnknown() {
        let state = PlayStationLedState(hidrawPath: "/dev/hidraw99", sysfsRoot: "/nonexistent")
        #expect(state.lightbar == nil && state.playerLeds == nil)
    }
}

extension FeedbackLedStateTests {
    @Test func zeroIntensitiesAreUnknown() throws {
        let leds = "hidraw4/device/leds"
        let root = try makeTree([
            "\(leds)/input5:rgb:indicator/multi_intensity": "0 0 0\n",
            "\(leds)/input5:rgb:indicator/brightness": "255\n",
        ])
        #expect(PlayStationLedState(hidrawPath: "/dev/hidraw4", sysfsRoot: root).lightbar == nil)
    }
}
