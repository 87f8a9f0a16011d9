/// A remap, as a value: what `RemapPipeline` runs. Built by `PadProfiles` from a TOML file, or in code.
/// `RemapProfile()` is the identity: every control passes through unchanged.
///
/// The pipeline's stages, in order (each documented where it lives):
/// 1. shaping of the physical sticks and triggers (`leftStick`, `rightStick`, `leftTrigger`, `rightTrigger`),
///    then `swapSticks`;
/// 2. `toggles`, then `turbo`, on the physical buttons;
/// 3. the active layer's mappings over the base `map` (a layer is active while its hold control is held);
/// 4. `gyro`, added to the right stick.
public struct RemapProfile: Sendable, Hashable {
    /// Source control -> the controls it drives. A source not listed drives itself; an empty list disables it.
    public var map: [RemapControl: [RemapControl]]
    /// Layers in the file's order. While a layer's hold control is held its mappings replace the base ones for
    /// the sources it lists (the others keep the base mapping).
    public var layers: [RemapLayer]
    /// Press thresholds of one-sided sources that drive buttons, as a fraction of full travel, in 0 < t <= 1.
    /// Unlisted: `RemapProfile.defaultThresholdFraction`.
    public var thresholdFractions: [RemapControl: Double]
    public var leftStick: StickShaping
    public var rightStick: StickShaping
    /// The physical left stick drives the right one and the other way round (after each is shaped).
    public var swapSticks: Bool
    public var leftTrigger: TriggerShaping
    public var rightTrigger: TriggerShaping
    /// Physical buttons that latch: a press turns them on, the next press off.
    public var toggles: ButtonSet
    /// Physical buttons that repeat while held.
    public var turbo: [Button: Turbo]
    public var gyro: GyroToRightStick?

    public static let defaultThresholdFraction = 0.5

    public init(
        map: [RemapControl: [RemapControl]] = [:], layers: [RemapLayer] = [],
        thresholdFractions: [RemapControl: Double] = [:],
        leftStick: StickShaping = StickShaping(), rightStick: StickShaping = StickShaping(), swapSticks: Bool = false,
        leftTrigger: TriggerShaping = TriggerShaping(), rightTrigger: TriggerShaping = TriggerShaping(),
        toggles: ButtonSet = ButtonSet(), turbo: [Button: Turbo] = [:], gyro: GyroToRightStick? = nil
    ) {
        self.map = map
        self.layers = layers
        self.thresholdFractions = thresholdFractions
        self.leftStick = leftStick
        self.rightStick = rightStick
        self.swapSticks = swapSticks
        self.leftTrigger = leftTrigger
        self.rightTrigger = rightTrigger
        self.toggles = toggles
        self.turbo = turbo
        self.gyro = gyro
    }

    /// Passes everything through unchanged.
    public static let identity = RemapProfile()
}

/// A set of mappings that applies while `holdControl` is held. The hold control itself is never passed on
/// (in any layer); it is held when pressed (a button) or beyond its threshold (a trigger or stick half).
public struct RemapLayer: Sendable, Hashable {
    public var holdControl: RemapControl
    public var map: [RemapControl: [RemapControl]]

    public init(holdControl: RemapControl, map: [RemapControl: [RemapControl]]) {
        self.holdControl = holdControl
        self.map = map
    }
}

/// A button that repeats while held: pressed for the first half of each period, released for the second,
/// the first period starting when the button is pressed.
public struct Turbo: Sendable, Hashable {
    public var periodMicroseconds: UInt64

    public init(periodMicroseconds: UInt64) { self.periodMicroseconds = periodMicroseconds }
    public init(periodMilliseconds: UInt64) { periodMicroseconds = periodMilliseconds &* 1000 }

    /// Allowed periods: 10 ms (50 presses a second) to 10 s.
    public static let allowedPeriodMilliseconds: ClosedRange<UInt64> = 10...10_000
}

/// The right stick driven by the pad's gyroscope, added to whatever the mappings put there.
///
/// Stick deflection (as a fraction of full, clamped) = -yaw × `xDeflectionPerRadianPerSecond` on X and
/// -pitch × `yDeflectionPerRadianPerSecond` on Y, with yaw the gyro's y and pitch its x
/// (`MotionSample.gyroRadiansPerSecond`). The minus signs make a positive sensitivity natural: turning the pad
/// left (positive yaw) looks left, tilting its front up (positive pitch) looks up (up is negative Y).
/// A negative sensitivity inverts that axis.
public struct GyroToRightStick: Sendable, Hashable {
    public var xDeflectionPerRadianPerSecond: Double
    public var yDeflectionPerRadianPerSecond: Double
    /// Gyro aiming only while this button is held (after toggles: a toggled enable button switches it on and off).
    /// The button still drives its own mapping; map it to nothing to keep it for the gyro alone.
    public var enableButton: Button?

    public init(xDeflectionPerRadianPerSecond: Double = 1, yDeflectionPerRadianPerSecond: Double = 1, enableButton: Button? = nil) {
        self.xDeflectionPerRadianPerSecond = xDeflectionPerRadianPerSecond
        self.yDeflectionPerRadianPerSecond = yDeflectionPerRadianPerSecond
        self.enableButton = enableButton
    }

    /// Allowed sensitivities (either sign): up to 100 full deflections per rad/s.
    public static let allowedSensitivity: ClosedRange<Double> = -100...100
}
