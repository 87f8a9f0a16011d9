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
        if let error = profile.validationErrors(for: target).first {
            throw ProfileError(keyPath: error.keyPath, line: lines.line(for: error.keyPath), problem: .invalid(error.problem))
        }
        return profile
    }
}

/// Reads the schema's tables; every error carries its key path and line.
private struct ProfileReader {
    let lines: TOMLKeyLines

    static let topLevelKeys = ["map", "thresholds", "sticks", "triggers", "toggle", "turbo", "layers", "gyro"]
    static let stickKeys = ["deadzone", "outer_deadzone", "anti_deadzone", "curve", "invert_x", "invert_y"]
    static let triggerKeys = ["deadzone", "outer_deadzone"]
    static let gyroKeys = ["sensitivity_x", "sensitivity_y", "enable_button"]
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
        if let gyro = try table(root, "gyro", []) {
            try checkKeys(gyro, ["gyro"], allowed: Self.gyroKeys)
            var settings = GyroToRightStick()
            if let value = gyro["sensitivity_x"] { settings.xDeflectionPerRadianPerSecond = try number(value, ["gyro", "sensitivity_x"]) }
            if let value = gyro["sensitivity_y"] { settings.yDeflectionPerRadianPerSecond = try number(value, ["gyro", "sensitivity_y"]) }
            if let value = gyro["enable_button"] {
                let path = ["gyro", "enable_button"]
                settings.enableButton = try button(named: try string(value, path), path)
            }
            profile.gyro = settings
        }
        return profile
    }

    func mappings(_ table: TOMLTable, _ path: [String]) throws(ProfileError) -> [RemapControl: [RemapControl]] {
        var result: [RemapControl: [RemapControl]] = [:]
        for key in table.keys {
            let keyPath = path + [key]
            let source = try control(named: key, keyPath)
            guard let value = table[key] else { continue }
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
                guard let target = RemapControl(name: name) else {
                    throw fail(keyPath, .unknownControl(name: name, allowed: RemapControl.allNames + [Self.noTarget]))
                }
                targets.append(target)
            }
            result[source] = targets
        }
        return result
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
