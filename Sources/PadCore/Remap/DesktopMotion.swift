/// The pipeline's last stage: moves the virtual mouse's pointer and wheel from a stick (`StickToPointer`,
/// `StickToScroll`), the gyro (`GyroToMouse`), flick stick (`FlickStickBinding`) and the `scroll:` targets held.
///
/// Sticks move by time: the deflection held since the previous frame, times the time since it (so a stick held
/// still, which the pad does not report again, keeps the pointer moving on the pipeline's wakes). The gyro moves by
/// its samples' own clock (`GyroMouse`). Fractions of a count or of a wheel step are carried, never dropped.
struct DesktopMotion: RemapStage {
    /// While a stick moves the pointer or the wheel, or a flick is under way, the pipeline wakes this often (250 Hz:
    /// what a gaming mouse's slowest report rate gives).
    static let tickMicroseconds: UInt64 = 4_000
    /// A step longer than this (the pad was away, nothing was held) counts as this long.
    static let longestStepMicroseconds: UInt64 = 100_000
    /// A `scroll:` target held scrolls one notch at once, then one every `scrollRepeatMicroseconds` from
    /// `scrollRepeatDelayMicroseconds` on (as a keyboard's repeat).
    static let scrollRepeatDelayMicroseconds: UInt64 = 400_000
    static let scrollRepeatMicroseconds: UInt64 = 100_000

    /// Whether the profile has a virtual keyboard or mouse at all (else the stage does nothing).
    private let drivesDesktop: Bool
    private let pointer: StickToPointer?
    private let scroll: StickToScroll?
    private let gyroBinding: GyroToMouse?
    private var gyro: GyroMouse?
    private var calibration = RestingGyroCalibration()
    private var calibrating = false
    private var lastMotion: MotionSample?
    private var lastMotionArrivalMicroseconds: UInt64?
    private var flick: FlickStick?
    private let flickStick: PadStick?

    private var lastStepMicroseconds: UInt64?
    /// The pointer and wheel sticks' deflections (−1...1) since the last step: what moves over the next one.
    private var pointerDeflection = (x: 0.0, y: 0.0)
    private var pointerDeflectedSinceMicroseconds: UInt64?
    private var pointerCarried = (x: 0.0, y: 0.0)
    private var scrollDeflection = (x: 0.0, y: 0.0)
    private var scrollCarried = (x: 0.0, y: 0.0)
    /// Per `ScrollDirection` (in `allCases` order): held since, and notches given.
    private var scrollHeld: [(sinceMicroseconds: UInt64, notches: UInt64)?] = Array(repeating: nil, count: 4)
    /// Whether a `scroll:` target was held at the last step (else the per-direction work is skipped).
    private var scrollIsHeld = false

    init(profile: RemapProfile) {
        drivesDesktop = profile.needsVirtualKeyboard || profile.needsVirtualMouse
        pointer = profile.pointerStick
        scroll = profile.scrollStick
        gyroBinding = profile.gyroMouse
        gyro = profile.gyroMouse.map { GyroMouse(settings: $0.settings) }
        flick = profile.flickStick.map { FlickStick(settings: $0.settings) }
        flickStick = profile.flickStick?.stick
    }

    /// No virtual keyboard or mouse: nothing to press or move.
    var passesThroughUnchanged: Bool { !drivesDesktop }

    /// Adds this frame's movement to `frame.desktop` (which holds the keys `TargetRouting` pressed), from the shaped
    /// sticks, the source's motion and the buttons held after toggles and turbo.
    mutating func apply(_ frame: inout RemapFrame, atMicroseconds now: UInt64) {
        guard drivesDesktop else { return }
        let wake = step(
            &frame.desktop, shaped: frame.shaped, motion: frame.source.motion, held: frame.held,
            scrollTargets: frame.scrollTargets, atMicroseconds: now)
        if let wake { frame.wake(atMicroseconds: wake) }
    }

    /// The bias the resting calibration measured (rad/s), and whether it has one yet.
    var gyroBias: (bias: Vector3, isCalibrated: Bool) { (calibration.bias, calibration.isCalibrated) }

    /// Adds this frame's movement to `frame`; returns when it next moves on its own (nil: not until the pad changes).
    mutating func step(
        _ frame: inout DesktopFrame, shaped: PadSnapshot, motion: MotionSample, held: ButtonSet,
        scrollTargets: [ScrollDirection], atMicroseconds now: UInt64
    ) -> UInt64? {
        let elapsed = lastStepMicroseconds.map { now >= $0 ? min(now - $0, Self.longestStepMicroseconds) : 0 } ?? 0
        lastStepMicroseconds = now
        let seconds = Double(elapsed) / 1_000_000
        var wake: UInt64?
        func wakeSoon() { wake = now + Self.tickMicroseconds }

        if let pointer {
            // The deflection held over the step just ended, accelerated by how long it has been held.
            var factor = 1.0
            if let since = pointerDeflectedSinceMicroseconds, pointer.acceleration > 1 {
                let held = Double(now >= since ? now - since : 0)
                let ramp = pointer.accelerationMicroseconds == 0 ? 1 : min(held / Double(pointer.accelerationMicroseconds), 1)
                factor = 1 + (pointer.acceleration - 1) * ramp
            }
            pointerCarried.x += pointerDeflection.x * pointer.countsPerSecond * factor * seconds
            pointerCarried.y += pointerDeflection.y * pointer.countsPerSecond * factor * seconds
            pointerDeflection = Self.deflection(of: pointer.stick, in: shaped)
            if pointerDeflection.x != 0 || pointerDeflection.y != 0 {
                if pointerDeflectedSinceMicroseconds == nil { pointerDeflectedSinceMicroseconds = now }
                wakeSoon()
            } else {
                pointerDeflectedSinceMicroseconds = nil
            }
        }
        if let scroll {
            let unitsPerSecond = scroll.notchesPerSecond * Double(DesktopFrame.unitsPerNotch)
            // Stick up (negative y) scrolls up (positive wheel).
            scrollCarried.x += scrollDeflection.x * unitsPerSecond * seconds
            scrollCarried.y += -scrollDeflection.y * unitsPerSecond * seconds
            scrollDeflection = Self.deflection(of: scroll.stick, in: shaped)
            if scrollDeflection.x != 0 || scrollDeflection.y != 0 { wakeSoon() }
            frame.horizontalWheel += Int32(Self.takeWhole(&scrollCarried.x))
            frame.wheel += Int32(Self.takeWhole(&scrollCarried.y))
        }
        if let gyroBinding, gyro != nil, motion != lastMotion {
            stepGyro(gyroBinding, &frame, motion: motion, held: held, now: now)
        }
        if let flickStick, flick != nil {
            let (x, y) = Self.deflection(of: flickStick, in: shaped)
            pointerCarried.x += Double(flick!.counts(x: x, y: y, timeMicroseconds: now))
            if flick!.isFlicking { wakeSoon() }
        }
        frame.pointerX += Int32(clamping: Int(Self.takeWhole(&pointerCarried.x)))
        frame.pointerY += Int32(clamping: Int(Self.takeWhole(&pointerCarried.y)))

        if scrollTargets.isEmpty && !scrollIsHeld { return wake }
        scrollIsHeld = !scrollTargets.isEmpty
        for (index, direction) in ScrollDirection.allCases.enumerated() {
            guard scrollTargets.contains(direction) else {
                scrollHeld[index] = nil
                continue
            }
            var state = scrollHeld[index] ?? (now, 0)
            let heldFor = now >= state.sinceMicroseconds ? now - state.sinceMicroseconds : 0
            var due: UInt64 = 1
            if heldFor >= Self.scrollRepeatDelayMicroseconds {
                due += 1 + (heldFor - Self.scrollRepeatDelayMicroseconds) / Self.scrollRepeatMicroseconds
            }
            let notches = Int32(clamping: due - min(due, state.notches))
            state.notches = due
            scrollHeld[index] = state
            let units = notches * DesktopFrame.unitsPerNotch
            switch direction {
            case .up: frame.wheel += units
            case .down: frame.wheel -= units
            case .right: frame.horizontalWheel += units
            case .left: frame.horizontalWheel -= units
            }
            let next =
                heldFor < Self.scrollRepeatDelayMicroseconds
                ? state.sinceMicroseconds + Self.scrollRepeatDelayMicroseconds
                : state.sinceMicroseconds + Self.scrollRepeatDelayMicroseconds + (due - 1) * Self.scrollRepeatMicroseconds
            wake = min(wake ?? .max, max(next, now + 1))
        }
        return wake
    }

    private mutating func stepGyro(
        _ binding: GyroToMouse, _ frame: inout DesktopFrame, motion: MotionSample, held: ButtonSet, now: UInt64
    ) {
        defer {
            lastMotion = motion
            lastMotionArrivalMicroseconds = now
        }
        if let button = binding.calibrateButton {
            let pressed = held.contains(button)
            if pressed && !calibrating { calibration.beginCalibrating() }
            if !pressed && calibrating { calibration.endCalibrating() }
            calibrating = pressed
        }
        calibration.add(motion, stepMicroseconds: sampleStep(motion, arrival: now))
        let enabled = binding.enableButton.map(held.contains) ?? true
        guard enabled, !calibrating else {
            gyro!.reset()
            return
        }
        let counts = gyro!.counts(for: motion, arrivalMicroseconds: now, bias: calibration.bias)
        pointerCarried.x += Double(counts.x)
        pointerCarried.y += Double(counts.y)
    }

    /// The time the sample covers, for the resting calibration: by the sensor's clock where it has one.
    private func sampleStep(_ motion: MotionSample, arrival: UInt64) -> UInt64 {
        if motion.timestampMicroseconds != 0, let last = lastMotion?.timestampMicroseconds, last != 0 {
            let step = motion.timestampMicroseconds >= last ? motion.timestampMicroseconds - last : 0
            return min(step, GyroMouse.longestStepMicroseconds)
        }
        guard let lastArrival = lastMotionArrivalMicroseconds, arrival >= lastArrival else { return 0 }
        return min(arrival - lastArrival, GyroMouse.longestStepMicroseconds)
    }

    /// The stick's shaped position as fractions of full (x right, y down).
    static func deflection(of stick: PadStick, in snapshot: PadSnapshot) -> (x: Double, y: Double) {
        (AnalogScale.stickFraction(snapshot[stick.xAxis]), AnalogScale.stickFraction(snapshot[stick.yAxis]))
    }

    /// The whole part of `carried`, taken out of it (toward zero: the fraction keeps its sign).
    static func takeWhole(_ carried: inout Double) -> Double {
        guard carried.isFinite else {
            carried = 0
            return 0
        }
        let whole = min(max(carried.rounded(.towardZero), -1_000_000), 1_000_000)
        carried -= whole
        return whole
    }
}
