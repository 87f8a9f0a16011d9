/// Why a trigger effect could not be built: names the field, the value and the allowed range or form.
public struct TriggerEffectError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    static func outOfRange(_ effect: String, _ field: String, _ value: Int, _ range: ClosedRange<Int>) -> Self {
        TriggerEffectError("\(effect) \(field) \(value) is out of range \(range.lowerBound)...\(range.upperBound)")
    }
}
