/// A profile that cannot run, or cannot run on the chosen virtual pad.
///
/// `keyPath` names the setting as a profile file spells it (`layers.leftshoulder.map.a`, `sticks.left.deadzone`),
/// so a file reader can point at the line.
public struct RemapValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var keyPath: String
    public var problem: Problem

    public init(keyPath: String, problem: Problem) {
        self.keyPath = keyPath
        self.problem = problem
    }

    public enum Problem: Sendable, Hashable {
        /// A target the virtual pad type does not have; `allowed` lists what it has.
        case targetNotOnVirtualPad(target: String, padType: String, allowed: [String])
        /// A number outside what the setting takes; `allowed` says the range in words ("0 <= x < 1").
        case outOfRange(value: Double, allowed: String)
        /// A source and target of kinds that do not map (`leftx` onto a button: say `leftx+` or `leftx-`).
        case incompatibleKinds(source: String, target: String, remedy: String)
        /// A curve's points that are not increasing in x from 0 to 1, or not non-decreasing in y within 0...1.
        case curvePointsInvalid(reason: String)
        /// Two settings that contradict each other (a half and its whole axis both mapped; a layer's hold
        /// control also mapped; a threshold for a source that is not one-sided).
        case conflict(reason: String)
    }

    /// The allowed values, where the problem has a list of them.
    public var allowed: [String] {
        if case let .targetNotOnVirtualPad(_, _, allowed) = problem { return allowed }
        return []
    }

    /// "<key path>: <what is wrong>; <what is allowed>".
    public var description: String {
        switch problem {
        case let .targetNotOnVirtualPad(target, padType, _) where padType == VirtualPadCapabilities.nothing.name:
            "\(keyPath): remap --as none makes no virtual pad, so nothing shows \(target); map it to key:, mouse: or scroll: targets, or make a pad with --as xbox360 or --as dualsense"
        case let .targetNotOnVirtualPad(target, padType, allowed):
            "\(keyPath): the \(padType) virtual pad has no \(target); it has: \(allowed.joined(separator: ", "))"
        case let .outOfRange(value, allowed):
            "\(keyPath): \(value) is out of range; allowed: \(allowed)"
        case let .incompatibleKinds(source, target, remedy):
            "\(keyPath): \(source) cannot drive \(target); \(remedy)"
        case let .curvePointsInvalid(reason):
            "\(keyPath): \(reason)"
        case let .conflict(reason):
            "\(keyPath): \(reason)"
        }
    }
}
