/// A remap, as a value: what `RemapPipeline` runs. Built by `PadProfiles` from a TOML file, or in code.
/// `RemapProfile()` is the identity: every control passes through unchanged.
///
/// The pipeline's stages, in order (each a type of its own, documented where it lives; `RemapStages` lists them):
/// 1. shaping of the physical sticks and triggers (`leftStick`, `rightStick`, `leftTrigger`, `rightTrigger`),
///    then `swapSticks` (`StickAndTriggerShaping`);
/// 2. `toggles`, then `turbo`, on the physical buttons (`ButtonToggles`, `ButtonTurbo`);
/// 3. one-sided sources latched beyond their `thresholdFractions` (`PressThresholds`);
/// 4. the active layer's mappings over the base `map` (a layer is active while its hold control is held;
///    `ActiveLayer`, `TargetRouting`), with `tapHold` and `chords` (buttons whose output depends on timing;
///    `TimedPresses`);
/// 5. `gyro`, added to the right stick (`GyroOnRightStick`);
/// 6. the virtual keyboard and mouse: the `key:`, `mouse:` and `scroll:` targets the mappings pressed, and the
///    pointer and wheel moved by `pointerStick`, `scrollStick`, `gyroMouse` and `flickStick` (`DesktopMotion`).
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
    /// Buttons that drive one thing when tapped and another when held (never routed through `map`).
    public var tapHold: [Button: TapHold]
    /// Pairs of buttons that, pressed together within `chordWindowMicroseconds`, drive their chord's targets instead
    /// of their own.
    public var chords: [Chord]
    public var chordWindowMicroseconds: UInt64
    /// A stick moving the mouse pointer (`[mouse] stick`).
    public var pointerStick: StickToPointer?
    /// A stick turning the mouse wheel (`[mouse] scroll_stick`).
    public var scrollStick: StickToScroll?
    /// The gyro moving the mouse pointer (`[gyro] output = "mouse"`; `gyro` is then nil).
    public var gyroMouse: GyroToMouse?
    /// A stick turning the game through the mouse (`[flick]`).
    public var flickStick: FlickStickBinding?
    /// The virtual pad the profile asks for (`as = "dualshock4"`, or `as = "none"`: the keyboard and mouse only);
    /// nil: the pad's own kind. A command's `--as` overrides it.
    public var virtualPad: VirtualPadChoice?

    public static let defaultThresholdFraction = 0.5
    /// JoyShockMapper's simultaneous-press window.
    public static let defaultChordWindowMicroseconds: UInt64 = 50_000

    public init(
        map: [RemapControl: [RemapControl]] = [:], layers: [RemapLayer] = [],
        thresholdFractions: [RemapControl: Double] = [:],
        leftStick: StickShaping = StickShaping(), rightStick: StickShaping = StickShaping(), swapSticks: Bool = false,
        leftTrigger: TriggerShaping = TriggerShaping(), rightTrigger: TriggerShaping = TriggerShaping(),
        toggles: ButtonSet = ButtonSet(), turbo: [Button: Turbo] = [:], gyro: GyroToRightStick? = nil,
        tapHold: [Button: TapHold] = [:], chords: [Chord] = [],
        chordWindowMicroseconds: UInt64 = RemapProfile.defaultChordWindowMicroseconds,
        pointerStick: StickToPointer? = nil, scrollStick: StickToScroll? = nil, gyroMouse: GyroToMouse? = nil,
        flickStick: FlickStickBinding? = nil, virtualPad: VirtualPadChoice? = nil
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
        self.tapHold = tapHold
        self.chords = chords
        self.chordWindowMicroseconds = chordWindowMicroseconds
        self.pointerStick = pointerStick
        self.scrollStick = scrollStick
        self.gyroMouse = gyroMouse
        self.flickStick = flickStick
        self.virtualPad = virtualPad
    }

    /// Every target the profile names anywhere (mappings, layers, tap/hold, chords).
    public var allTargets: [RemapControl] {
        var targets = map.values.flatMap { $0 } + layers.flatMap { $0.map.values.flatMap { $0 } }
        for entry in tapHold.values { targets += entry.tap + entry.hold }
        for chord in chords { targets += chord.targets }
        return targets
    }

    /// Whether it needs a virtual keyboard: a `key:` target somewhere.
    public var needsVirtualKeyboard: Bool { allTargets.contains { $0.desktopTarget?.needsKeyboard == true } }

    /// Whether it needs a virtual mouse: a `mouse:` or `scroll:` target, or a stick, the gyro or flick stick on it.
    public var needsVirtualMouse: Bool {
        pointerStick != nil || scrollStick != nil || gyroMouse != nil || flickStick != nil
            || allTargets.contains { $0.desktopTarget?.needsMouse == true }
    }

    /// The sticks the mouse takes (pointer, wheel, flick): they no longer drive the virtual pad's sticks.
    public var sticksOnTheMouse: [PadStick] {
        [pointerStick?.stick, scrollStick?.stick, flickStick?.stick].compactMap { $0 }
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

/// One of the pad's two sticks, as profiles name them.
public enum PadStick: String, Sendable, Hashable, CaseIterable {
    case left, right

    public var xAxis: Axis { self == .left ? .leftx : .rightx }
    public var yAxis: Axis { self == .left ? .lefty : .righty }
}

/// A button that drives `tap` when released within `holdMicroseconds` of its press (pressed for
/// `RemapProfile.tapPressMicroseconds` from the release: a press and a release in two reports, so games see it), and
/// `hold` from `holdMicroseconds` after its press until it is released.
public struct TapHold: Sendable, Hashable {
    public var tap: [RemapControl]
    public var hold: [RemapControl]
    public var holdMicroseconds: UInt64

    public init(tap: [RemapControl], hold: [RemapControl], holdMicroseconds: UInt64 = TapHold.defaultHoldMicroseconds) {
        self.tap = tap
        self.hold = hold
        self.holdMicroseconds = holdMicroseconds
    }

    public static let defaultHoldMicroseconds: UInt64 = 200_000
    /// How long a tap's targets stay pressed.
    public static let tapPressMicroseconds: UInt64 = 50_000
    public static let allowedHoldMilliseconds: ClosedRange<UInt64> = 50...5_000
}

/// Two buttons pressed within the chord window of each other drive `targets` (while both are held) instead of their
/// own mappings; each goes back to its own mapping once released. A button pressed alone waits the window out
/// before it drives its own mapping; released within it, its mapping is tapped.
public struct Chord: Sendable, Hashable {
    public var first: Button
    public var second: Button
    public var targets: [RemapControl]

    public init(_ first: Button, _ second: Button, targets: [RemapControl]) {
        self.first = first
        self.second = second
        self.targets = targets
    }

    /// The profile's spelling: `leftshoulder+rightshoulder`.
    public var name: String { first.rawValue + "+" + second.rawValue }

    public static let allowedWindowMilliseconds: ClosedRange<UInt64> = 10...500
}

/// A stick moving the mouse pointer: at full deflection (after the stick's own shaping), `countsPerSecond`; held
/// deflected for `accelerationMicroseconds`, that times `acceleration` (ramping up linearly meanwhile).
public struct StickToPointer: Sendable, Hashable {
    public var stick: PadStick
    public var countsPerSecond: Double
    public var acceleration: Double
    public var accelerationMicroseconds: UInt64

    public init(stick: PadStick, countsPerSecond: Double = 1000, acceleration: Double = 1, accelerationMicroseconds: UInt64 = 500_000) {
        self.stick = stick
        self.countsPerSecond = countsPerSecond
        self.acceleration = acceleration
        self.accelerationMicroseconds = accelerationMicroseconds
    }

    public static let allowedCountsPerSecond: ClosedRange<Double> = 1...100_000
    public static let allowedAcceleration: ClosedRange<Double> = 1...10
}

/// A stick turning the mouse wheel: `notchesPerSecond` at full deflection, in high-resolution steps (up scrolls up,
/// right scrolls right).
public struct StickToScroll: Sendable, Hashable {
    public var stick: PadStick
    public var notchesPerSecond: Double

    public init(stick: PadStick, notchesPerSecond: Double = 10) {
        self.stick = stick
        self.notchesPerSecond = notchesPerSecond
    }

    public static let allowedNotchesPerSecond: ClosedRange<Double> = 0.1...1000
}

/// The gyro on the mouse: `settings` (real-world calibration), aiming only while `enableButton` is held (if set),
/// the resting bias measured while `calibrateButton` is held (if set) and whenever the pad lies still.
public struct GyroToMouse: Sendable, Hashable {
    public var settings: GyroMouseSettings
    public var enableButton: Button?
    public var calibrateButton: Button?

    public init(settings: GyroMouseSettings, enableButton: Button? = nil, calibrateButton: Button? = nil) {
        self.settings = settings
        self.enableButton = enableButton
        self.calibrateButton = calibrateButton
    }
}

/// Flick stick on `stick` (`FlickStick`).
public struct FlickStickBinding: Sendable, Hashable {
    public var stick: PadStick
    public var settings: FlickStickSettings

    public init(stick: PadStick, settings: FlickStickSettings) {
        self.stick = stick
        self.settings = settings
    }
}
