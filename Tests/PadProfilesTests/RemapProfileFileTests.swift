import Foundation
import PadCore
import PadProfiles
import PadTestSupport
import Testing

@Suite struct RemapProfileFileTests {
    static let examplesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/profiles")

    static let examples: [(file: String, target: VirtualPadCapabilities)] = [
        ("nintendo-layout.toml", .xbox360), ("nintendo-layout.toml", .dualSense),
        ("shooter.toml", .xbox360), ("gyro-aim.toml", .dualSense),
        ("desktop.toml", .nothing), ("gyro-mouse-flick.toml", .nothing), ("gyro-mouse-flick.toml", .dualSense),
    ]

    @Test(arguments: examples.map { "\($0.file) for \($0.target.name)" })
    func everyExampleParses(_ description: String) throws {
        let example = try #require(Self.examples.first { "\($0.file) for \($0.target.name)" == description })
        let text = try String(contentsOf: Self.examplesDirectory.appendingPathComponent(example.file), encoding: .utf8)
        let profile = try RemapProfileFile.parse(text, for: example.target)
        #expect(profile != .identity)
    }

    @Test func everyExampleIsTested() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.examplesDirectory.path).filter { $0.hasSuffix(".toml") }
        #expect(Set(files) == Set(Self.examples.map(\.file)))
    }

    /// The remapping guide's examples are shortened copies of the files; they must parse as well. A guide without
    /// any toml block fails: the test must not pass by finding nothing to check.
    @Test func everyTOMLBlockInTheRemappingGuideParses() throws {
        let guide = try String(
            contentsOf: Self.examplesDirectory.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("docs/remapping.md"),
            encoding: .utf8)
        let blocks = guide.components(separatedBy: "```toml\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        try #require(blocks.count >= 5, "docs/remapping.md has \(blocks.count) toml blocks; its five examples are expected")
        for block in blocks {
            let target: VirtualPadCapabilities = block.contains("(dualsense)") ? .dualSense : .xbox360
            // A block whose `as` names a virtual pad is read for that pad, as remap reads it.
            #expect(throws: Never.self) { try RemapProfileFile.parse(block) { $0?.capabilities ?? target } }
        }
    }

    @Test func theWholeSchemaReadsIntoTheModel() throws {
        let text = """
            [map]
            a = "b"
            b = ["a", "x"]
            back = "none"
            righttrigger = "rightshoulder"
            "leftx+" = "dpright"
            leftx- = []
            rightx = "leftx"

            [thresholds]
            righttrigger = 0.3

            [sticks]
            swap = true
            [sticks.left]
            deadzone = 0.1
            outer_deadzone = 0.05
            anti_deadzone = 0.2
            curve = 1.5
            invert_y = true
            [sticks.right]
            curve = [[0, 0], [0.5, 0.3], [1, 1]]
            invert_x = true

            [triggers.left]
            deadzone = 0.05
            [triggers.right]
            outer_deadzone = 0.1

            [toggle]
            y = true
            start = false

            [turbo]
            x = { period_ms = 80 }

            [layers.leftshoulder.map]
            a = "x"
            [layers.lefttrigger.map]
            dpup = "lefty-"

            [gyro]
            sensitivity_x = 1.5
            sensitivity_y = -1
            enable_button = "rightshoulder"
            """
        let profile = try RemapProfileFile.parse(text, for: .dualSense)
        let expected = RemapProfile(
            map: [
                .button(.a): [.button(.b)], .button(.b): [.button(.a), .button(.x)], .button(.back): [],
                .axis(.righttrigger): [.button(.rightshoulder)], .stickHalf(.leftx, .positive): [.button(.dpright)],
                .stickHalf(.leftx, .negative): [], .axis(.rightx): [.axis(.leftx)],
            ],
            layers: [
                RemapLayer(holdControl: .button(.leftshoulder), map: [.button(.a): [.button(.x)]]),
                RemapLayer(holdControl: .axis(.lefttrigger), map: [.button(.dpup): [.stickHalf(.lefty, .negative)]]),
            ],
            thresholdFractions: [.axis(.righttrigger): 0.3],
            leftStick: StickShaping(deadzoneFraction: 0.1, outerDeadzoneFraction: 0.05, antiDeadzoneFraction: 0.2, curve: .exponent(1.5), invertY: true),
            rightStick: StickShaping(curve: .points([.init(x: 0, y: 0), .init(x: 0.5, y: 0.3), .init(x: 1, y: 1)]), invertX: true),
            swapSticks: true,
            leftTrigger: TriggerShaping(deadzoneFraction: 0.05), rightTrigger: TriggerShaping(outerDeadzoneFraction: 0.1),
            toggles: ButtonSet([.y]), turbo: [.x: Turbo(periodMilliseconds: 80)],
            gyro: GyroToRightStick(xDeflectionPerRadianPerSecond: 1.5, yDeflectionPerRadianPerSecond: -1, enableButton: .rightshoulder))
        // Layers come in the file's key order as TOMLKit lists them; compare them as a set.
        #expect(Set(profile.layers.map(\.holdControl)) == Set(expected.layers.map(\.holdControl)))
        for layer in expected.layers { #expect(profile.layers.contains(layer)) }
        var withoutLayers = profile
        withoutLayers.layers = expected.layers
        #expect(withoutLayers == expected)
    }

    /// `as` names the virtual pad the profile wants; the profile is then checked against that pad's controls (the
    /// closure is remap's: --as, else the profile's `as`, else the pad's own kind).
    @Test func asNamesTheVirtualPadAndTheProfileIsCheckedAgainstIt() throws {
        let text = "as = \"dualsense-edge\"\n[map]\na = \"paddle1\"\n"
        var asked: VirtualPadChoice??
        let profile = try RemapProfileFile.parse(text) { choice in
            asked = choice
            return choice?.capabilities ?? .xbox360
        }
        #expect(profile.virtualPad == .pad(.dualSenseEdge) && asked == .some(.pad(.dualSenseEdge)))
        // --as xbox360 overriding it: the Xbox 360 pad has no paddles, and the mistake names its line.
        let error = try #require(throws: ProfileError.self) {
            try RemapProfileFile.parse(text) { _ in VirtualPadKind.xbox360.capabilities }
        }
        #expect(error.line == 3 && error.description.contains("paddle1"))
        #expect(try RemapProfileFile.parse("as = \"none\"\n").virtualPad == VirtualPadChoice.none)
        #expect(try RemapProfileFile.parse("# nothing\n").virtualPad == nil)
    }

    @Test func anUnknownVirtualPadIsRefusedWithTheNames() throws {
        let error = try #require(throws: ProfileError.self) { try RemapProfileFile.parse("as = \"ps9\"\n") }
        #expect(error.line == 1 && error.keyPath == "as")
        #expect(error.description.contains("dualshock4") && error.description.contains("none"))
        #expect(throws: ProfileError.self) { try RemapProfileFile.parse("as = 4\n") }
    }

    @Test func anEmptyFileIsTheIdentity() throws {
        #expect(try RemapProfileFile.parse("# nothing yet\n") == .identity)
    }

    /// A profile file driven end to end: text in, events in, events out.
    @Test func aParsedProfileRunsAsWritten() throws {
        let profile = try RemapProfileFile.parse(
            """
            [map]
            a = "b"
            b = "a"
            paddle1 = "a"
            [layers.leftshoulder.map]
            a = "x"
            """, for: .xbox360)
        var pipeline = try RemapPipeline(profile: profile, target: .xbox360)
        let script = [
            "+paddle1 -> +a", "+a -> +b", "+leftshoulder -> -b", "-a ->", "+a -> +x", "-paddle1 -> -a",
            "-leftshoulder -> -x", "-a ->",
        ]
        #expect(RemapScript.run(&pipeline, script) == RemapScript.normalised(script))
    }

    enum Expected: Sendable, CustomStringConvertible {
        case syntax, unknownKey, unknownControl, wrongType, outOfRange, notOnPad, incompatible, curve, desktop, conflict
        var description: String { "\(self)" }
        func matches(_ problem: ProfileError.Problem) -> Bool {
            switch (self, problem) {
            case (.syntax, .syntax), (.unknownKey, .unknownKey), (.unknownControl, .unknownControl), (.wrongType, .wrongType),
                (.outOfRange, .invalid(.outOfRange)), (.notOnPad, .invalid(.targetNotOnVirtualPad)),
                (.incompatible, .invalid(.incompatibleKinds)), (.curve, .invalid(.curvePointsInvalid)),
                (.desktop, .unknownDesktopTarget), (.conflict, .invalid(.conflict)):
                true
            default:
                false
            }
        }
    }

    struct ErrorCase: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        let target: VirtualPadCapabilities
        let keyPath: String
        let line: Int
        let expected: Expected
        /// Something every message must name: what is allowed, or the bad value.
        let mentions: String
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(name: "unknown top-level table", text: "[map]\na = \"b\"\n\n[mapp]\nb = \"a\"\n", target: .xbox360,
                  keyPath: "mapp", line: 4, expected: .unknownKey, mentions: "thresholds"),
        ErrorCase(name: "typo in a stick setting", text: "[sticks.left]\ndeadzone = 0.1\ndeadzon = 0.1\n", target: .xbox360,
                  keyPath: "sticks.left.deadzon", line: 3, expected: .unknownKey, mentions: "outer_deadzone"),
        ErrorCase(name: "unknown button as a source", text: "[map]\nbutton_a = \"b\"\n", target: .xbox360,
                  keyPath: "map.button_a", line: 2, expected: .unknownControl, mentions: "paddle1"),
        ErrorCase(name: "unknown button as a target", text: "# swap\n[map]\na = \"b\"\nb = \"bee\"\n", target: .xbox360,
                  keyPath: "map.b", line: 4, expected: .unknownControl, mentions: "none"),
        ErrorCase(name: "unknown button in a layer", text: "[layers.leftshoulder.map]\nx = \"a\"\nq = \"a\"\n", target: .xbox360,
                  keyPath: "layers.leftshoulder.map.q", line: 3, expected: .unknownControl, mentions: "leftx+"),
        ErrorCase(name: "toggle on an axis", text: "[toggle]\nleftx = true\n", target: .xbox360,
                  keyPath: "toggle.leftx", line: 2, expected: .unknownControl, mentions: "rightshoulder"),
        ErrorCase(name: "deadzone out of range", text: "[sticks.left]\n# worn stick\ndeadzone = 1.5\n", target: .xbox360,
                  keyPath: "sticks.left.deadzone", line: 3, expected: .outOfRange, mentions: "0 <= x < 1"),
        ErrorCase(name: "threshold out of range", text: "[thresholds]\n\"lefty-\" = 2\n", target: .xbox360,
                  keyPath: "thresholds.lefty-", line: 2, expected: .outOfRange, mentions: "0 < x <= 1"),
        ErrorCase(name: "turbo period out of range, inline table", text: "[turbo]\nx = { period_ms = 1 }\n", target: .xbox360,
                  keyPath: "turbo.x.period_ms", line: 2, expected: .outOfRange, mentions: "10...10000"),
        ErrorCase(name: "gyro sensitivity out of range", text: "[gyro]\nsensitivity_x = 1\nsensitivity_y = 1000\n", target: .dualSense,
                  keyPath: "gyro.sensitivity_y", line: 3, expected: .outOfRange, mentions: "-100.0...100.0"),
        ErrorCase(name: "boolean as text", text: "[sticks.left]\ninvert_y = \"yes\"\n", target: .xbox360,
                  keyPath: "sticks.left.invert_y", line: 2, expected: .wrongType, mentions: "true or false"),
        ErrorCase(name: "number as a mapping", text: "[map]\na = 3\n", target: .xbox360,
                  keyPath: "map.a", line: 2, expected: .wrongType, mentions: "none"),
        ErrorCase(name: "table where a number belongs", text: "[sticks.left.deadzone]\ninner = 1\n", target: .xbox360,
                  keyPath: "sticks.left.deadzone", line: 1, expected: .wrongType, mentions: "a number"),
        ErrorCase(name: "turbo period as a number of seconds", text: "[turbo.x]\nperiod_ms = 0.1\n", target: .xbox360,
                  keyPath: "turbo.x.period_ms", line: 2, expected: .wrongType, mentions: "milliseconds"),
        ErrorCase(name: "paddle on an Xbox 360 pad", text: "[map]\na = \"b\"\nb = \"paddle1\"\n", target: .xbox360,
                  keyPath: "map.b", line: 3, expected: .notOnPad, mentions: "rightshoulder"),
        ErrorCase(name: "touchpad in a trigger layer on an Xbox 360 pad",
                  text: "[map]\na = \"b\"\n\n[layers.lefttrigger.map]\nb = \"a\"\na = \"touchpad\"\n", target: .xbox360,
                  keyPath: "layers.lefttrigger.map.a", line: 6, expected: .notOnPad, mentions: "dpright"),
        ErrorCase(name: "whole stick axis onto a button, quoted halves around it",
                  text: "[map]\n\"leftx+\" = \"dpright\"\n\"leftx\" = \"a\"\n", target: .xbox360,
                  keyPath: "map.leftx", line: 3, expected: .incompatible, mentions: "leftx+"),
        ErrorCase(name: "curve going down, written over several lines",
                  text: "[sticks.right]\ndeadzone = 0.1\ncurve = [\n  [0, 0],\n  [0.5, 0.6],\n  [1, 0.5],\n]\n[sticks.left]\ndeadzone = 0.1\n",
                  target: .xbox360, keyPath: "sticks.right.curve", line: 3, expected: .curve, mentions: "monotonic"),
        ErrorCase(name: "table header starting with a brace (toml++ would only assert this)", text: "[map]\na = \"b\"\n[ }toggle]\n",
                  target: .xbox360, keyPath: "", line: 3, expected: .syntax, mentions: "table header"),
        ErrorCase(name: "a key with ] for a value (toml++ would only assert this)", text: "[map]\na = \"b\"\n\n[turbo]\nx = { period_ms = ] }\n",
                  target: .xbox360, keyPath: "", line: 5, expected: .syntax, mentions: "value is missing"),
        ErrorCase(name: "a brace where a list's value belongs", text: "[sticks.left]\ncurve = [\n  [0, 0],\n  [0.5, }0.3],\n]\n",
                  target: .xbox360, keyPath: "", line: 4, expected: .syntax, mentions: "value is missing"),
        ErrorCase(name: "not TOML", text: "[map]\na = \"b\"\nb = \n", target: .xbox360,
                  keyPath: "", line: 3, expected: .syntax, mentions: "line 3"),
        ErrorCase(name: "a key the kernel does not have", text: "[map]\na = \"key:space\"\nb = \"key:spacebar\"\n", target: .xbox360,
                  keyPath: "map.b", line: 3, expected: .desktop, mentions: "key:leftctrl"),
        ErrorCase(name: "a key in capitals", text: "[map]\na = [\"key:leftctrl\", \"key:C\"]\n", target: .xbox360,
                  keyPath: "map.a", line: 2, expected: .desktop, mentions: "lower case"),
        ErrorCase(name: "a mouse button the mouse does not have", text: "[layers.leftshoulder.map]\na = \"mouse:back\"\n", target: .xbox360,
                  keyPath: "layers.leftshoulder.map.a", line: 2, expected: .desktop, mentions: "mouse:left|right|middle|side|extra"),
        ErrorCase(name: "a hold time too short", text: "[tap_hold.b]\ntap = \"key:esc\"\ntap_hold_ms = 10\n", target: .xbox360,
                  keyPath: "tap_hold.b.tap_hold_ms", line: 3, expected: .outOfRange, mentions: "50...5000"),
        ErrorCase(name: "a tap/hold button also mapped", text: "[map]\nb = \"a\"\n[tap_hold.b]\ntap = \"key:esc\"\n", target: .xbox360,
                  keyPath: "tap_hold.b", line: 3, expected: .conflict, mentions: "remove its mapping"),
        ErrorCase(name: "a chord of one button", text: "[chords]\n\"leftshoulder\" = \"key:tab\"\n", target: .xbox360,
                  keyPath: "chords.leftshoulder", line: 2, expected: .wrongType, mentions: "joined by +"),
        ErrorCase(name: "the gyro on the mouse without the game's counts per turn", text: "[gyro]\noutput = \"mouse\"\n", target: .dualSense,
                  keyPath: "gyro.counts_per_turn", line: 1, expected: .wrongType, mentions: "counts_per_turn = 3600"),
        ErrorCase(name: "a stick setting for the gyro on the mouse",
                  text: "[gyro]\noutput = \"mouse\"\ncounts_per_turn = 3600\nsensitivity_x = 2\n", target: .dualSense,
                  keyPath: "gyro.sensitivity_x", line: 4, expected: .unknownKey, mentions: "upper_sensitivity"),
        ErrorCase(name: "one stick on the pointer and the wheel", text: "[mouse]\nstick = \"right\"\nscroll_stick = \"right\"\n",
                  target: .xbox360, keyPath: "mouse.scroll_stick", line: 3, expected: .conflict, mentions: "one use per stick"),
        ErrorCase(name: "a pad button with no virtual pad", text: "[map]\na = \"key:space\"\nx = \"y\"\n", target: .nothing,
                  keyPath: "map.x", line: 3, expected: .notOnPad, mentions: "--as none"),
    ]

    @Test func theDesktopSchemaReadsIntoTheModel() throws {
        let text = """
            tap_hold_ms = 250
            chord_ms = 80

            [map]
            a = "key:space"
            x = ["key:leftctrl", "key:c"]
            righttrigger = "mouse:left"
            dpup = "scroll:up"
            dpleft = "mouse:side"

            [tap_hold.b]
            tap = "key:esc"
            hold = ["key:leftshift", "mouse:right"]

            [tap_hold.y]
            tap = "key:f5"
            tap_hold_ms = 400

            [chords]
            "leftshoulder+rightshoulder" = "key:tab"

            [mouse]
            stick = "left"
            speed = 1500
            acceleration = 2
            acceleration_ms = 300
            scroll_stick = "right"
            scroll_speed = 6

            [gyro]
            output = "mouse"
            counts_per_turn = 7200
            sensitivity = 1.5
            lower_speed = 5
            upper_speed = 60
            upper_sensitivity = 3
            tightening = 2
            smoothing = 4
            smoothing_window_ms = 100
            space = "local"
            enable_button = "rightshoulder"
            calibrate_button = "back"
            """
        let profile = try RemapProfileFile.parse(text, for: .xbox360)
        func key(_ code: UInt16) -> RemapControl { .desktop(.key(KeyboardKey(code: code, name: ""))) }
        // The codes are the kernel's (linux/input-event-codes.h), as libevdev names them.
        #expect(profile.map[.button(.a)] == [key(57)])
        #expect(profile.map[.button(.x)] == [key(29), key(46)])
        #expect(profile.map[.axis(.righttrigger)] == [.desktop(.mouseButton(.left))])
        #expect(profile.map[.button(.dpup)] == [.desktop(.scroll(.up))])
        #expect(profile.map[.button(.dpleft)] == [.desktop(.mouseButton(.side))])
        #expect(profile.tapHold[.b] == TapHold(tap: [key(1)], hold: [key(42), .desktop(.mouseButton(.right))], holdMicroseconds: 250_000))
        #expect(profile.tapHold[.y] == TapHold(tap: [key(63)], hold: [], holdMicroseconds: 400_000))
        #expect(profile.chords == [Chord(.leftshoulder, .rightshoulder, targets: [key(15)])])
        #expect(profile.chordWindowMicroseconds == 80_000)
        #expect(profile.pointerStick == StickToPointer(stick: .left, countsPerSecond: 1500, acceleration: 2, accelerationMicroseconds: 300_000))
        #expect(profile.scrollStick == StickToScroll(stick: .right, notchesPerSecond: 6))
        #expect(profile.gyro == nil)
        #expect(profile.gyroMouse == GyroToMouse(
            settings: GyroMouseSettings(
                countsPerTurn: 7200, sensitivity: 1.5,
                acceleration: .init(lowerSpeedDegreesPerSecond: 5, upperSpeedDegreesPerSecond: 60, upperSensitivity: 3),
                tighteningDegreesPerSecond: 2, smoothingDegreesPerSecond: 4, smoothingWindowMicroseconds: 100_000, space: .local),
            enableButton: .rightshoulder, calibrateButton: .back))
        #expect(profile.needsVirtualKeyboard && profile.needsVirtualMouse)
        #expect(KeyboardKeyNames.name(forCode: 29) == "leftctrl")
    }

    @Test func flickStickTakesTheGyrosCountsPerTurnUnlessItHasItsOwn() throws {
        let shared = try RemapProfileFile.parse(
            "[gyro]\noutput = \"mouse\"\ncounts_per_turn = 5000\n[flick]\nstick = \"right\"\n", for: .dualSense)
        #expect(shared.flickStick == FlickStickBinding(stick: .right, settings: FlickStickSettings(countsPerTurn: 5000)))
        let own = try RemapProfileFile.parse("[flick]\nstick = \"left\"\ncounts_per_turn = 3600\nflick_time_ms = 150\n", for: .xbox360)
        #expect(own.flickStick == FlickStickBinding(stick: .left, settings: FlickStickSettings(countsPerTurn: 3600, flickMicroseconds: 150_000)))
        #expect(!own.needsVirtualKeyboard && own.needsVirtualMouse)
    }

    @Test(arguments: errorCases)
    func mistakesNameTheKeyTheLineAndWhatIsAllowed(_ testCase: ErrorCase) {
        #expect {
            _ = try RemapProfileFile.parse(testCase.text, for: testCase.target)
        } throws: { error in
            guard let error = error as? ProfileError else { return false }
            #expect(error.keyPath == testCase.keyPath)
            #expect(error.line == testCase.line)
            #expect(testCase.expected.matches(error.problem), "\(error.problem)")
            #expect(error.description.contains(testCase.mentions), "\(error.description)")
            if !testCase.keyPath.isEmpty { #expect(error.description.contains(testCase.keyPath)) }
            return true
        }
    }
}

@Suite struct RemapProfileFileRobustnessTests {
    /// Parsing is total: mangled profiles give a `ProfileError` or a profile, never a trap; and whatever parses
    /// for a pad type runs on it without trapping on random snapshots.
    @Test(arguments: Array(1...12) as [UInt64])
    func mangledProfilesNeverTrap(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let original = try String(
            contentsOf: RemapProfileFileTests.examplesDirectory.appendingPathComponent("shooter.toml"), encoding: .utf8)
        let pieces: [String] = ["[", "]", "=", "\"", "\n", "1.5", "-1", "a", "leftx+", "{", "}", ",", "#", "true", "map", "."]
        for _ in 0..<150 {
            var characters = Array(original)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<characters.count, using: &generator)
                if generator.chance(1, in: 2) {
                    characters.remove(at: index)
                } else {
                    characters.insert(contentsOf: pieces[Int.random(in: 0..<pieces.count, using: &generator)], at: index)
                }
            }
            do {
                let profile = try RemapProfileFile.parse(String(characters), for: .xbox360)
                var pipeline = try RemapPipeline(profile: profile, target: .xbox360)
                var snapshot = PadSnapshot.neutral
                for step in 0..<20 {
                    snapshot = PadSnapshot.random(using: &generator, from: snapshot, changeRate: 0.3)
                    _ = pipeline.apply(snapshot, atMicroseconds: UInt64(step) * 7000)
                }
            } catch let error as ProfileError {
                #expect(!error.description.isEmpty)
            }  // A profile that parsed but then failed RemapPipeline's validation throws out of the test: a bug.
        }
    }
}
