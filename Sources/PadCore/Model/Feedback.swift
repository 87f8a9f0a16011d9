/// Rumble: the two motors in the grips every rumbling pad has, and the two in the triggers of Xbox One and Series
/// pads ("impulse triggers"; 0 for every other pad). Magnitudes are fractions of full power, 0...1 (clamped on
/// construction). A pad without trigger motors plays the grip motors and leaves the trigger ones (docs/remapping.md,
/// "Converting between kinds").
public struct Rumble: Sendable, Hashable {
    /// The low-frequency (left, heavy) motor.
    public var strong: Double
    /// The high-frequency (right, light) motor.
    public var weak: Double
    /// The left trigger's motor.
    public var leftTrigger: Double
    /// The right trigger's motor.
    public var rightTrigger: Double

    @inlinable public init(strong: Double, weak: Double, leftTrigger: Double = 0, rightTrigger: Double = 0) {
        self.strong = Rumble.clamp(strong)
        self.weak = Rumble.clamp(weak)
        self.leftTrigger = Rumble.clamp(leftTrigger)
        self.rightTrigger = Rumble.clamp(rightTrigger)
    }

    public static let off = Rumble(strong: 0, weak: 0)
    public var isOff: Bool { strong == 0 && weak == 0 && leftTrigger == 0 && rightTrigger == 0 }
    /// Whether a trigger motor runs.
    public var hasTriggerRumble: Bool { leftTrigger != 0 || rightTrigger != 0 }

    @inlinable static func clamp(_ value: Double) -> Double {
        value.isNaN ? 0 : min(max(value, 0), 1)
    }

    /// Magnitude as an 8-bit motor value (DualSense/DualShock 4 output reports), rounded to nearest.
    @inlinable public static func byte(_ fraction: Double) -> UInt8 { UInt8((clamp(fraction) * 255).rounded()) }
    /// Magnitude as a 16-bit force-feedback value (evdev `ff_rumble_effect`), rounded to nearest.
    @inlinable public static func word(_ fraction: Double) -> UInt16 { UInt16((clamp(fraction) * 65535).rounded()) }
}

/// An RGB lightbar colour.
public struct LightbarColor: Sendable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    @inlinable public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }
}

public enum TriggerSide: String, Sendable, Hashable, CaseIterable, Codable {
    case left, right
}

/// What a game asks of a pad's outputs. Every field is optional: `nil` means "leave as it is", so one
/// `Feedback` is a partial update, exactly like a DualSense output report with its valid-flag bits.
public struct Feedback: Sendable, Hashable {
    public var rumble: Rumble?
    public var lightbar: LightbarColor?
    /// The five player LEDs, bit 0...4 (bit k is LED k+1 from the left).
    public var playerLeds: UInt8?
    /// The microphone-mute LED.
    public var micLed: Bool?
    public var leftTrigger: TriggerEffect?
    public var rightTrigger: TriggerEffect?

    @inlinable public init(
        rumble: Rumble? = nil,
        lightbar: LightbarColor? = nil,
        playerLeds: UInt8? = nil,
        micLed: Bool? = nil,
        leftTrigger: TriggerEffect? = nil,
        rightTrigger: TriggerEffect? = nil
    ) {
        self.rumble = rumble
        self.lightbar = lightbar
        self.playerLeds = playerLeds.map { $0 & 0x1F }
        self.micLed = micLed
        self.leftTrigger = leftTrigger
        self.rightTrigger = rightTrigger
    }

    public var isEmpty: Bool {
        rumble == nil && lightbar == nil && playerLeds == nil && micLed == nil && leftTrigger == nil
            && rightTrigger == nil
    }

    public subscript(trigger side: TriggerSide) -> TriggerEffect? {
        get { side == .left ? leftTrigger : rightTrigger }
        set { if side == .left { leftTrigger = newValue } else { rightTrigger = newValue } }
    }

    /// Overlays `newer`: each field `newer` sets wins, the others stay.
    public mutating func merge(_ newer: Feedback) {
        if let value = newer.rumble { rumble = value }
        if let value = newer.lightbar { lightbar = value }
        if let value = newer.playerLeds { playerLeds = value }
        if let value = newer.micLed { micLed = value }
        if let value = newer.leftTrigger { leftTrigger = value }
        if let value = newer.rightTrigger { rightTrigger = value }
    }

    public func merging(_ newer: Feedback) -> Feedback {
        var copy = self
        copy.merge(newer)
        return copy
    }
}

/// One field of `Feedback`: the unit in which feedback is printed, sent and applied.
public enum FeedbackEvent: Sendable, Hashable {
    case rumble(Rumble)
    case lightbar(LightbarColor)
    case playerLeds(mask: UInt8)
    case micLed(on: Bool)
    case trigger(TriggerSide, TriggerEffect)
}

extension Feedback {
    /// The fields this update sets, one event each, in a fixed order.
    public var events: [FeedbackEvent] {
        var result: [FeedbackEvent] = []
        if let rumble { result.append(.rumble(rumble)) }
        if let lightbar { result.append(.lightbar(lightbar)) }
        if let playerLeds { result.append(.playerLeds(mask: playerLeds)) }
        if let micLed { result.append(.micLed(on: micLed)) }
        if let leftTrigger { result.append(.trigger(.left, leftTrigger)) }
        if let rightTrigger { result.append(.trigger(.right, rightTrigger)) }
        return result
    }

    public init(_ event: FeedbackEvent) {
        self.init()
        apply(event)
    }

    public mutating func apply(_ event: FeedbackEvent) {
        switch event {
        case let .rumble(value): rumble = value
        case let .lightbar(value): lightbar = value
        case let .playerLeds(mask): playerLeds = mask & 0x1F
        case let .micLed(on): micLed = on
        case let .trigger(side, effect): self[trigger: side] = effect
        }
    }
}
