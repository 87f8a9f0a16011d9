import PadCore
import Testing

@Suite struct RemapValidationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let profile: RemapProfile
        let target: VirtualPadCapabilities
        let keyPath: String
        var testDescription: String { name }
    }

    static let rejected: [Case] = [
        Case(name: "paddle on an Xbox 360 pad", profile: RemapProfile(map: [.button(.a): [.button(.paddle1)]]), target: .xbox360, keyPath: "map.a"),
        Case(name: "touchpad in a layer on an Xbox 360 pad",
             profile: RemapProfile(layers: [RemapLayer(holdControl: .axis(.lefttrigger), map: [.button(.a): [.button(.touchpad)]])]),
             target: .xbox360, keyPath: "layers.lefttrigger.map.a"),
        Case(name: "whole stick axis onto a button", profile: RemapProfile(map: [.axis(.leftx): [.button(.a)]]), target: .dualSense, keyPath: "map.leftx"),
        Case(name: "button onto a whole stick axis", profile: RemapProfile(map: [.button(.a): [.axis(.leftx)]]), target: .dualSense, keyPath: "map.a"),
        Case(name: "a half and its whole axis", profile: RemapProfile(map: [.axis(.leftx): [.axis(.rightx)], .stickHalf(.leftx, .positive): [.button(.a)]]),
             target: .dualSense, keyPath: "map.leftx+"),
        Case(name: "deadzone of 1", profile: RemapProfile(leftStick: StickShaping(deadzoneFraction: 1)), target: .dualSense, keyPath: "sticks.left.deadzone"),
        Case(name: "deadzones leaving no travel", profile: RemapProfile(rightStick: StickShaping(deadzoneFraction: 0.6, outerDeadzoneFraction: 0.4)),
             target: .dualSense, keyPath: "sticks.right.outer_deadzone"),
        Case(name: "curve going down",
             profile: RemapProfile(leftStick: StickShaping(curve: .points([.init(x: 0, y: 0), .init(x: 0.5, y: 0.6), .init(x: 1, y: 0.5)]))),
             target: .dualSense, keyPath: "sticks.left.curve"),
        Case(name: "curve not ending at 1", profile: RemapProfile(leftStick: StickShaping(curve: .points([.init(x: 0, y: 0), .init(x: 0.9, y: 1)]))),
             target: .dualSense, keyPath: "sticks.left.curve"),
        Case(name: "exponent 0", profile: RemapProfile(rightStick: StickShaping(curve: .exponent(0))), target: .dualSense, keyPath: "sticks.right.curve"),
        Case(name: "threshold 0", profile: RemapProfile(thresholdFractions: [.axis(.righttrigger): 0]), target: .dualSense, keyPath: "thresholds.righttrigger"),
        Case(name: "threshold on a button", profile: RemapProfile(thresholdFractions: [.button(.a): 0.5]), target: .dualSense, keyPath: "thresholds.a"),
        Case(name: "turbo too fast", profile: RemapProfile(turbo: [.x: Turbo(periodMilliseconds: 2)]), target: .dualSense, keyPath: "turbo.x.period_ms"),
        Case(name: "gyro sensitivity not finite", profile: RemapProfile(gyro: GyroToRightStick(xDeflectionPerRadianPerSecond: .infinity)),
             target: .dualSense, keyPath: "gyro.sensitivity_x"),
        Case(name: "layer button also mapped",
             profile: RemapProfile(map: [.button(.leftshoulder): [.button(.a)]], layers: [RemapLayer(holdControl: .button(.leftshoulder), map: [:])]),
             target: .dualSense, keyPath: "map.leftshoulder"),
        Case(name: "layer button also a toggle",
             profile: RemapProfile(layers: [RemapLayer(holdControl: .button(.leftshoulder), map: [:])], toggles: ButtonSet([.leftshoulder])),
             target: .dualSense, keyPath: "layers.leftshoulder"),
        Case(name: "layer held by a whole stick axis", profile: RemapProfile(layers: [RemapLayer(holdControl: .axis(.leftx), map: [:])]),
             target: .dualSense, keyPath: "layers.leftx"),
    ]

    @Test(arguments: rejected)
    func rejectedWithTheKeyPath(_ testCase: Case) {
        #expect(throws: RemapValidationError.self) { try RemapPipeline(profile: testCase.profile, target: testCase.target) }
        #expect(testCase.profile.validationErrors(for: testCase.target).map(\.keyPath) == [testCase.keyPath])
    }

    @Test func targetNotOnThePadListsWhatThePadHas() throws {
        let profile = RemapProfile(map: [.button(.a): [.button(.paddle1)]])
        let error = try #require(profile.validationErrors(for: .xbox360).first)
        #expect(error.problem == .targetNotOnVirtualPad(target: "paddle1", padType: "xbox360", allowed: VirtualPadCapabilities.xbox360.controlNames))
        #expect(error.allowed.contains("a") && error.allowed.contains("leftx+") && !error.allowed.contains("paddle1"))
        #expect(error.description.hasPrefix("map.a: the xbox360 virtual pad has no paddle1; it has: a, b, x, y"))
    }

    @Test func theSameTargetsAreFineOnAPadThatHasThem() throws {
        let profile = RemapProfile(map: [.button(.paddle1): [.button(.touchpad)], .button(.misc1): [.button(.a)]])
        #expect(profile.validationErrors(for: .dualSense).isEmpty)
        #expect(!profile.validationErrors(for: .xbox360).isEmpty)
    }

    @Test(arguments: RemapControl.allCases)
    func controlNamesRoundTrip(_ control: RemapControl) {
        #expect(RemapControl(name: control.name) == control)
    }

    @Test(arguments: ["lefttrigger+", "leftx*", "A", "", "paddle5", "+leftx"])
    func otherNamesAreNotControls(_ name: String) {
        #expect(RemapControl(name: name) == nil)
    }
}

@Suite struct RemapCapabilityTests {
    @Test(arguments: [VirtualPadCapabilities.xbox360, .dualSense])
    func identityExposesWhatTheSourceHas(_ source: VirtualPadCapabilities) {
        let derived = RemapPipeline.identity(target: source).outputCapabilities(from: source)
        #expect(derived.buttons == source.buttons)
        #expect(derived.axes == source.axes)
        #expect(derived.touchpad == source.touchpad && derived.motion == source.motion)
    }

    @Test func mappedAwayControlsDisappearAndTargetsAppear() throws {
        let profile = RemapProfile(
            map: [.button(.touchpad): [.button(.back)], .button(.misc1): [], .axis(.righttrigger): [.button(.rightshoulder)]],
            layers: [RemapLayer(holdControl: .button(.leftshoulder), map: [.button(.a): [.button(.paddle1)]])])
        let derived = try RemapPipeline(profile: profile, target: .everything).outputCapabilities(from: .dualSense)
        #expect(!derived.buttons.contains(.touchpad) && !derived.buttons.contains(.misc1))
        #expect(!derived.buttons.contains(.leftshoulder), "a layer's hold button is never passed on")
        #expect(derived.buttons.contains(.paddle1) && derived.buttons.contains(.a) && derived.buttons.contains(.back))
        #expect(!derived.axes.contains(.righttrigger))
    }

    @Test func gyroNeedsTheRightStickOnlyWhenTheSourceHasMotion() throws {
        let profile = RemapProfile(map: [.axis(.rightx): [], .axis(.righty): []], gyro: GyroToRightStick())
        let pipeline = try RemapPipeline(profile: profile, target: .dualSense)
        #expect(pipeline.outputCapabilities(from: .dualSense).axes.contains(.rightx))
        #expect(!pipeline.outputCapabilities(from: .xbox360).axes.contains(.rightx))
    }
}
