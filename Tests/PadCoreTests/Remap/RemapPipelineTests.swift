@testable import PadCore
import PadTestSupport
import Testing

/// Events in, events out: each case is a profile and a script (see `RemapScript`).
@Suite struct RemapPipelineTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let profile: RemapProfile
        let script: [String]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "identity", profile: .identity, script: [
            "+a -> +a", "leftx=-32768 lefttrigger=7 -> leftx=-32768 lefttrigger=7", "+paddle1 -a -> -a +paddle1",
            "leftx=32767 -> leftx=32767",
        ]),
        Case(name: "swap a and b", profile: RemapProfile(map: [.button(.a): [.button(.b)], .button(.b): [.button(.a)]]), script: [
            "+a -> +b", "+b -> +a", "-a -> -b", "-b -> -a",
        ]),
        Case(name: "paddle onto a face button", profile: RemapProfile(map: [.button(.paddle1): [.button(.a)]]), script: [
            "+paddle1 -> +a", "+a ->", "-paddle1 ->", "-a -> -a",
        ]),
        Case(name: "one source, two targets; a disabled button",
             profile: RemapProfile(map: [.button(.paddle2): [.button(.a), .button(.x)], .button(.back): []]), script: [
            "+paddle2 -> +a +x", "+back ->", "-paddle2 -> -a -x",
        ]),
        Case(name: "trigger to button, threshold with hysteresis",
             profile: RemapProfile(map: [.axis(.righttrigger): [.button(.rightshoulder)]]), script: [
            "righttrigger=16000 ->", "righttrigger=16384 -> +rightshoulder", "righttrigger=14800 ->",
            "righttrigger=14700 -> -rightshoulder", "righttrigger=16000 ->", "righttrigger=32767 -> +rightshoulder",
        ]),
        Case(name: "trigger to button at a chosen threshold",
             profile: RemapProfile(map: [.axis(.lefttrigger): [.button(.leftshoulder)]], thresholdFractions: [.axis(.lefttrigger): 0.1]),
             script: ["lefttrigger=3200 ->", "lefttrigger=3300 -> +leftshoulder", "lefttrigger=1700 ->", "lefttrigger=1600 -> -leftshoulder"]),
        Case(name: "d-pad to left stick halves",
             profile: RemapProfile(map: [
                .button(.dpup): [.stickHalf(.lefty, .negative)], .button(.dpdown): [.stickHalf(.lefty, .positive)],
                .button(.dpleft): [.stickHalf(.leftx, .negative)], .button(.dpright): [.stickHalf(.leftx, .positive)],
             ]), script: [
            "+dpup -> lefty=-32768", "+dpleft -> leftx=-32768", "+dpright -> leftx=0", "-dpleft -> leftx=32767",
            "-dpup lefty=-100 -> lefty=-100", "-dpright -> leftx=0",
        ]),
        Case(name: "stick halves to the d-pad",
             profile: RemapProfile(map: [.stickHalf(.leftx, .positive): [.button(.dpright)], .stickHalf(.leftx, .negative): [.button(.dpleft)]]),
             script: ["leftx=20000 -> +dpright", "leftx=-20000 -> +dpleft -dpright", "leftx=0 -> -dpleft"]),
        Case(name: "button to a trigger", profile: RemapProfile(map: [.button(.paddle1): [.axis(.righttrigger)]]), script: [
            "+paddle1 -> righttrigger=32767", "righttrigger=100 ->", "-paddle1 -> righttrigger=100",
        ]),
        Case(name: "whole axes swapped by the map",
             profile: RemapProfile(map: [.axis(.leftx): [.axis(.rightx)], .axis(.rightx): [.axis(.leftx)]]), script: [
            "leftx=-32768 -> rightx=-32768", "rightx=100 -> leftx=100", "leftx=32767 -> rightx=32767",
        ]),
        Case(name: "sticks swapped, left Y inverted before the swap",
             profile: RemapProfile(leftStick: StickShaping(invertY: true), swapSticks: true), script: [
            "lefty=-32768 -> righty=32767", "rightx=5 -> leftx=5", "lefty=1000 -> righty=-1000",
        ]),
        Case(name: "trigger deadzones",
             profile: RemapProfile(leftTrigger: TriggerShaping(deadzoneFraction: 0.1, outerDeadzoneFraction: 0.1)), script: [
            "lefttrigger=3000 ->", "lefttrigger=16384 -> lefttrigger=16384", "lefttrigger=29491 ->  lefttrigger=32767",
            "lefttrigger=29000 -> lefttrigger=32154", "lefttrigger=0 -> lefttrigger=0",
        ]),
        Case(name: "toggle", profile: RemapProfile(toggles: ButtonSet([.y])), script: [
            "+y -> +y", "-y ->", "+a -> +a", "+y -> -y", "-y ->", "-a -> -a",
        ]),
        Case(name: "toggle feeds the map", profile: RemapProfile(map: [.button(.y): [.button(.x)]], toggles: ButtonSet([.y])), script: [
            "+y -> +x", "-y ->", "+y -> -x",
        ]),
        Case(name: "turbo at explicit times", profile: RemapProfile(turbo: [.x: Turbo(periodMilliseconds: 100)]), script: [
            "1000: +x -> +x", "50999: ->", "51000: -> -x", "101000: -> +x", "120000: -x -> -x", "151000: ->",
            "200000: +x -> +x", "250000: -> -x",
        ]),
        Case(name: "turbo on a mapped paddle fires the target",
             profile: RemapProfile(map: [.button(.paddle1): [.button(.a)]], turbo: [.paddle1: Turbo(periodMilliseconds: 20)]), script: [
            "0: +paddle1 -> +a", "10000: -> -a", "20000: -> +a", "25000: -paddle1 -> -a",
        ]),
        Case(name: "layer: held button silenced across a switch, nothing stuck",
             profile: RemapProfile(layers: [RemapLayer(holdControl: .button(.leftshoulder), map: [.button(.a): [.button(.x)]])]), script: [
            "+a -> +a", "+leftshoulder -> -a", "-a ->", "+a -> +x", "-leftshoulder -> -x", "-a ->", "+a -> +a", "-a -> -a",
        ]),
        Case(name: "layer: buttons the layer does not list keep working",
             profile: RemapProfile(layers: [RemapLayer(holdControl: .button(.leftshoulder), map: [.button(.a): [.button(.x)]])]), script: [
            "+b -> +b", "+leftshoulder ->", "+a -> +x", "-leftshoulder -> -x", "-b -> -b", "-a ->",
        ]),
        Case(name: "layer: a button pressed in the same snapshot as the change follows the new layer",
             profile: RemapProfile(layers: [RemapLayer(holdControl: .button(.leftshoulder), map: [.button(.a): [.button(.x)]])]), script: [
            "+leftshoulder +a -> +x", "-a -> -x", "+a -> +x", "-leftshoulder -a -> -x", "+leftshoulder ->",
            "-leftshoulder +a -> +a", "-a -> -a",
        ]),
        Case(name: "layer held by a trigger; the trigger is not passed on",
             profile: RemapProfile(layers: [RemapLayer(holdControl: .axis(.lefttrigger), map: [.button(.a): [.button(.y)], .axis(.leftx): [.axis(.rightx)]])]),
             script: [
                "lefttrigger=30000 ->", "+a -> +y", "leftx=-500 -> rightx=-500", "lefttrigger=0 -> -y leftx=-500 rightx=0",
                "-a ->", "+a -> +a",
             ]),
        Case(name: "two layers: the last one pressed wins",
             profile: RemapProfile(layers: [
                RemapLayer(holdControl: .button(.leftshoulder), map: [.button(.a): [.button(.x)]]),
                RemapLayer(holdControl: .button(.rightshoulder), map: [.button(.a): [.button(.y)]]),
             ]), script: [
                "+rightshoulder ->", "+leftshoulder ->", "+a -> +x", "-leftshoulder -> -x", "-a ->", "+a -> +y",
                "-rightshoulder -> -y", "-a ->",
             ]),
        Case(name: "gyro scaled per axis, added to the right stick",
             profile: RemapProfile(gyro: GyroToRightStick(xDeflectionPerRadianPerSecond: 0.5, yDeflectionPerRadianPerSecond: 0.25)), script: [
            "gyro=0,1,0 -> rightx=-16384", "gyro=2,0,0 -> rightx=0 righty=-16384", "gyro=0,-10,0 -> rightx=32767 righty=0",
            "gyro=0,0.1,0 rightx=1000 -> rightx=-638", "gyro=0,0,5 rightx=0 -> rightx=0",
        ]),
        Case(name: "gyro only while its enable button is held",
             profile: RemapProfile(gyro: GyroToRightStick(enableButton: .rightshoulder)), script: [
            "gyro=0,1,0 ->", "+rightshoulder -> +rightshoulder rightx=-32767", "-rightshoulder -> -rightshoulder rightx=0",
        ]),
    ]

    @Test(arguments: cases)
    func scriptRunsAsWritten(_ testCase: Case) throws {
        var pipeline = try RemapPipeline(profile: testCase.profile, target: .everything)
        #expect(RemapScript.run(&pipeline, testCase.script) == RemapScript.normalised(testCase.script))
    }

    @Test(arguments: [1, 2, 3, 0xC0FFEE] as [UInt64])
    func identityOutputEqualsInput(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var pipeline = RemapPipeline.identity()
        var snapshot = PadSnapshot.neutral
        for step in 0..<500 {
            snapshot = PadSnapshot.random(using: &generator, from: snapshot, changeRate: 0.3)
            #expect(pipeline.apply(snapshot, atMicroseconds: UInt64(step) * 1000) == snapshot)
            #expect(pipeline.nextWakeMicroseconds == nil)
        }
    }

    /// The pass-through shortcut gives what every stage gives, for profiles that change nothing.
    @Test(arguments: [
        RemapProfile.identity,
        RemapProfile(map: [.button(.a): [.button(.a)], .axis(.leftx): [.axis(.leftx)]]),
        RemapProfile(thresholdFractions: [.axis(.lefttrigger): 0.2]),
    ])
    func passingThroughEqualsEveryStage(_ profile: RemapProfile) throws {
        for target in [VirtualPadCapabilities.everything, .xbox360, .dualSense] {
            var pipeline = try RemapPipeline(profile: profile, target: target)
            #expect(pipeline.passesThrough)
            var reference = pipeline
            var generator = SplitMix64(seed: 7)
            var snapshot = PadSnapshot.neutral
            for step in 0..<500 {
                snapshot = PadSnapshot.random(using: &generator, from: snapshot, changeRate: 0.3)
                let now = UInt64(step) * 1000
                #expect(pipeline.apply(snapshot, atMicroseconds: now) == reference.applyingEveryStage(snapshot, atMicroseconds: now))
            }
        }
    }

    @Test(arguments: [
        RemapProfile(map: [.button(.a): [.button(.b)]]), RemapProfile(swapSticks: true),
        RemapProfile(leftStick: StickShaping(deadzoneFraction: 0.1)), RemapProfile(rightStick: StickShaping(invertY: true)),
        RemapProfile(rightTrigger: TriggerShaping(deadzoneFraction: 0.1)), RemapProfile(toggles: ButtonSet([.x])),
        RemapProfile(turbo: [.x: Turbo(periodMilliseconds: 100)]), RemapProfile(gyro: GyroToRightStick()),
        RemapProfile(layers: [RemapLayer(holdControl: .button(.leftshoulder), map: [:])]),
    ])
    func profilesThatChangeSomethingDoNotPassThrough(_ profile: RemapProfile) throws {
        #expect(try !RemapPipeline(profile: profile, target: .everything).passesThrough)
    }

    @Test func turboAsksToBeWokenOnlyWhileHeld() throws {
        var pipeline = try RemapPipeline(profile: RemapProfile(turbo: [.x: Turbo(periodMilliseconds: 100)]), target: .xbox360)
        var source = PadSnapshot.neutral
        _ = pipeline.apply(source, atMicroseconds: 0)
        #expect(pipeline.nextWakeMicroseconds == nil)
        source[.x] = true
        _ = pipeline.apply(source, atMicroseconds: 1000)
        #expect(pipeline.nextWakeMicroseconds == 51000)
        _ = pipeline.apply(source, atMicroseconds: 51000)
        #expect(pipeline.nextWakeMicroseconds == 101_000)
        _ = pipeline.apply(source, atMicroseconds: 70000)  // some other input arrived in between
        #expect(pipeline.nextWakeMicroseconds == 101_000)
        source[.x] = false
        _ = pipeline.apply(source, atMicroseconds: 80000)
        #expect(pipeline.nextWakeMicroseconds == nil)
    }

    @Test func touchesMotionAndBatteryPassThrough() throws {
        var pipeline = try RemapPipeline(
            profile: RemapProfile(map: [.button(.a): [.button(.b)]], gyro: GyroToRightStick()), target: .dualSense)
        var source = PadSnapshot.neutral
        source.touches[0] = TouchContact(trackingID: 3, active: true, x: 0.25, y: 0.5)
        source.motion = MotionSample(accelMetersPerSecondSquared: Vector3(x: 0, y: 9.8, z: 0), timestampMicroseconds: 77)
        source.battery = BatteryState(percent: 40, charging: false)
        let output = pipeline.apply(source, atMicroseconds: 0)
        #expect(output.touches == source.touches)
        #expect(output.motion == source.motion)
        #expect(output.battery == source.battery)
    }
}
