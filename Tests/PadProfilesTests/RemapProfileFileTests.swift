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
        try #require(blocks.count >= 3, "docs/remapping.md has \(blocks.count) toml blocks; its three examples are expected")
        for block in blocks {
            let target: VirtualPadCapabilities = block.contains("(dualsense)") ? .dualSense : .xbox360
            #expect(throws: Never.self) { try RemapProfileFile.parse(block, for: target) }
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
        case syntax, unknownKey, unknownControl, wrongType, outOfRange, notOnPad, incompatible, curve
        var description: String { "\(self)" }
        func matches(_ problem: ProfileError.Problem) -> Bool {
            switch (self, problem) {
            case (.syntax, .syntax), (.unknownKey, .unknownKey), (.unknownControl, .unknownControl), (.wrongType, .wrongType),
                (.outOfRange, .invalid(.outOfRange)), (.notOnPad, .invalid(.targetNotOnVirtualPad)),
                (.incompatible, .invalid(.incompatibleKinds)), (.curve, .invalid(.curvePointsInvalid)):
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
    ]

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
