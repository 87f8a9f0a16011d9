@testable import PadCore
import PadTestSupport
import Testing

/// Each stage of `RemapPipeline` alone: its own rule, and its word on passing frames through unchanged.
@Suite struct RemapStageTests {
    /// A frame for `source` after a snapshot whose buttons were `previous`.
    static func frame(_ source: PadSnapshot = .neutral, previous: ButtonSet = ButtonSet()) -> RemapFrame {
        RemapFrame(source: source, previousButtons: previous)
    }

    static func frame(holding buttons: [Button], previous: [Button] = []) -> RemapFrame {
        var source = PadSnapshot.neutral
        source.buttons = ButtonSet(buttons)
        return frame(source, previous: ButtonSet(previous))
    }

    // MARK: Toggles

    @Test func togglePressLatchesOnAndTheNextPressOff() {
        var toggles = ButtonToggles(toggles: ButtonSet([.y]))
        var previous: [Button] = []
        var held: [ButtonSet] = []
        for physical in [[.y], [], [.a], [.a, .y], [.a], []] as [[Button]] {
            var frame = Self.frame(holding: physical, previous: previous)
            toggles.apply(&frame, atMicroseconds: 0)
            held.append(frame.held)
            previous = physical
        }
        #expect(held == [ButtonSet([.y]), ButtonSet([.y]), ButtonSet([.a, .y]), ButtonSet([.a]), ButtonSet([.a]), ButtonSet()])
    }

    @Test func togglesPassThroughOnlyWithoutToggleButtons() {
        #expect(ButtonToggles(toggles: ButtonSet()).passesThroughUnchanged)
        #expect(!ButtonToggles(toggles: ButtonSet([.x])).passesThroughUnchanged)
    }

    // MARK: Turbo

    @Test func turboPressesForTheFirstHalfOfEachPeriodAndWakesAtEachEdge() {
        var turbo = ButtonTurbo(turbo: [.x: Turbo(periodMilliseconds: 100)])
        var seen: [(held: Bool, wake: UInt64?)] = []
        for (time, holding) in [(1000, true), (50999, true), (51000, true), (101_000, true), (120_000, false), (200_000, true)]
            as [(UInt64, Bool)]
        {
            var frame = Self.frame(holding: holding ? [.x, .b] : [.b])
            turbo.apply(&frame, atMicroseconds: time)
            #expect(frame.held.contains(.b), "turbo leaves other buttons alone")
            seen.append((frame.held.contains(.x), frame.wakeMicroseconds))
        }
        #expect(seen.map(\.held) == [true, true, false, true, false, true])
        // Released at 120 000, the next press starts a new period.
        #expect(seen.map(\.wake) == [51000, 51000, 101_000, 151_000, nil, 250_000])
    }

    @Test func turboPeriodShorterThanTwoMicrosecondsCountsAsTwo() {
        var turbo = ButtonTurbo(turbo: [.a: Turbo(periodMicroseconds: 0)])
        var first = Self.frame(holding: [.a])
        turbo.apply(&first, atMicroseconds: 10)
        var second = Self.frame(holding: [.a])
        turbo.apply(&second, atMicroseconds: 11)
        #expect(first.held.contains(.a) && first.wakeMicroseconds == 11)
        #expect(!second.held.contains(.a) && second.wakeMicroseconds == 12)
    }

    @Test func turboPassesThroughOnlyWithoutTurboButtons() {
        #expect(ButtonTurbo(turbo: [:]).passesThroughUnchanged)
        #expect(!ButtonTurbo(turbo: [.x: Turbo(periodMilliseconds: 100)]).passesThroughUnchanged)
    }

    // MARK: Thresholds

    /// The right trigger's latch after each value, with `thresholds`.
    static func rightTriggerLatches(_ values: [Int16], thresholds: [RemapControl: Double] = [:]) -> [Bool] {
        var stage = PressThresholds(thresholdFractions: thresholds)
        let slot = OneSidedSlot(axis: .righttrigger, direction: .positive)
        return values.map { value in
            var frame = Self.frame()
            frame.shaped.rightTrigger = value
            stage.apply(&frame, atMicroseconds: 0)
            #expect(frame.magnitudes[slot.index] == Int32(max(0, value)))
            return frame.thresholdLatches[slot.index]
        }
    }

    @Test func thresholdLatchesAtTheThresholdAndReleasesFiveHundredthsBelow() {
        // Default 0.5: on at 16384 / 32767, off below 0.45 (14745.15).
        #expect(Self.rightTriggerLatches([16000, 16384, 14800, 14746, 14745, 16000]) == [false, true, true, true, false, false])
    }

    @Test func thresholdHysteresisIsAtMostHalfTheThreshold() {
        // 0.04: on at 1311 / 32767, off below 0.02 (655.34), not below -0.01.
        #expect(Self.rightTriggerLatches([1310, 1311, 656, 655], thresholds: [.axis(.righttrigger): 0.04]) == [false, true, true, false])
    }

    @Test func thresholdOfANegativeStickHalfCountsFrom32768() {
        var stage = PressThresholds(thresholdFractions: [.stickHalf(.leftx, .negative): 1])
        var frame = Self.frame()
        frame.shaped.leftX = -32768
        stage.apply(&frame, atMicroseconds: 0)
        let left = OneSidedSlot(axis: .leftx, direction: .negative)
        #expect(frame.magnitudes[left.index] == 32768)
        #expect(frame.thresholdLatches[left.index])
        #expect(!frame.thresholdLatches[OneSidedSlot(axis: .leftx, direction: .positive).index])
    }

    @Test func thresholdsReadTheShapedSnapshotNotTheSource() {
        var stage = PressThresholds(thresholdFractions: [:])
        var source = PadSnapshot.neutral
        source.leftTrigger = 32767
        var frame = Self.frame(source)
        frame.shaped.leftTrigger = 0
        stage.apply(&frame, atMicroseconds: 0)
        #expect(!frame.thresholdLatches[OneSidedSlot(axis: .lefttrigger, direction: .positive).index])
    }

    // MARK: Layers

    static let twoLayers = RemapProfile(layers: [
        RemapLayer(holdControl: .button(.leftshoulder), map: [.button(.a): [.button(.x)]]),
        RemapLayer(holdControl: .axis(.righttrigger), map: [.button(.a): [.button(.y)], .button(.b): [.button(.b)]]),
    ])

    /// Runs `ActiveLayer` for `twoLayers` over `steps` (buttons held, right trigger latched); returns each step's
    /// active table and silenced buttons.
    static func runLayers(_ steps: [(held: [Button], triggerLatched: Bool)]) -> [(table: Int, silenced: ButtonSet)] {
        var layer = ActiveLayer(profile: twoLayers, tables: TargetRouting.tables(for: twoLayers))
        var previous: [Button] = []
        return steps.map { step in
            var frame = Self.frame(holding: step.held, previous: previous)
            frame.thresholdLatches[OneSidedSlot(axis: .righttrigger, direction: .positive).index] = step.triggerLatched
            layer.apply(&frame, atMicroseconds: 0)
            previous = step.held
            return (frame.activeTable, frame.silenced)
        }
    }

    @Test func theLastLayerHeldIsActiveAndATriggerCanHoldOne() {
        let steps = Self.runLayers([
            ([.leftshoulder], false), ([.leftshoulder], true), ([], true), ([.leftshoulder], true), ([.leftshoulder], false),
            ([], false),
        ])
        #expect(steps.map(\.table) == [1, 2, 2, 1, 1, 0])
    }

    @Test func aButtonHeldAcrossAChangeIsSilencedOnlyWhereItsMappingDiffers() {
        let steps = Self.runLayers([
            ([.a, .b], false),
            ([.a, .b, .leftshoulder], false),  // a differs in layer 1, b does not
            ([.a, .b, .leftshoulder], false),
            ([.b, .leftshoulder], false),  // a released: no longer silenced
            ([.a, .b], false),  // back to the base with a pressed in this same snapshot: it follows the base at once
        ])
        #expect(steps.map(\.silenced) == [ButtonSet(), ButtonSet([.a]), ButtonSet([.a]), ButtonSet(), ButtonSet()])
        let back = Self.runLayers([([.leftshoulder], false), ([.leftshoulder, .a], false), ([.a], false), ([], false)])
        #expect(back.map(\.silenced) == [ButtonSet(), ButtonSet(), ButtonSet([.a]), ButtonSet()])
    }

    @Test func aButtonPressedWithTheHoldControlFollowsTheNewLayerAtOnce() {
        let steps = Self.runLayers([([.a, .leftshoulder], false)])
        #expect(steps.map(\.table) == [1])
        #expect(steps.map(\.silenced) == [ButtonSet()])
    }

    @Test func layersPassThroughOnlyWithoutLayers() {
        let none = RemapProfile(map: [.button(.a): [.button(.b)]])
        #expect(ActiveLayer(profile: none, tables: TargetRouting.tables(for: none)).passesThroughUnchanged)
        #expect(!ActiveLayer(profile: Self.twoLayers, tables: TargetRouting.tables(for: Self.twoLayers)).passesThroughUnchanged)
    }

    // MARK: Shaping, routing, gyro: the pass-through each claims, on random frames

    @Test func shapingThatPassesThroughLeavesEverySnapshotAsItIs() {
        let shaping = StickAndTriggerShaping(profile: .identity)
        #expect(shaping.passesThroughUnchanged)
        var generator = SplitMix64(seed: 11)
        for _ in 0..<500 {
            var frame = Self.frame(PadSnapshot.random(using: &generator))
            shaping.apply(&frame, atMicroseconds: 0)
            #expect(frame.shaped == frame.source)
        }
    }

    @Test func shapingInvertsBeforeTheSwap() {
        let shaping = StickAndTriggerShaping(profile: RemapProfile(leftStick: StickShaping(invertY: true), swapSticks: true))
        #expect(!shaping.passesThroughUnchanged)
        var source = PadSnapshot.neutral
        source.leftY = -32768
        source.rightX = 5
        var frame = Self.frame(source)
        shaping.apply(&frame, atMicroseconds: 0)
        #expect(frame.shaped.rightY == 32767 && frame.shaped.leftY == 0)
        #expect(frame.shaped.leftX == 5 && frame.shaped.rightX == 0)
    }

    @Test(arguments: [
        RemapProfile(swapSticks: true), RemapProfile(rightStick: StickShaping(invertX: true)),
        RemapProfile(leftStick: StickShaping(curve: .exponent(2))), RemapProfile(leftTrigger: TriggerShaping(outerDeadzoneFraction: 0.1)),
    ])
    func shapingThatChangesSomethingDoesNotPassThrough(_ profile: RemapProfile) {
        #expect(!StickAndTriggerShaping(profile: profile).passesThroughUnchanged)
    }

    @Test func identityRoutingPassesEveryControlOnButANegativeTriggerAsZero() {
        let routing = TargetRouting(tables: TargetRouting.tables(for: .identity))
        #expect(routing.passesThroughUnchanged)
        var thresholds = PressThresholds(thresholdFractions: [:])
        var generator = SplitMix64(seed: 12)
        for _ in 0..<500 {
            var source = PadSnapshot.random(using: &generator)
            if generator.chance(1, in: 4) { source.leftTrigger = Int16.random(in: -32768...0, using: &generator) }
            var frame = Self.frame(source)
            thresholds.apply(&frame, atMicroseconds: 0)
            routing.apply(&frame, atMicroseconds: 0)
            var expected = source
            expected.leftTrigger = max(0, source.leftTrigger)
            expected.rightTrigger = max(0, source.rightTrigger)
            #expect(frame.output == expected)
            #expect(frame.desktop == DesktopFrame() && frame.scrollTargets.isEmpty)
        }
    }

    @Test func routingFollowsTheActiveTableAndSkipsSilencedButtons() {
        let profile = RemapProfile(
            map: [.button(.a): [.button(.b), .desktop(.scroll(.up))]],
            layers: [RemapLayer(holdControl: .button(.leftshoulder), map: [.button(.a): [.axis(.righttrigger)]])])
        let routing = TargetRouting(tables: TargetRouting.tables(for: profile))
        #expect(!routing.passesThroughUnchanged)
        var base = Self.frame(holding: [.a, .leftshoulder])
        routing.apply(&base, atMicroseconds: 0)
        #expect(base.output.buttons == ButtonSet([.b]), "the hold control drives nothing")
        #expect(base.scrollTargets == [.up])
        var layer = Self.frame(holding: [.a])
        layer.activeTable = 1
        routing.apply(&layer, atMicroseconds: 0)
        #expect(layer.output.buttons == ButtonSet() && layer.output.rightTrigger == 32767)
        var silenced = Self.frame(holding: [.a])
        silenced.silenced = ButtonSet([.a])
        routing.apply(&silenced, atMicroseconds: 0)
        #expect(silenced.output.buttons == ButtonSet() && silenced.scrollTargets.isEmpty)
    }

    @Test func gyroAddsToTheRoutedRightStickWhileEnabled() {
        let gyro = GyroOnRightStick(gyro: GyroToRightStick(xDeflectionPerRadianPerSecond: 0.5, enableButton: .rightshoulder))
        #expect(!gyro.passesThroughUnchanged)
        #expect(GyroOnRightStick(gyro: nil).passesThroughUnchanged)
        var source = PadSnapshot.neutral
        source.motion = MotionSample(gyroRadiansPerSecond: Vector3(x: 0, y: -1, z: 0))
        var disabled = Self.frame(source)
        disabled.output.rightX = 1000
        gyro.apply(&disabled, atMicroseconds: 0)
        #expect(disabled.output.rightX == 1000)
        var enabled = Self.frame(source)
        enabled.held = ButtonSet([.rightshoulder])
        enabled.output.rightX = 1000
        gyro.apply(&enabled, atMicroseconds: 0)
        #expect(enabled.output.rightX == 1000 + 16384)
    }

    @Test func gyroDeflectionIsClampedAndANonFiniteOneAddsNothing() {
        #expect(GyroOnRightStick.adding(5, to: 0) == Int16.max)
        #expect(GyroOnRightStick.adding(-5, to: 0) == Int16.min)
        #expect(GyroOnRightStick.adding(.nan, to: 123) == 123)
        #expect(GyroOnRightStick.adding(.infinity, to: -7) == -7)
    }

    // MARK: The frame

    @Test func frameCountsOnlyButtonsNewlyPressed() {
        let frame = Self.frame(holding: [.a, .b], previous: [.b, .x])
        #expect(frame.newlyPressed == ButtonSet([.a]))
        #expect(frame.held == ButtonSet([.a, .b]))
    }

    @Test func theEarliestWakeWins() {
        var frame = Self.frame()
        #expect(frame.wakeMicroseconds == nil)
        frame.wake(atMicroseconds: 500)
        frame.wake(atMicroseconds: 900)
        frame.wake(atMicroseconds: 300)
        #expect(frame.wakeMicroseconds == 300)
    }
}
