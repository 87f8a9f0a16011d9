/// A `RemapProfile` compiled for one virtual pad type, with the state it keeps between snapshots: toggle
/// latches, turbo phases, threshold latches, the active layer. A value: copy it to fork the state.
///
/// State-based, like the virtual pads: `apply` takes the source's whole snapshot and returns the whole output
/// snapshot, so whatever no mapping presses any more is released (no stuck outputs). Time is passed in; the
/// pipeline reads no clock. While a turbo button is held, `nextWakeMicroseconds` says when the output next
/// changes on its own: the caller runs `apply` again then (with the same source) and needs no timer otherwise.
///
/// Layers: when the active layer changes, a button held across the change whose mapping differs in the new
/// layer releases what the old mapping pressed and stays silent until it is released (so switching a layer
/// never presses the new target by itself). Triggers and sticks follow the new mapping at once.
///
/// Each stage is a type of its own (`RemapStages` lists them in order); the pipeline runs them over a `RemapFrame`.
public struct RemapPipeline: Sendable {
    public let profile: RemapProfile
    public let target: VirtualPadCapabilities

    private var stages: RemapStages
    private var previousPhysicalButtons = ButtonSet()
    /// Every stage leaves every control as it is (no shaping, swap, toggle, turbo, layer, gyro or desktop; every
    /// source routed to itself): `apply` returns its input.
    let passesThrough: Bool

    /// What the virtual keyboard and mouse show after the last `apply`: keys and buttons held, and the movement that
    /// frame made (`needsVirtualKeyboard`/`needsVirtualMouse` say whether the profile has them at all).
    public private(set) var desktop = DesktopFrame()
    public let needsVirtualKeyboard: Bool
    public let needsVirtualMouse: Bool
    public var drivesDesktop: Bool { needsVirtualKeyboard || needsVirtualMouse }

    /// When the output next changes with the source unchanged (a turbo edge); nil when nothing is timed.
    public private(set) var nextWakeMicroseconds: UInt64?

    /// Validates `profile` for `target` (see `RemapProfile.validationErrors(for:)`) and compiles it.
    public init(profile: RemapProfile, target: VirtualPadCapabilities) throws(RemapValidationError) {
        try profile.validate(for: target)
        self.profile = profile
        self.target = target
        stages = RemapStages(profile: profile)
        needsVirtualKeyboard = profile.needsVirtualKeyboard
        needsVirtualMouse = profile.needsVirtualMouse
        passesThrough = stages.passesThroughUnchanged
    }

    /// The identity pipeline: output equals input.
    public static func identity(target: VirtualPadCapabilities = .everything) -> RemapPipeline {
        // The identity profile has nothing to reject.
        (try? RemapPipeline(profile: .identity, target: target))!
    }

    /// The routing tables: index 0 is the base map, index i + 1 is `profile.layers[i]` over the base.
    var tables: [RoutingTable] { stages.routing.tables }

    /// Whether `apply` reads its time argument (turbo, tap/hold, chords, the mouse or the wheel moved by the pad);
    /// otherwise any time will do.
    public var usesTime: Bool { !profile.turbo.isEmpty || !stages.timedPresses.isEmpty || needsVirtualMouse }

    /// The gyro's resting bias (rad/s) the gyro mouse measured, and whether it has one yet.
    public var gyroMouseBias: (bias: Vector3, isCalibrated: Bool) { stages.desktopMotion.gyroBias }

    /// The output for `source` at time `atMicroseconds` (any monotonic clock; only differences matter).
    public mutating func apply(_ source: PadSnapshot, atMicroseconds now: UInt64) -> PadSnapshot {
        if passesThrough {
            // What every stage gives for a profile that changes nothing (RemapPipelineTests checks the two agree):
            // `TargetRouting` gives a trigger below 0 as 0.
            var output = source
            output.leftTrigger = max(0, source.leftTrigger)
            output.rightTrigger = max(0, source.rightTrigger)
            return output
        }
        return applyingEveryStage(source, atMicroseconds: now)
    }

    /// `apply` without the pass-through shortcut.
    mutating func applyingEveryStage(_ source: PadSnapshot, atMicroseconds now: UInt64) -> PadSnapshot {
        var frame = RemapFrame(source: source, previousButtons: previousPhysicalButtons)
        previousPhysicalButtons = source.buttons
        stages.apply(&frame, atMicroseconds: now)
        nextWakeMicroseconds = frame.wakeMicroseconds
        if drivesDesktop { desktop = frame.desktop }
        return frame.output
    }

    /// How far below its threshold a one-sided source must fall to release the button it pressed (a fraction of
    /// full travel; at most half the threshold), so a trigger resting at the threshold does not chatter.
    public static let hysteresisFraction = 0.05
}

/// The pipeline's stages in the order they run (numbered as in `RemapProfile`'s documentation), each a concrete
/// stored value called directly (no `any`, no array of stages: nothing is allocated or dispatched dynamically per
/// frame). A stage added is a file of its own plus a line in each of the lists here (stored property, `init`,
/// `passesThroughUnchanged`, `apply`).
struct RemapStages: RemapStage {
    /// 1. Shaping of the physical sticks and triggers, then the stick swap.
    var shaping: StickAndTriggerShaping
    /// 2. Toggles, then turbo, on the physical buttons.
    var toggles: ButtonToggles
    var turbo: ButtonTurbo
    /// 3. One-sided sources latched beyond their thresholds.
    var thresholds: PressThresholds
    /// 4. The active layer (and silencing buttons held across a change of it), tap/hold and chords, then every
    /// source routed to its targets.
    var layer: ActiveLayer
    var timedPresses: TimedPresses
    var routing: TargetRouting
    /// 5. Gyro, added to the right stick.
    var gyro: GyroOnRightStick
    /// 6. The virtual keyboard and mouse.
    var desktopMotion: DesktopMotion

    init(profile: RemapProfile) {
        let tables = TargetRouting.tables(for: profile)
        shaping = StickAndTriggerShaping(profile: profile)
        toggles = ButtonToggles(toggles: profile.toggles)
        turbo = ButtonTurbo(turbo: profile.turbo)
        thresholds = PressThresholds(thresholdFractions: profile.thresholdFractions)
        layer = ActiveLayer(profile: profile, tables: tables)
        timedPresses = TimedPresses(profile: profile)
        routing = TargetRouting(tables: tables)
        gyro = GyroOnRightStick(gyro: profile.gyro)
        desktopMotion = DesktopMotion(profile: profile)
    }

    var passesThroughUnchanged: Bool {
        shaping.passesThroughUnchanged && toggles.passesThroughUnchanged && turbo.passesThroughUnchanged
            && thresholds.passesThroughUnchanged && layer.passesThroughUnchanged
            && timedPresses.passesThroughUnchanged && routing.passesThroughUnchanged && gyro.passesThroughUnchanged
            && desktopMotion.passesThroughUnchanged
    }

    mutating func apply(_ frame: inout RemapFrame, atMicroseconds now: UInt64) {
        shaping.apply(&frame, atMicroseconds: now)
        toggles.apply(&frame, atMicroseconds: now)
        turbo.apply(&frame, atMicroseconds: now)
        thresholds.apply(&frame, atMicroseconds: now)
        layer.apply(&frame, atMicroseconds: now)
        timedPresses.apply(&frame, atMicroseconds: now)
        routing.apply(&frame, atMicroseconds: now)
        gyro.apply(&frame, atMicroseconds: now)
        desktopMotion.apply(&frame, atMicroseconds: now)
    }
}
