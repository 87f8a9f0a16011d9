/// The full state of one pad at one instant. A value: cheap to copy, no heap storage.
public struct PadSnapshot: Sendable, Hashable {
    public var buttons: ButtonSet
    public var leftX: Int16
    public var leftY: Int16
    public var rightX: Int16
    public var rightY: Int16
    /// 0...32767.
    public var leftTrigger: Int16
    /// 0...32767.
    public var rightTrigger: Int16
    public var touches: TouchContacts
    public var motion: MotionSample
    public var battery: BatteryState

    @inlinable public init(
        buttons: ButtonSet = ButtonSet(),
        leftX: Int16 = 0, leftY: Int16 = 0, rightX: Int16 = 0, rightY: Int16 = 0,
        leftTrigger: Int16 = 0, rightTrigger: Int16 = 0,
        touches: TouchContacts = TouchContacts(),
        motion: MotionSample = .still,
        battery: BatteryState = .unknown
    ) {
        self.buttons = buttons
        self.leftX = leftX
        self.leftY = leftY
        self.rightX = rightX
        self.rightY = rightY
        self.leftTrigger = leftTrigger
        self.rightTrigger = rightTrigger
        self.touches = touches
        self.motion = motion
        self.battery = battery
    }

    /// Nothing pressed, sticks centred, triggers released, no touch, still.
    public static let neutral = PadSnapshot()

    @inlinable public subscript(axis: Axis) -> Int16 {
        get {
            switch axis {
            case .leftx: leftX
            case .lefty: leftY
            case .rightx: rightX
            case .righty: rightY
            case .lefttrigger: leftTrigger
            case .righttrigger: rightTrigger
            }
        }
        set {
            switch axis {
            case .leftx: leftX = newValue
            case .lefty: leftY = newValue
            case .rightx: rightX = newValue
            case .righty: rightY = newValue
            case .lefttrigger: leftTrigger = max(0, newValue)
            case .righttrigger: rightTrigger = max(0, newValue)
            }
        }
    }

    @inlinable public subscript(button: Button) -> Bool {
        get { buttons.contains(button) }
        set { buttons.set(button, pressed: newValue) }
    }

    /// This snapshot with every input released (buttons, sticks, triggers, touches), keeping the battery.
    /// What a virtual pad shows when its source goes away: no stuck buttons.
    public var released: PadSnapshot {
        var copy = PadSnapshot.neutral
        copy.battery = battery
        copy.motion.timestampMicroseconds = motion.timestampMicroseconds
        copy.motion.accelMetersPerSecondSquared = motion.accelMetersPerSecondSquared
        return copy
    }
}
