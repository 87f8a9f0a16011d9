@testable import PadCore
import Testing

/// The virtual keyboard and mouse side of the pipeline (issue 28): targets, combos, tap/hold, chords, sticks and
/// the gyro on the mouse, flick stick; on the fake clock, following the pipeline's own wakes as the session does.
@Suite struct DesktopRemapTests {
    static let space = DesktopTarget.key(KeyboardKey(code: 57, name: "space"))
    static let leftCtrl = DesktopTarget.key(KeyboardKey(code: 29, name: "leftctrl"))
    static let c = DesktopTarget.key(KeyboardKey(code: 46, name: "c"))
    static let escape = DesktopTarget.key(KeyboardKey(code: 1, name: "esc"))
    static let tab = DesktopTarget.key(KeyboardKey(code: 15, name: "tab"))

    /// Runs a pipeline as `PhysicalPadSession` does: each frame applied when it comes, and again at every wake the
    /// pipeline asks for; movement summed, held codes sampled.
    struct Driver {
        var pipeline: RemapPipeline
        var now: UInt64 = 1_000_000
        var source = PadSnapshot.neutral
        var moved = (x: 0, y: 0, wheel: 0, horizontalWheel: 0)
        /// Every frame's held codes, with its time.
        var history: [(time: UInt64, held: [UInt16], pad: ButtonSet)] = []

        init(_ profile: RemapProfile, target: VirtualPadCapabilities = .xbox360) throws {
            pipeline = try RemapPipeline(profile: profile, target: target)
        }

        var held: [UInt16] { pipeline.desktop.held.codes }

        /// The pad changes to `snapshot` at `time` (after every wake before it).
        mutating func frame(_ snapshot: PadSnapshot, at time: UInt64) {
            run(until: time)
            now = time
            source = snapshot
            apply()
        }

        mutating func press(_ buttons: Button..., at time: UInt64) {
            var next = source
            for button in buttons { next.buttons.insert(button) }
            frame(next, at: time)
        }

        mutating func release(_ buttons: Button..., at time: UInt64) {
            var next = source
            for button in buttons { next.buttons.remove(button) }
            frame(next, at: time)
        }

        /// Follows the pipeline's wakes up to `time` (inclusive).
        mutating func run(until time: UInt64) {
            while let wake = pipeline.nextWakeMicroseconds, wake <= time {
                now = max(wake, now + 1)
                apply()
            }
            now = max(now, time)
        }

        private mutating func apply() {
            let output = pipeline.apply(source, atMicroseconds: now)
            let frame = pipeline.desktop
            moved.x += Int(frame.pointerX)
            moved.y += Int(frame.pointerY)
            moved.wheel += Int(frame.wheel)
            moved.horizontalWheel += Int(frame.horizontalWheel)
            history.append((now, frame.held.codes, output.buttons))
        }

        /// When `code` was first held, and first released after that.
        func pressAndRelease(of code: UInt16) -> (pressed: UInt64?, released: UInt64?) {
            guard let pressedIndex = history.firstIndex(where: { $0.held.contains(code) }) else { return (nil, nil) }
            let released = history[pressedIndex...].first { !$0.held.contains(code) }?.time
            return (history[pressedIndex].time, released)
        }
    }

    static func ms(_ milliseconds: UInt64) -> UInt64 { 1_000_000 + milliseconds * 1000 }

    @Test func aButtonPressesAKeyAndAComboPressesItsKeysTogether() throws {
        var driver = try Driver(RemapProfile(map: [
            .button(.a): [.desktop(Self.space)], .button(.x): [.desktop(Self.leftCtrl), .desktop(Self.c)],
        ]))
        #expect(driver.pipeline.needsVirtualKeyboard && !driver.pipeline.needsVirtualMouse)
        driver.press(.a, at: Self.ms(0))
        #expect(driver.held == [57])
        #expect(driver.history.last?.pad.isEmpty == true, "a drives the key only, not the pad's a")
        driver.press(.x, at: Self.ms(10))
        #expect(driver.held == [29, 46, 57])
        driver.release(.a, .x, at: Self.ms(20))
        #expect(driver.held.isEmpty)
    }

    @Test func aTriggerPastItsThresholdClicksTheMouse() throws {
        var driver = try Driver(RemapProfile(map: [.axis(.righttrigger): [.desktop(.mouseButton(.left))]]))
        #expect(driver.pipeline.needsVirtualMouse)
        var pulled = PadSnapshot.neutral
        pulled.rightTrigger = 10_000
        driver.frame(pulled, at: Self.ms(0))
        #expect(driver.held.isEmpty)
        pulled.rightTrigger = 20_000
        driver.frame(pulled, at: Self.ms(5))
        #expect(driver.held == [0x110])
        driver.frame(.neutral, at: Self.ms(10))
        #expect(driver.held.isEmpty)
    }

    @Test func tapAndHold() throws {
        let profile = RemapProfile(tapHold: [.b: TapHold(tap: [.desktop(Self.escape)], hold: [.desktop(Self.leftCtrl)])])
        // Tapped: released after 150 ms; escape is pressed on the release and let go 50 ms later, on a wake.
        var tapped = try Driver(profile)
        tapped.press(.b, at: Self.ms(0))
        #expect(tapped.held.isEmpty)
        tapped.release(.b, at: Self.ms(150))
        #expect(tapped.held == [1])
        tapped.run(until: Self.ms(400))
        let tap = tapped.pressAndRelease(of: 1)
        #expect(tap.pressed == Self.ms(150) && tap.released == Self.ms(200), "\(tap)")
        #expect(tapped.pressAndRelease(of: 29).pressed == nil, "a tap never holds")

        // Held: ctrl from 200 ms after the press (the pipeline's own wake) until the release; escape never.
        var held = try Driver(profile)
        held.press(.b, at: Self.ms(0))
        held.run(until: Self.ms(199))
        #expect(held.held.isEmpty)
        held.run(until: Self.ms(200))
        #expect(held.held == [29])
        held.release(.b, at: Self.ms(700))
        held.run(until: Self.ms(900))
        #expect(held.pressAndRelease(of: 29) == (Self.ms(200), Self.ms(700)))
        #expect(held.pressAndRelease(of: 1).pressed == nil, "a hold never taps")
    }

    @Test func aChordPressedWithinTheWindowDrivesItsTargetInsteadOfEachButtons() throws {
        let profile = RemapProfile(
            map: [.button(.leftshoulder): [.desktop(Self.space)], .button(.rightshoulder): [.desktop(Self.c)]],
            chords: [Chord(.leftshoulder, .rightshoulder, targets: [.desktop(Self.tab)])])
        var chord = try Driver(profile)
        chord.press(.leftshoulder, at: Self.ms(0))
        chord.press(.rightshoulder, at: Self.ms(30))
        chord.run(until: Self.ms(300))
        #expect(chord.held == [15])
        chord.release(.leftshoulder, at: Self.ms(400))
        chord.run(until: Self.ms(600))
        #expect(chord.held.isEmpty, "the other button stays silent until it is released")
        chord.release(.rightshoulder, at: Self.ms(700))
        #expect(chord.history.allSatisfy { !$0.held.contains(57) && !$0.held.contains(46) }, "neither button's own key")

        // Alone past the window: its own key from the window's end.
        var alone = try Driver(profile)
        alone.press(.leftshoulder, at: Self.ms(0))
        alone.press(.rightshoulder, at: Self.ms(80))
        #expect(alone.pressAndRelease(of: 57).pressed == Self.ms(50))
        #expect(alone.held == [57], "pressed after the window, the other is alone too, waiting its own window")
        alone.run(until: Self.ms(200))
        #expect(alone.held == [46, 57] && alone.pressAndRelease(of: 15).pressed == nil)

        // Tapped alone within the window: its own key, pressed and released in two frames.
        var quick = try Driver(profile)
        quick.press(.rightshoulder, at: Self.ms(0))
        quick.release(.rightshoulder, at: Self.ms(20))
        quick.run(until: Self.ms(200))
        #expect(quick.pressAndRelease(of: 46) == (Self.ms(20), Self.ms(70)))
    }

    @Test func aStickMovesThePointerByTimeAndTheWheelInHighResolution() throws {
        var driver = try Driver(RemapProfile(
            pointerStick: StickToPointer(stick: .right, countsPerSecond: 1000),
            scrollStick: StickToScroll(stick: .left, notchesPerSecond: 10)))
        var pushed = PadSnapshot.neutral
        pushed.rightX = 32767
        pushed.leftY = -32768
        driver.frame(pushed, at: Self.ms(0))
        #expect(driver.history.last?.pad == ButtonSet())
        driver.run(until: Self.ms(1000))
        driver.frame(.neutral, at: Self.ms(1000))
        #expect(abs(driver.moved.x - 1000) <= 1 && driver.moved.y == 0, "\(driver.moved)")
        #expect(abs(driver.moved.wheel - 1200) <= 1 && driver.moved.horizontalWheel == 0, "10 notches of 120: \(driver.moved)")
        let before = driver.moved
        driver.run(until: Self.ms(2000))
        #expect(driver.moved == before, "a stick let go moves nothing more")
        #expect(driver.pipeline.nextWakeMicroseconds == nil, "and wakes nothing")
    }

    @Test func aStickHeldDeflectedSpeedsUpToItsAcceleration() throws {
        // 1000 counts/s, twice that after 500 ms (ramping linearly): 1 s at full deflection is
        // 0.5 s at 1.5 times on average plus 0.5 s at 2 times = 1750 counts.
        var driver = try Driver(RemapProfile(
            pointerStick: StickToPointer(stick: .left, countsPerSecond: 1000, acceleration: 2, accelerationMicroseconds: 500_000)))
        var pushed = PadSnapshot.neutral
        pushed.leftX = 32767
        driver.frame(pushed, at: Self.ms(0))
        driver.run(until: Self.ms(1000))
        driver.frame(.neutral, at: Self.ms(1000))
        #expect(abs(driver.moved.x - 1750) <= 3, "\(driver.moved)")
        // Let go and pushed again: slow again (100 ms ramping from 1 to 1.2 times: 110 counts).
        let before = driver.moved.x
        driver.frame(pushed, at: Self.ms(2000))
        driver.run(until: Self.ms(2100))
        driver.frame(.neutral, at: Self.ms(2100))
        #expect(abs(driver.moved.x - before - 110) <= 3, "\(driver.moved.x - before)")
    }

    @Test func theSticksOnTheMouseNoLongerDriveThePadsSticks() throws {
        var pipeline = try RemapPipeline(profile: RemapProfile(pointerStick: StickToPointer(stick: .right)), target: .xbox360)
        var pushed = PadSnapshot.neutral
        pushed.rightX = 20_000
        pushed.leftX = 12_000
        let output = pipeline.apply(pushed, atMicroseconds: 1)
        #expect(output.rightX == 0 && output.leftX == 12_000)
    }

    @Test func aScrollTargetScrollsANotchThenRepeatsWhileHeld() throws {
        var driver = try Driver(RemapProfile(map: [.button(.dpup): [.desktop(.scroll(.up))], .button(.dpleft): [.desktop(.scroll(.left))]]))
        driver.press(.dpup, at: Self.ms(0))
        #expect(driver.moved.wheel == 120)
        driver.run(until: Self.ms(399))
        #expect(driver.moved.wheel == 120)
        driver.run(until: Self.ms(1000))
        driver.release(.dpup, at: Self.ms(1050))
        #expect(driver.moved.wheel == 8 * 120, "one, then at 400 ms and every 100 ms to 1 s: \(driver.moved)")
        driver.press(.dpleft, at: Self.ms(2000))
        driver.release(.dpleft, at: Self.ms(2010))
        #expect(driver.moved.horizontalWheel == -120)
    }

    @Test func theGyroOnTheMouseFollowsTheSensorsClock() throws {
        var driver = try Driver(RemapProfile(gyroMouse: GyroToMouse(settings: GyroMouseSettings(countsPerTurn: 3600))), target: .dualSense)
        // 90 °/s of yaw for 1 s: 251 samples 4 ms apart on the sensor's clock, arriving in bursts (two per frame
        // every 8 ms: the second one is what the frame carries; its time covers both).
        for index in stride(from: 0, through: 250, by: 2) {
            var snapshot = PadSnapshot.neutral
            snapshot.motion = MotionSample(
                gyroRadiansPerSecond: Vector3(x: 0, y: 90 * Double.pi / 180, z: 0),
                accelMetersPerSecondSquared: Vector3(x: 0, y: 9.80665, z: 0), timestampMicroseconds: 5_000 + UInt64(index) * 4_000)
            driver.frame(snapshot, at: Self.ms(UInt64(index) * 4 + 3))
            var withButton = snapshot
            withButton.buttons.insert(.a)
            driver.frame(withButton, at: Self.ms(UInt64(index) * 4 + 4))  // a button frame: the same sample again
        }
        #expect(abs(driver.moved.x - -900) <= 1 && driver.moved.y == 0, "turning left moves left by a quarter turn: \(driver.moved)")
    }

    @Test func theGyrosRestingBiasIsMeasuredAndRemoved() throws {
        var driver = try Driver(RemapProfile(gyroMouse: GyroToMouse(settings: GyroMouseSettings(countsPerTurn: 3600))), target: .dualSense)
        func rest(seconds: UInt64, from start: UInt64) {
            for index in 0..<(seconds * 250) {
                var snapshot = PadSnapshot.neutral
                snapshot.motion = MotionSample(
                    gyroRadiansPerSecond: Vector3(x: 0, y: 0.3 * Double.pi / 180, z: 0),
                    accelMetersPerSecondSquared: Vector3(x: 0, y: 9.80665, z: 0), timestampMicroseconds: start + index * 4_000)
                driver.frame(snapshot, at: start + index * 4_000)
            }
        }
        rest(seconds: 4, from: 10_000_000)
        #expect(driver.pipeline.gyroMouseBias.isCalibrated)
        let before = driver.moved
        rest(seconds: 10, from: 20_000_000)
        #expect(driver.moved == before, "0.3 °/s of drift moves nothing once measured: \(driver.moved)")
    }

    @Test func aFlickTurnsByTheSticksDirectionWithinTheFlickTime() throws {
        var driver = try Driver(RemapProfile(flickStick: FlickStickBinding(stick: .right, settings: FlickStickSettings(countsPerTurn: 3600))))
        var right = PadSnapshot.neutral
        right.rightX = 32767
        driver.frame(right, at: Self.ms(0))
        driver.run(until: Self.ms(100))
        #expect(driver.moved.x == 900, "\(driver.moved)")
        driver.run(until: Self.ms(500))
        #expect(driver.moved.x == 900, "then nothing while the stick stays")
        #expect(driver.pipeline.nextWakeMicroseconds == nil)
    }

    @Test func theSummarySaysWhatDrivesEachKeyButtonAndThePointer() {
        let profile = RemapProfile(
            map: [.button(.a): [.desktop(Self.space)], .axis(.righttrigger): [.desktop(.mouseButton(.left))]],
            tapHold: [.b: TapHold(tap: [.desktop(Self.escape)], hold: [.desktop(Self.leftCtrl)])],
            pointerStick: StickToPointer(stick: .left, countsPerSecond: 1200, acceleration: 2, accelerationMicroseconds: 600_000),
            gyroMouse: GyroToMouse(settings: GyroMouseSettings(countsPerTurn: 3600), enableButton: .leftshoulder))
        #expect(profile.desktopSummary == [
            "virtual keyboard: key:space (a), key:esc (b tapped), key:leftctrl (b held)",
            "virtual mouse: mouse:left (righttrigger); pointer: left stick, 1200 counts/s at full, x2 after 600 ms; "
                + "pointer: gyro, 3600 counts per turn, sensitivity 1, player space, while leftshoulder is held",
        ])
        #expect(RemapProfile(map: [.button(.a): [.button(.b)]]).desktopSummary.isEmpty)
    }

    @Test func conflictsAreRefused() {
        let tapAndMapped = RemapProfile(map: [.button(.b): [.button(.a)]], tapHold: [.b: TapHold(tap: [.desktop(Self.escape)], hold: [])])
        #expect(tapAndMapped.validationErrors(for: .xbox360).map(\.keyPath) == ["tap_hold.b"])
        let oneStickTwice = RemapProfile(pointerStick: StickToPointer(stick: .right), scrollStick: StickToScroll(stick: .right))
        #expect(oneStickTwice.validationErrors(for: .xbox360).map(\.keyPath) == ["mouse.scroll_stick"])
        let padTargetWithoutPad = RemapProfile(map: [.button(.a): [.button(.b)]])
        let errors = padTargetWithoutPad.validationErrors(for: .nothing)
        #expect(errors.map(\.description) == [
            "map.a: remap --as none makes no virtual pad, so nothing shows b; map it to key:, mouse: or scroll: targets, or make a pad with --as xbox360 or --as dualsense",
        ])
        #expect(RemapProfile(map: [.button(.a): [.desktop(Self.space)]]).validationErrors(for: .nothing).isEmpty)
    }
}
