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
public struct RemapPipeline: Sendable {
    public let profile: RemapProfile
    public let target: VirtualPadCapabilities

    /// The routing tables: index 0 is the base map, index i + 1 is `profile.layers[i]` over the base.
    let tables: [RoutingTable]
    private let holdControls: [SourceSlot]
    private let thresholdFractions: [Double]
    /// Every stage leaves every control as it is (no shaping, swap, toggle, turbo, layer or gyro; every source
    /// routed to itself): `apply` returns its input.
    let passesThrough: Bool

    // State.
    private var previousPhysicalButtons = ButtonSet()
    private var toggleLatches = ButtonSet()
    private var turboHeldSinceMicroseconds: [Button: UInt64] = [:]
    private var thresholdLatches = [Bool](repeating: false, count: OneSidedSlot.count)
    /// Held layers (indices into `profile.layers`) in the order they were pressed; the last one is active.
    private var heldLayers: [Int] = []
    private var activeTable = 0
    private var silencedButtons = ButtonSet()
    private var timedPresses: TimedPresses
    private var desktopMotion: DesktopMotion

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
        let holds = profile.layers.compactMap { SourceSlot($0.holdControl) }
        holdControls = holds
        var base = RoutingTable.identity
        base.apply(profile.map)
        var tables = [base]
        for layer in profile.layers {
            var table = base
            table.apply(layer.map)
            tables.append(table)
        }
        // Hold controls and the sticks on the mouse drive nothing of the virtual pad.
        let mouseSticks = profile.sticksOnTheMouse.flatMap { stick in
            [stick.xAxis, stick.yAxis].flatMap { axis in
                StickDirection.allCases.map { SourceSlot.oneSided(OneSidedSlot(axis: axis, direction: $0)) }
            }
        }
        for index in tables.indices {
            for silent in holds + mouseSticks { tables[index].routes[silent.index] = [] }
        }
        self.tables = tables
        timedPresses = TimedPresses(profile: profile)
        desktopMotion = DesktopMotion(profile: profile)
        needsVirtualKeyboard = profile.needsVirtualKeyboard
        needsVirtualMouse = profile.needsVirtualMouse
        passesThrough =
            tables == [.identity] && holds.isEmpty && !profile.swapSticks && profile.toggles.isEmpty
            && profile.turbo.isEmpty && profile.gyro == nil && timedPresses.isEmpty && !desktopMotion.hasSources
            && [profile.leftStick, profile.rightStick].allSatisfy { !$0.shapesRadius && !$0.invertX && !$0.invertY }
            && profile.leftTrigger.isIdentity && profile.rightTrigger.isIdentity
        thresholdFractions = OneSidedSlot.all.map {
            profile.thresholdFractions[$0.control] ?? RemapProfile.defaultThresholdFraction
        }
    }

    /// The identity pipeline: output equals input.
    public static func identity(target: VirtualPadCapabilities = .everything) -> RemapPipeline {
        // The identity profile has nothing to reject.
        (try? RemapPipeline(profile: .identity, target: target))!
    }

    /// Whether `apply` reads its time argument (turbo, tap/hold, chords, the mouse or the wheel moved by the pad);
    /// otherwise any time will do.
    public var usesTime: Bool { !profile.turbo.isEmpty || !timedPresses.isEmpty || needsVirtualMouse }

    /// The gyro's resting bias (rad/s) the gyro mouse measured, and whether it has one yet.
    public var gyroMouseBias: (bias: Vector3, isCalibrated: Bool) { desktopMotion.gyroBias }

    /// The output for `source` at time `atMicroseconds` (any monotonic clock; only differences matter).
    public mutating func apply(_ source: PadSnapshot, atMicroseconds now: UInt64) -> PadSnapshot {
        if passesThrough {
            // What every stage gives for a profile that changes nothing (RemapPipelineTests checks the two agree).
            var output = source
            output.leftTrigger = max(0, source.leftTrigger)
            output.rightTrigger = max(0, source.rightTrigger)
            return output
        }
        return applyingEveryStage(source, atMicroseconds: now)
    }

    /// `apply` without the pass-through shortcut.
    mutating func applyingEveryStage(_ source: PadSnapshot, atMicroseconds now: UInt64) -> PadSnapshot {
        // 1. Shape the physical sticks and triggers, then swap the sticks.
        var shaped = source
        (shaped.leftX, shaped.leftY) = profile.leftStick.shaped(x: source.leftX, y: source.leftY)
        (shaped.rightX, shaped.rightY) = profile.rightStick.shaped(x: source.rightX, y: source.rightY)
        if profile.swapSticks {
            swap(&shaped.leftX, &shaped.rightX)
            swap(&shaped.leftY, &shaped.rightY)
        }
        shaped.leftTrigger = profile.leftTrigger.shaped(source.leftTrigger)
        shaped.rightTrigger = profile.rightTrigger.shaped(source.rightTrigger)

        // 2. Toggles, then turbo.
        let physical = source.buttons
        let rising = physical.rawValue & ~previousPhysicalButtons.rawValue
        previousPhysicalButtons = physical
        toggleLatches.rawValue ^= rising & profile.toggles.rawValue
        var held = ButtonSet(
            rawValue: (physical.rawValue & ~profile.toggles.rawValue) | (toggleLatches.rawValue & profile.toggles.rawValue))
        nextWakeMicroseconds = nil
        for (button, turbo) in profile.turbo {
            guard held.contains(button) else {
                turboHeldSinceMicroseconds[button] = nil
                continue
            }
            let since = turboHeldSinceMicroseconds[button] ?? now
            turboHeldSinceMicroseconds[button] = since
            let period = max(2, turbo.periodMicroseconds)
            let elapsed = now >= since ? now - since : 0
            let phase = elapsed % period
            let pressedPart = period / 2
            if phase >= pressedPart { held.remove(button) }
            let wake = now - phase + (phase < pressedPart ? pressedPart : period)
            nextWakeMicroseconds = min(nextWakeMicroseconds ?? .max, wake)
        }

        // One-sided magnitudes and their threshold latches (with hysteresis).
        var magnitudes = SlotMagnitudes()
        for slot in OneSidedSlot.all {
            let magnitude = slot.magnitude(in: shaped)
            magnitudes[slot.index] = magnitude
            let fraction = Double(magnitude) / Double(slot.fullMagnitude)
            let threshold = thresholdFractions[slot.index]
            if thresholdLatches[slot.index] {
                if fraction < threshold - min(RemapPipeline.hysteresisFraction, threshold / 2) {
                    thresholdLatches[slot.index] = false
                }
            } else if fraction >= threshold {
                thresholdLatches[slot.index] = true
            }
        }

        // 3. The active layer, and silencing buttons held across a change of it.
        for (layerIndex, hold) in holdControls.enumerated() {
            let isHeld =
                switch hold {
                case let .digital(button): held.contains(button)
                case let .oneSided(slot): thresholdLatches[slot.index]
                }
            if isHeld, !heldLayers.contains(layerIndex) {
                heldLayers.append(layerIndex)
            } else if !isHeld {
                heldLayers.removeAll { $0 == layerIndex }
            }
        }
        silencedButtons.rawValue &= held.rawValue
        let newTable = heldLayers.last.map { $0 + 1 } ?? 0
        if newTable != activeTable {
            let old = tables[activeTable]
            let new = tables[newTable]
            // Only buttons held across the change: one pressed in this same snapshot (together with the hold
            // control, as one report of a real pad can carry both) pressed nothing under the old mapping and
            // follows the new one at once.
            let heldAcross = ButtonSet(rawValue: held.rawValue & ~rising)
            for button in heldAcross.pressed {
                let index = SourceSlot.digital(button).index
                if old.routes[index] != new.routes[index] { silencedButtons.insert(button) }
            }
            activeTable = newTable
        }
        let table = tables[activeTable]

        // 4. Tap/hold and chords, then route every source to its targets.
        let timing = timedPresses.step(held: held, atMicroseconds: now)
        if let wake = timing.wakeMicroseconds { nextWakeMicroseconds = min(nextWakeMicroseconds ?? .max, wake) }
        var outputButtons = ButtonSet()
        var outputMagnitudes = SlotMagnitudes()
        var desktopFrame = DesktopFrame()
        var scrollTargets: [ScrollDirection] = []
        func drive(_ targets: [OutputSlot], fraction: Double, exact: (slot: OneSidedSlot, magnitude: Int32)?, pressed: Bool) {
            for target in targets {
                switch target {
                case let .key(code):
                    if pressed { desktopFrame.held[code] = true }
                case let .scroll(direction):
                    if pressed && !scrollTargets.contains(direction) { scrollTargets.append(direction) }
                case let .digital(button):
                    if pressed { outputButtons.insert(button) }
                case let .oneSided(slot):
                    let magnitude: Int32
                    if let exact, exact.slot.fullMagnitude == slot.fullMagnitude {
                        magnitude = exact.magnitude
                    } else {
                        magnitude = Int32((min(1, max(0, fraction)) * Double(slot.fullMagnitude)).rounded())
                    }
                    outputMagnitudes[slot.index] = max(outputMagnitudes[slot.index], magnitude)
                }
            }
        }
        let driving = (held.rawValue & ~silencedButtons.rawValue & ~timing.withheld.rawValue) | timing.replayed.rawValue
        drive(timing.targets, fraction: 1, exact: nil, pressed: true)
        for button in Button.allCases where driving & button.bit != 0 {
            drive(table.routes[SourceSlot.digital(button).index], fraction: 1, exact: nil, pressed: true)
        }
        for slot in OneSidedSlot.all {
            let magnitude = magnitudes[slot.index]
            let fraction = Double(magnitude) / Double(slot.fullMagnitude)
            drive(
                table.routes[SourceSlot.oneSided(slot).index], fraction: fraction, exact: (slot, magnitude),
                pressed: thresholdLatches[slot.index])
        }

        var output = source
        output.buttons = outputButtons
        for axis in Axis.allCases {
            if axis.isTrigger {
                output[axis] = Int16(outputMagnitudes[OneSidedSlot(axis: axis, direction: .positive).index])
            } else {
                let positive = outputMagnitudes[OneSidedSlot(axis: axis, direction: .positive).index]
                let negative = outputMagnitudes[OneSidedSlot(axis: axis, direction: .negative).index]
                // One side alone is exact (so -32768 and 32767 round-trip); both sides cancel as fractions, so
                // full left and full right make 0, not -1.
                if positive == 0 || negative == 0 {
                    output[axis] = Int16(clamping: positive - negative)
                } else {
                    output[axis] = AnalogScale.stickValue(Double(positive) / 32767 - Double(negative) / 32768)
                }
            }
        }

        // 5. Gyro, added to the right stick.
        if let gyro = profile.gyro, gyro.enableButton.map(held.contains) ?? true {
            let rate = source.motion.gyroRadiansPerSecond
            output.rightX = Self.adding(-rate.y * gyro.xDeflectionPerRadianPerSecond, to: output.rightX)
            output.rightY = Self.adding(-rate.x * gyro.yDeflectionPerRadianPerSecond, to: output.rightY)
        }

        // 6. The virtual keyboard and mouse.
        if drivesDesktop {
            let wake = desktopMotion.step(
                &desktopFrame, shaped: shaped, motion: source.motion, held: held, scrollTargets: scrollTargets,
                atMicroseconds: now)
            if let wake { nextWakeMicroseconds = min(nextWakeMicroseconds ?? .max, wake) }
            desktop = desktopFrame
        }
        return output
    }

    /// How far below its threshold a one-sided source must fall to release the button it pressed (a fraction of
    /// full travel; at most half the threshold), so a trigger resting at the threshold does not chatter.
    public static let hysteresisFraction = 0.05

    static func adding(_ deflection: Double, to value: Int16) -> Int16 {
        guard deflection.isFinite else { return value }
        let sum = Double(value) + min(2, max(-2, deflection)) * Double(Int16.max)
        return Int16(min(Double(Int16.max), max(Double(Int16.min), sum.rounded())))
    }
}

/// One value per `OneSidedSlot` (lanes 0..<10 of 16), inline: no heap allocation per `apply`.
typealias SlotMagnitudes = SIMD16<Int32>

/// A one-sided source or target: a stick half or a trigger, as an index 0..<10 and its full magnitude
/// (32768 for a negative stick half, so -32768 round-trips; 32767 otherwise).
struct OneSidedSlot: Hashable, Sendable {
    let axis: Axis
    let direction: StickDirection

    /// Triggers use `.positive`.
    init(axis: Axis, direction: StickDirection) {
        self.axis = axis
        self.direction = axis.isTrigger ? .positive : direction
    }

    static let count = 10
    static let all: [OneSidedSlot] = Axis.allCases.flatMap { axis in
        axis.isTrigger
            ? [OneSidedSlot(axis: axis, direction: .positive)]
            : StickDirection.allCases.map { OneSidedSlot(axis: axis, direction: $0) }
    }

    var index: Int {
        switch axis {
        case .leftx: direction == .negative ? 0 : 1
        case .lefty: direction == .negative ? 2 : 3
        case .rightx: direction == .negative ? 4 : 5
        case .righty: direction == .negative ? 6 : 7
        case .lefttrigger: 8
        case .righttrigger: 9
        }
    }

    var fullMagnitude: Int32 { direction == .negative ? 32768 : 32767 }

    var control: RemapControl { axis.isTrigger ? .axis(axis) : .stickHalf(axis, direction) }

    func magnitude(in snapshot: PadSnapshot) -> Int32 {
        let value = Int32(snapshot[axis])
        return direction == .negative ? max(0, -value) : max(0, value)
    }
}

/// A source the routing tables index: a button (0..<21) or a one-sided slot (21..<31).
enum SourceSlot: Hashable, Sendable {
    case digital(Button)
    case oneSided(OneSidedSlot)

    static let count = Button.allCases.count + OneSidedSlot.count

    /// nil for a whole stick axis (which routes as its two halves) and for desktop targets (never sources).
    init?(_ control: RemapControl) {
        switch control {
        case let .button(button): self = .digital(button)
        case let .axis(axis) where axis.isTrigger: self = .oneSided(OneSidedSlot(axis: axis, direction: .positive))
        case .axis, .desktop: return nil
        case let .stickHalf(axis, direction): self = .oneSided(OneSidedSlot(axis: axis, direction: direction))
        }
    }

    var index: Int {
        switch self {
        case let .digital(button): button.bit.trailingZeroBitCount
        case let .oneSided(slot): Button.allCases.count + slot.index
        }
    }
}

/// A target the routing tables drive: a pad button, a one-sided pad slot, a key or mouse button of the virtual
/// keyboard or mouse (by its evdev code), or a wheel direction. Trivial values (no reference counting as frames are
/// routed).
enum OutputSlot: Hashable, Sendable {
    case digital(Button)
    case oneSided(OneSidedSlot)
    case key(UInt16)
    case scroll(ScrollDirection)

    /// nil for a whole stick axis (routed half to half by `RoutingTable.apply`).
    init?(_ control: RemapControl) {
        switch control.desktopTarget {
        case let .key(key)?:
            self = .key(key.code)
            return
        case let .mouseButton(button)?:
            self = .key(button.code)
            return
        case let .scroll(direction)?:
            self = .scroll(direction)
            return
        case nil:
            break
        }
        switch SourceSlot(control) {
        case let .digital(button): self = .digital(button)
        case let .oneSided(slot): self = .oneSided(slot)
        case nil: return nil
        }
    }
}

/// Source slot -> target slots.
struct RoutingTable: Hashable, Sendable {
    var routes: [[OutputSlot]]

    static let identity: RoutingTable = {
        var routes = [[OutputSlot]](repeating: [], count: SourceSlot.count)
        for button in Button.allCases { routes[SourceSlot.digital(button).index] = [.digital(button)] }
        for slot in OneSidedSlot.all { routes[SourceSlot.oneSided(slot).index] = [.oneSided(slot)] }
        return RoutingTable(routes: routes)
    }()

    /// Replaces the routes of every source `map` lists. A whole stick axis routes half to half (validated:
    /// its targets are whole stick axes).
    mutating func apply(_ map: [RemapControl: [RemapControl]]) {
        for source in RemapControl.allCases {
            guard let targets = map[source] else { continue }
            if case let .axis(axis) = source, !axis.isTrigger {
                for direction in StickDirection.allCases {
                    let half = SourceSlot.oneSided(OneSidedSlot(axis: axis, direction: direction))
                    routes[half.index] = targets.compactMap { target in
                        guard case let .axis(targetAxis) = target, !targetAxis.isTrigger else { return nil }
                        return .oneSided(OneSidedSlot(axis: targetAxis, direction: direction))
                    }
                }
            } else if let slot = SourceSlot(source) {
                routes[slot.index] = targets.compactMap(OutputSlot.init)
            }
        }
    }
}
