/// One stage of `RemapPipeline`: its compiled settings, the state it keeps between frames, and its rule, applied to
/// the `RemapFrame` the stages hand each other (`RemapStages` lists them in the order they run).
///
/// A stage is a concrete value stored in `RemapStages` and called directly, never through `any RemapStage`: the
/// per-frame path has no dynamic dispatch and allocates nothing.
protocol RemapStage: Sendable {
    /// Whether this stage, as compiled, hands every frame on as it found it: the same buttons, sticks and triggers,
    /// no keyboard or mouse output, no wake. When every stage says so, `RemapPipeline.apply` skips them all and
    /// returns its input (`RemapPipeline.passesThrough`).
    var passesThroughUnchanged: Bool { get }

    /// Reads what the earlier stages wrote into `frame` and writes what this stage decides. `now` is the pipeline's
    /// time (any monotonic clock, only differences matter).
    mutating func apply(_ frame: inout RemapFrame, atMicroseconds now: UInt64)
}

/// What the stages of one `RemapPipeline.apply` hand each other, from the pad's snapshot to the output snapshot, the
/// virtual keyboard and mouse's frame and the next wake. Inline values only (the arrays stay empty unless a `scroll:`
/// target or a tap/hold or chord target is pressed): building one allocates nothing.
struct RemapFrame {
    /// The pad's snapshot as it came in.
    let source: PadSnapshot
    /// Physical buttons pressed in this snapshot and not in the previous one.
    let newlyPressed: ButtonSet
    /// The sticks and triggers after shaping and the stick swap (`StickAndTriggerShaping`).
    var shaped: PadSnapshot
    /// The buttons held after toggles and turbo (`ButtonToggles`, `ButtonTurbo`): what layers, mappings, the gyro and
    /// the mouse read. The physical buttons until those stages run.
    var held: ButtonSet
    /// Each one-sided slot's magnitude in `shaped`, and whether it is beyond its press threshold (`PressThresholds`).
    var magnitudes = SlotMagnitudes()
    var thresholdLatches = SlotLatches()
    /// The routing table in force: 0 the base map, i + 1 `profile.layers[i]` (`ActiveLayer`).
    var activeTable = 0
    /// Buttons held across a change of layer whose mapping differs there: they drive nothing until released.
    var silenced = ButtonSet()
    /// Tap/hold and chords: what to withhold from the map, replay and press besides (`TimedPresses`).
    var timing = TimedPresses.Step()
    /// The virtual pad's snapshot (`TargetRouting`, then `GyroOnRightStick`); touches, motion and battery are the
    /// source's.
    var output: PadSnapshot
    /// The virtual keyboard and mouse (`TargetRouting` presses keys, `DesktopMotion` moves the pointer and wheel).
    var desktop = DesktopFrame()
    /// The `scroll:` targets the mappings press, in the order first pressed.
    var scrollTargets: [ScrollDirection] = []
    /// When the output next changes with the source unchanged; nil when nothing is timed.
    private(set) var wakeMicroseconds: UInt64?

    init(source: PadSnapshot, previousButtons: ButtonSet) {
        self.source = source
        newlyPressed = ButtonSet(rawValue: source.buttons.rawValue & ~previousButtons.rawValue)
        shaped = source
        held = source.buttons
        output = source
    }

    /// Asks to be run again at `time` at the latest (the earliest such request wins).
    mutating func wake(atMicroseconds time: UInt64) {
        wakeMicroseconds = min(wakeMicroseconds ?? .max, time)
    }
}
