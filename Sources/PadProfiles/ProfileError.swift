public import PadCore

/// Why a remap profile file was refused: which setting (`keyPath`, as the file spells it:
/// `layers.lefttrigger.map.a`), on which line, what is wrong, and what is allowed there.
public struct ProfileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The setting's dotted path; empty for a TOML syntax error.
    public var keyPath: String
    /// 1-based line in the file, where it can be told.
    public var line: Int?
    public var problem: Problem

    public init(keyPath: String, line: Int?, problem: Problem) {
        self.keyPath = keyPath
        self.line = line
        self.problem = problem
    }

    public enum Problem: Sendable, Hashable {
        /// Not TOML at all (TOMLKit's message; the line is TOMLKit's).
        case syntax(message: String)
        /// A key the schema does not have (typos must not pass silently).
        case unknownKey(key: String, allowed: [String])
        /// A name that is not a button, axis or stick half (or not one the setting takes).
        case unknownControl(name: String, allowed: [String])
        /// A `key:`, `mouse:` or `scroll:` target that names no key, mouse button or wheel direction.
        case unknownDesktopTarget(name: String, allowed: String)
        /// A value of the wrong TOML type.
        case wrongType(expected: String, found: String)
        /// Valid TOML in the schema, but a profile that cannot run (a range, a curve, a target the virtual pad lacks).
        case invalid(RemapValidationError.Problem)
    }

    /// What is allowed at `keyPath`, where the problem has a list.
    public var allowed: [String] {
        switch problem {
        case let .unknownKey(_, allowed), let .unknownControl(_, allowed): allowed
        case let .invalid(problem): RemapValidationError(keyPath: keyPath, problem: problem).allowed
        case .syntax, .wrongType, .unknownDesktopTarget: []
        }
    }

    /// "line 7: layers.lefttrigger.map.a: <what is wrong>; <what is allowed>".
    public var description: String {
        let place = (line.map { "line \($0): " } ?? "") + (keyPath.isEmpty ? "" : "\(keyPath): ")
        switch problem {
        case let .syntax(message):
            return place + message
        case let .unknownKey(key, allowed):
            return place + "unknown key \"\(key)\"; allowed here: \(allowed.joined(separator: ", "))"
        case let .unknownControl(name, allowed):
            return place + "\"\(name)\" is not one of: \(allowed.joined(separator: ", "))"
        case let .unknownDesktopTarget(name, allowed):
            return place + "\"\(name)\" is not a key, mouse button or wheel direction; \(allowed)"
        case let .wrongType(expected, found):
            return place + "expected \(expected), found \(found)"
        case let .invalid(problem):
            // RemapValidationError's text starts with the key path; keep the line in front of it.
            return (line.map { "line \($0): " } ?? "") + RemapValidationError(keyPath: keyPath, problem: problem).description
        }
    }
}
