/// The outputs a pad has: which fields of `Feedback` it can show.
public struct FeedbackParts: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let rumble = FeedbackParts(rawValue: 1 << 0)
    public static let lightbar = FeedbackParts(rawValue: 1 << 1)
    public static let playerLeds = FeedbackParts(rawValue: 1 << 2)
    public static let micLed = FeedbackParts(rawValue: 1 << 3)
    public static let leftTrigger = FeedbackParts(rawValue: 1 << 4)
    public static let rightTrigger = FeedbackParts(rawValue: 1 << 5)

    public static let all: FeedbackParts = [.rumble, .lightbar, .playerLeds, .micLed, .leftTrigger, .rightTrigger]
    /// Two motors, lightbar, five player LEDs, mic-mute LED, two adaptive triggers.
    public static let dualSense: FeedbackParts = .all
    /// Two motors and the lightbar.
    public static let dualShock4: FeedbackParts = [.rumble, .lightbar]
    /// Pads seen only through evdev force feedback (Xbox and generic pads).
    public static let rumbleOnly: FeedbackParts = .rumble

    /// The parts a `Feedback` sets (its non-nil fields).
    public init(of feedback: Feedback) {
        var parts: FeedbackParts = []
        if feedback.rumble != nil { parts.insert(.rumble) }
        if feedback.lightbar != nil { parts.insert(.lightbar) }
        if feedback.playerLeds != nil { parts.insert(.playerLeds) }
        if feedback.micLed != nil { parts.insert(.micLed) }
        if feedback.leftTrigger != nil { parts.insert(.leftTrigger) }
        if feedback.rightTrigger != nil { parts.insert(.rightTrigger) }
        self = parts
    }
}

extension Feedback {
    /// This update with every field outside `parts` cleared to nil ("unchanged").
    func restricted(to parts: FeedbackParts) -> Feedback {
        var result = self
        if !parts.contains(.rumble) { result.rumble = nil }
        if !parts.contains(.lightbar) { result.lightbar = nil }
        if !parts.contains(.playerLeds) { result.playerLeds = nil }
        if !parts.contains(.micLed) { result.micLed = nil }
        if !parts.contains(.leftTrigger) { result.leftTrigger = nil }
        if !parts.contains(.rightTrigger) { result.rightTrigger = nil }
        return result
    }

    /// The fields of `self` whose value differs from the same field of `current` (nil in `current` counts as
    /// different). Rumble compares its Doubles exactly (evdev pads take 16-bit magnitudes, so two values that share
    /// an 8-bit motor byte may still differ); trigger effects compare their encoded blocks.
    func changes(from current: Feedback) -> Feedback {
        var result = Feedback()
        if let value = rumble, value != current.rumble { result.rumble = value }
        if let value = lightbar, value != current.lightbar { result.lightbar = value }
        if let value = playerLeds, value != current.playerLeds { result.playerLeds = value }
        if let value = micLed, value != current.micLed { result.micLed = value }
        if let value = leftTrigger, value != current.leftTrigger { result.leftTrigger = value }
        if let value = rightTrigger, value != current.rightTrigger { result.rightTrigger = value }
        return result
    }
}
