public import PadCore
import TOMLKit

/// Remap profiles as TOML files (the schema is in docs/remapping.md): text in, a validated
/// `RemapProfile` out, or a `ProfileError` naming the key, its line and what is allowed. Nothing here opens a
/// device: a profile is checked completely before any pad is touched.
public enum RemapProfileFile {
    /// Parses and validates `text` for a virtual pad with `target`'s capabilities: mapping to something the pad
    /// type does not have is an error here, not a silent drop at run time.
    public static func parse(
        _ text: String, for target: VirtualPadCapabilities = .everything
    ) throws(ProfileError) -> RemapProfile {
        try parse(text) { _ in target }
    }

    /// Parses `text` and validates it for the virtual pad `target` says the profile gets, given what its `as` asks
    /// for (nil: nothing; a command's `--as` or the pad's own kind decides).
    public static func parse(
        _ text: String, target: (VirtualPadChoice?) -> VirtualPadCapabilities
    ) throws(ProfileError) -> RemapProfile {
        let lines = TOMLKeyLines(text: text)
        if let line = lines.malformedHeaderLine {
            throw ProfileError(keyPath: "", line: line, problem: .syntax(
                message: "a table header's name must start with a letter, digit, _, - or a quote ([sticks.left])"))
        }
        if let line = TOMLAssertionGuard.firstUnparseableLine(in: text) {
            throw ProfileError(keyPath: "", line: line, problem: .syntax(
                message: "a value is missing here (a bracket or comma where a value belongs)"))
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ProfileError(keyPath: "", line: error.source.begin.line, problem: .syntax(message: error.description))
        } catch {
            throw ProfileError(keyPath: "", line: nil, problem: .syntax(message: "\(error)"))
        }
        let reader = ProfileReader(lines: lines)
        let profile = try reader.profile(from: root)
        if let error = profile.validationErrors(for: target(profile.virtualPad)).first {
            throw ProfileError(keyPath: error.keyPath, line: lines.line(for: error.keyPath), problem: .invalid(error.problem))
        }
        return profile
    }
}

/// Reads the schema's tables; every error carries its key path and line.
private struct ProfileReader {
    let lines: TOMLKeyLines

    static let topLevelKeys = [
        "map", "thresholds", "sticks", "triggers", "toggle", "turbo", "layers", "gyro", "tap_hold", "tap_hold_ms", "chords",
        "chord_ms", "mouse", "flick", "as",
    ]
    static let stickKeys = ["deadzone", "outer_deadzone", "anti_deadzone", "curve", "invert_x", "invert_y"]
    static let triggerKeys = ["deadzone", "outer_deadzone"]
    static let gyroStickKeys = ["output", "sensitivity_x", "sensitivity_y", "enable_button"]
    static let gyroMouseKeys = [
        "output", "enable_button", "calibrate_button", "counts_per_turn", "sensitivity", "lower_speed", "upper_speed",
        "upper_sensitivity", "tightening", "smoothing", "smoothing_window_ms", "space",
    ]
    static let mouseKeys = ["stick", "speed", "acceleration", "acceleration_ms", "scroll_stick", "scroll_speed"]
    static let flickKeys = ["stick", "counts_per_turn", "flick_time_ms"]
    static let buttonNames = Button.allCases.map(\.rawValue)
    /// A mapping's target may also be nothing.
    static let noTarget = "none"

    func fail(_ path: [String], _ problem: ProfileError.Problem) -> ProfileError {
        let keyPath = path.joined(separator: ".")
        return ProfileError(keyPath: keyPath, line: lines.line(for: keyPath), problem: problem)
    }

    func profile(from root: TOMLTable) throws(ProfileError) -> RemapProfile {
        var profile = RemapProfile()
        try checkKeys(root, [], allowed: Self.topLevelKeys)
        if let value = root["as"] {
            guard let name = value.string else {
                throw fail(["as"], .wrongType(expected: "a virtual pad's name (as = \"dualshock4\")", found: typeName(value)))
            }
            guard let choice = VirtualPadChoice(name: name) else {
                throw fail(["as"], .unknownControl(name: name, allowed: VirtualPadChoice.names))
            }
            profile.virtualPad = choice
        }
        if let map = try table(root, "map", []) {
            profile.map = try mappings(map, ["map"])
        }
        if let thresholds = try table(root, "thresholds", []) {
            for key in thresholds.keys {
                let path = ["thresholds", key]
                let source = try control(named: key, path)
                profile.thresholdFractions[source] = try number(thresholds[key], path)
            }
        }
        if let sticks = try table(root, "sticks", []) {
            try checkKeys(sticks, ["sticks"], allowed: ["swap", "left", "right"])
            profile.swapSticks = try boolean(sticks["swap"], ["sticks", "swap"]) ?? false
            if let left = try table(sticks, "left", ["sticks"]) { profile.leftStick = try stickShaping(left, ["sticks", "left"]) }
            if let right = try table(sticks, "right", ["sticks"]) { profile.rightStick = try stickShaping(right, ["sticks", "right"]) }
        }
        if let triggers = try table(root, "triggers", []) {
            try checkKeys(triggers, ["triggers"], allowed: ["left", "right"])
            if let left = try table(triggers, "left", ["triggers"]) { profile.leftTrigger = try triggerShaping(left, ["triggers", "left"]) }
            if let right = try table(triggers, "right", ["triggers"]) { profile.rightTrigger = try triggerShaping(right, ["triggers", "right"]) }
        }
        if let toggle = try table(root, "toggle", []) {
            for key in toggle.keys {
                let path = ["toggle", key]
                let button = try button(named: key, path)
                if try boolean(toggle[key], path) == true { profile.toggles.insert(button) }
            }
        }
        if let turbo = try table(root, "turbo", []) {
            for key in turbo.keys {
                let path = ["turbo", key]
                let button = try button(named: key, path)
                guard let settings = try table(turbo, key, ["turbo"]) else { continue }
                try checkKeys(settings, path, allowed: ["period_ms"])
                let periodPath = path + ["period_ms"]
                guard let value = settings["period_ms"] else {
                    throw fail(periodPath, .wrongType(expected: "an integer number of milliseconds (period_ms = 80)", found: "nothing"))
                }
                guard let milliseconds = value.int else {
                    throw fail(periodPath, .wrongType(expected: "an integer number of milliseconds", found: typeName(value)))
                }
                let allowed = Turbo.allowedPeriodMilliseconds
                guard milliseconds >= Int(allowed.lowerBound), milliseconds <= Int(allowed.upperBound) else {
                    throw fail(periodPath, .invalid(.outOfRange(
                        value: Double(milliseconds), allowed: "\(allowed.lowerBound)...\(allowed.upperBound) milliseconds")))
                }
                profile.turbo[button] = Turbo(periodMilliseconds: UInt64(milliseconds))
            }
        }
        if let layers = try table(root, "layers", []) {
            for key in layers.keys {
                let path = ["layers", key]
                let hold = try control(named: key, path)
                guard let layer = try table(layers, key, ["layers"]) else { continue }
                try checkKeys(layer, path, allowed: ["map"])
                let map = try table(layer, "map", path).map { table throws(ProfileError) in try mappings(table, path + ["map"]) }
                profile.layers.append(RemapLayer(holdControl: hold, map: map ?? [:]))
            }
        }
        var defaultHoldMicroseconds = TapHold.defaultHoldMicroseconds
        if let value = root["tap_hold_ms"] {
            defaultHoldMicroseconds = try milliseconds(value, ["tap_hold_ms"], allowed: TapHold.allowedHoldMilliseconds) * 1000
        }
        if let tapHold = try table(root, "tap_hold", []) {
            for key in tapHold.keys {
                let path = ["tap_hold", key]
                let button = try button(named: key, path)
                guard let entry = try table(tapHold, key, ["tap_hold"]) else { continue }
                try checkKeys(entry, path, allowed: ["tap", "hold", "tap_hold_ms"])
                var holdMicroseconds = defaultHoldMicroseconds
                if let value = entry["tap_hold_ms"] {
                    holdMicroseconds = try milliseconds(value, path + ["tap_hold_ms"], allowed: TapHold.allowedHoldMilliseconds) * 1000
                }
                profile.tapHold[button] = TapHold(
                    tap: try entry["tap"].map { value throws(ProfileError) in try targets(value, path + ["tap"]) } ?? [],
                    hold: try entry["hold"].map { value throws(ProfileError) in try targets(value, path + ["hold"]) } ?? [],
                    holdMicroseconds: holdMicroseconds)
            }
        }
        if let value = root["chord_ms"] {
            profile.chordWindowMicroseconds = try milliseconds(value, ["chord_ms"], allowed: Chord.allowedWindowMilliseconds) * 1000
        }
        if let chords = try table(root, "chords", []) {
            for key in chords.keys {
                let path = ["chords", key]
                let parts = key.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 2 else {
                    throw fail(path, .wrongType(expected: "two buttons joined by + (\"leftshoulder+rightshoulder\")", found: "\"\(key)\""))
                }
                let first = try button(named: parts[0], path)
                let second = try button(named: parts[1], path)
                guard let value = chords[key] else { continue }
                profile.chords.append(Chord(first, second, targets: try targets(value, path)))
            }
        }
        if let mouse = try table(root, "mouse", []) {
            try checkKeys(mouse, ["mouse"], allowed: Self.mouseKeys)
            if let value = mouse["stick"] {
                var pointer = StickToPointer(stick: try stick(value, ["mouse", "stick"]))
                if let value = mouse["speed"] { pointer.countsPerSecond = try number(value, ["mouse", "speed"]) }
                if let value = mouse["acceleration"] { pointer.acceleration = try number(value, ["mouse", "acceleration"]) }
                if let value = mouse["acceleration_ms"] {
                    pointer.accelerationMicroseconds = try milliseconds(value, ["mouse", "acceleration_ms"], allowed: 0...10_000) * 1000
                }
                profile.pointerStick = pointer
            } else if let key = ["speed", "acceleration", "acceleration_ms"].first(where: { mouse[$0] != nil }) {
                throw fail(["mouse", key], .wrongType(expected: "a stick for it (stick = \"right\")", found: "no stick"))
            }
            if let value = mouse["scroll_stick"] {
                var scroll = StickToScroll(stick: try stick(value, ["mouse", "scroll_stick"]))
                if let value = mouse["scroll_speed"] { scroll.notchesPerSecond = try number(value, ["mouse", "scroll_speed"]) }
                profile.scrollStick = scroll
            } else if mouse["scroll_speed"] != nil {
                throw fail(["mouse", "scroll_speed"], .wrongType(expected: "a stick for it (scroll_stick = \"left\")", found: "no stick"))
            }
        }
        if let gyro = try table(root, "gyro", []), try gyroOutput(gyro) == "mouse" {
            profile.gyroMouse = try gyroMouse(gyro)
        } else if let gyro = try table(root, "gyro", []) {
            try checkKeys(gyro, ["gyro"], allowed: Self.gyroStickKeys)
            var settings = GyroToRightStick()
            if let value = gyro["sensitivity_x"] { settings.xDeflectionPerRadianPerSecond = try number(value, ["gyro", "sensitivity_x"]) }
            if let value = gyro["sensitivity_y"] { settings.yDeflectionPerRadianPerSecond = try number(value, ["gyro", "sensitivity_y"]) }
            if let value = gyro["enable_button"] {
                let path = ["gyro", "enable_button"]
                settings.enableButton = try button(named: try string(value, path), path)
            }
            profile.gyro = settings
        }
        if let flick = try table(root, "flick", []) {
            try checkKeys(flick, ["flick"], allowed: Self.flickKeys)
            guard let stickValue = flick["stick"] else {
                throw fail(["flick", "stick"], .wrongType(expected: "the stick to flick with (stick = \"right\")", found: "nothing"))
            }
            let stick = try stick(stickValue, ["flick", "stick"])
            let countsPerTurn: Double
            if let value = flick["counts_per_turn"] {
                countsPerTurn = try number(value, ["flick", "counts_per_turn"])
            } else if let gyroMouse = profile.gyroMouse {
                countsPerTurn = gyroMouse.settings.countsPerTurn
            } else {
                throw fail(["flick", "counts_per_turn"], .wrongType(
                    expected: "the mouse counts the game turns 360° for (counts_per_turn = 3600), here or in [gyro]",
                    found: "nothing"))
            }
            var settings = FlickStickSettings(countsPerTurn: countsPerTurn)
            if let value = flick["flick_time_ms"] {
                settings.flickMicroseconds = try milliseconds(value, ["flick", "flick_time_ms"], allowed: 0...1000) * 1000
            }
            profile.flickStick = FlickStickBinding(stick: stick, settings: settings)
        }
        return profile
    }

    /// `[gyro] output`: "stick" (the default) or "mouse".
    func gyroOutput(_ gyro: TOMLTable) throws(ProfileError) -> String {
        guard let value = gyro["output"] else { return "stick" }
        let output = try string(value, ["gyro", "output"])
        guard output == "stick" || output == "mouse" else {
            throw fail(["gyro", "output"], .unknownControl(name: output, allowed: ["stick", "mouse"]))
        }
        return output
    }

    func gyroMouse(_ gyro: TOMLTable) throws(ProfileError) -> GyroToMouse {
        let path = ["gyro"]
        try checkKeys(gyro, path, allowed: Self.gyroMouseKeys)
        guard let countsValue = gyro["counts_per_turn"] else {
            throw fail(path + ["counts_per_turn"], .wrongType(
                expected: "the mouse counts the game turns 360° for (counts_per_turn = 3600; turn once in the game to find it)",
                found: "nothing"))
        }
        var settings = GyroMouseSettings(countsPerTurn: try number(countsValue, path + ["counts_per_turn"]))
        if let value = gyro["sensitivity"] { settings.sensitivity = try number(value, path + ["sensitivity"]) }
        let accelerationKeys = ["lower_speed", "upper_speed", "upper_sensitivity"]
        if accelerationKeys.contains(where: { gyro[$0] != nil }) {
            for key in accelerationKeys where gyro[key] == nil {
                throw fail(path + [key], .wrongType(
                    expected: "all three of lower_speed, upper_speed (°/s) and upper_sensitivity for an acceleration", found: "nothing"))
            }
            settings.acceleration = GyroMouseSettings.Acceleration(
                lowerSpeedDegreesPerSecond: try number(gyro["lower_speed"], path + ["lower_speed"]),
                upperSpeedDegreesPerSecond: try number(gyro["upper_speed"], path + ["upper_speed"]),
                upperSensitivity: try number(gyro["upper_sensitivity"], path + ["upper_sensitivity"]))
        }
        if let value = gyro["tightening"] { settings.tighteningDegreesPerSecond = try number(value, path + ["tightening"]) }
        if let value = gyro["smoothing"] { settings.smoothingDegreesPerSecond = try number(value, path + ["smoothing"]) }
        if let value = gyro["smoothing_window_ms"] {
            settings.smoothingWindowMicroseconds = try milliseconds(value, path + ["smoothing_window_ms"], allowed: 1...1000) * 1000
        }
        if let value = gyro["space"] {
            let name = try string(value, path + ["space"])
            guard let space = GyroSpace(rawValue: name) else {
                throw fail(path + ["space"], .unknownControl(name: name, allowed: GyroSpace.allCases.map(\.rawValue)))
            }
            settings.space = space
        }
        var binding = GyroToMouse(settings: settings)
        if let value = gyro["enable_button"] {
            binding.enableButton = try button(named: try string(value, path + ["enable_button"]), path + ["enable_button"])
        }
        if let value = gyro["calibrate_button"] {
            binding.calibrateButton = try button(named: try string(value, path + ["calibrate_button"]), path + ["calibrate_button"])
        }
        return binding
    }

    func stick(_ value: any TOMLValueConvertible, _ path: [String]) throws(ProfileError) -> PadStick {
        let name = try string(value, path)
        guard let stick = PadStick(rawValue: name) else {
            throw fail(path, .unknownControl(name: name, allowed: PadStick.allCases.map(\.rawValue)))
        }
        return stick
    }

    /// A whole number of milliseconds within `allowed`.
    func milliseconds(_ value: any TOMLValueConvertible, _ path: [String], allowed: ClosedRange<UInt64>) throws(ProfileError) -> UInt64 {
        guard let milliseconds = value.int else {
            throw fail(path, .wrongType(expected: "an integer number of milliseconds", found: typeName(value)))
        }
        guard milliseconds >= Int(allowed.lowerBound), milliseconds <= Int(allowed.upperBound) else {
            throw fail(path, .invalid(.outOfRange(
                value: Double(milliseconds), allowed: "\(allowed.lowerBound)...\(allowed.upperBound) milliseconds")))
        }
        return UInt64(milliseconds)
    }

    func mappings(_ table: TOMLTable, _ path: [String]) throws(ProfileError) -> [RemapControl: [RemapControl]] {
        var result: [RemapControl: [RemapControl]] = [:]
        for key in table.keys {
            let keyPath = path + [key]
            let source = try control(named: key, keyPath)
            guard let value = table[key] else { continue }
            result[source] = try targets(value, keyPath)
        }
        return result
    }

    /// A target (a control's name, `key:`, `mouse:` or `scroll:`), a list of them (pressed together) or "none".
    func targets(_ value: any TOMLValueConvertible, _ keyPath: [String]) throws(ProfileError) -> [RemapControl] {
        var names: [String] = []
        if let single = value.string {
            names = [single]
        } else if let array = value.array {
            for element in array {
                guard let name = element.string else {
                    throw fail(keyPath, .wrongType(expected: "a control's name, or a list of them", found: "a list holding \(typeName(element))"))
                }
                names.append(name)
            }
        } else {
            throw fail(keyPath, .wrongType(expected: "a control's name (\"b\"), a list of them ([\"a\", \"b\"]) or \"none\"", found: typeName(value)))
        }
        var targets: [RemapControl] = []
        for name in names where name != Self.noTarget {
            if DesktopTarget.looksLikeDesktopTarget(name) {
                guard let desktop = DesktopTarget(name: name, keyCode: KeyboardKeyNames.code(forName:)) else {
                    throw fail(keyPath, .unknownDesktopTarget(name: name, allowed: KeyboardKeyNames.hint))
                }
                targets.append(.desktop(desktop))
                continue
            }
            guard let target = RemapControl(name: name) else {
                throw fail(keyPath, .unknownControl(
                    name: name, allowed: RemapControl.allNames + ["key:NAME", "mouse:BUTTON", "scroll:DIRECTION", Self.noTarget]))
            }
            targets.append(target)
        }
        return targets
    }

    func stickShaping(_ table: TOMLTable, _ path: [String]) throws(ProfileError) -> StickShaping {
        try checkKeys(table, path, allowed: Self.stickKeys)
        var shaping = StickShaping()
        if let value = table["deadzone"] { shaping.deadzoneFraction = try number(value, path + ["deadzone"]) }
        if let value = table["outer_deadzone"] { shaping.outerDeadzoneFraction = try number(value, path + ["outer_deadzone"]) }
        if let value = table["anti_deadzone"] { shaping.antiDeadzoneFraction = try number(value, path + ["anti_deadzone"]) }
        if let value = table["curve"] { shaping.curve = try curve(value, path + ["curve"]) }
        shaping.invertX = try boolean(table["invert_x"], path + ["invert_x"]) ?? false
        shaping.invertY = try boolean(table["invert_y"], path + ["invert_y"]) ?? false
        return shaping
    }

    func triggerShaping(_ table: TOMLTable, _ path: [String]) throws(ProfileError) -> TriggerShaping {
        try checkKeys(table, path, allowed: Self.triggerKeys)
        var shaping = TriggerShaping()
        if let value = table["deadzone"] { shaping.deadzoneFraction = try number(value, path + ["deadzone"]) }
        if let value = table["outer_deadzone"] { shaping.outerDeadzoneFraction = try number(value, path + ["outer_deadzone"]) }
        return shaping
    }

    func curve(_ value: any TOMLValueConvertible, _ path: [String]) throws(ProfileError) -> ResponseCurve {
        let expected = "an exponent (1.5) or a list of [x, y] points ([[0, 0], [0.5, 0.3], [1, 1]])"
        if let exponent = value.double ?? value.int.map(Double.init) { return .exponent(exponent) }
        guard let array = value.array else { throw fail(path, .wrongType(expected: expected, found: typeName(value))) }
        var points: [CurvePoint] = []
        for element in array {
            guard let pair = element.array, pair.count == 2,
                let x = pair[0].double ?? pair[0].int.map(Double.init), let y = pair[1].double ?? pair[1].int.map(Double.init)
            else { throw fail(path, .wrongType(expected: expected, found: "a list holding \(element.debugDescription)")) }
            points.append(CurvePoint(x: x, y: y))
        }
        return .points(points)
    }

    // MARK: Values

    func checkKeys(_ table: TOMLTable, _ path: [String], allowed: [String]) throws(ProfileError) {
        for key in table.keys where !allowed.contains(key) {
            throw fail(path + [key], .unknownKey(key: key, allowed: allowed))
        }
    }

    /// The table at `key`, nil when absent; anything else there is an error.
    func table(_ parent: TOMLTable, _ key: String, _ path: [String]) throws(ProfileError) -> TOMLTable? {
        guard let value = parent[key] else { return nil }
        guard let table = value.table else { throw fail(path + [key], .wrongType(expected: "a table", found: typeName(value))) }
        return table
    }

    func control(named name: String, _ path: [String]) throws(ProfileError) -> RemapControl {
        guard let control = RemapControl(name: name) else {
            throw fail(path, .unknownControl(name: name, allowed: RemapControl.allNames))
        }
        return control
    }

    func button(named name: String, _ path: [String]) throws(ProfileError) -> Button {
        guard let button = Button(rawValue: name) else {
            throw fail(path, .unknownControl(name: name, allowed: Self.buttonNames))
        }
        return button
    }

    func number(_ value: (any TOMLValueConvertible)?, _ path: [String]) throws(ProfileError) -> Double {
        guard let value else { throw fail(path, .wrongType(expected: "a number", found: "nothing")) }
        if let double = value.double { return double }
        if let int = value.int { return Double(int) }
        throw fail(path, .wrongType(expected: "a number", found: typeName(value)))
    }

    func boolean(_ value: (any TOMLValueConvertible)?, _ path: [String]) throws(ProfileError) -> Bool? {
        guard let value else { return nil }
        guard let bool = value.bool else { throw fail(path, .wrongType(expected: "true or false", found: typeName(value))) }
        return bool
    }

    func string(_ value: any TOMLValueConvertible, _ path: [String]) throws(ProfileError) -> String {
        guard let string = value.string else { throw fail(path, .wrongType(expected: "a string", found: typeName(value))) }
        return string
    }

    func typeName(_ value: any TOMLValueConvertible) -> String {
        switch value.type {
        case .table: "a table"
        case .array: "a list"
        case .string: "a string (\(value.debugDescription))"
        case .int: "an integer (\(value.debugDescription))"
        case .double: "a number (\(value.debugDescription))"
        case .bool: "a boolean (\(value.debugDescription))"
        case .date, .time, .dateTime: "a date or time"
        }
    }
}
