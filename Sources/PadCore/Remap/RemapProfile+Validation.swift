extension RemapProfile {
    /// Every mistake in the profile, in a fixed order (settings, then mappings in `RemapControl.allCases` order,
    /// base before layers). Empty when the profile runs on a pad with `target`'s capabilities.
    public func validationErrors(for target: VirtualPadCapabilities) -> [RemapValidationError] {
        let padType = target.name
        var errors: [RemapValidationError] = []
        /// Whether `value` is in 0 <= x < 1; records an error when it is not.
        @discardableResult func fraction(_ value: Double, _ keyPath: String) -> Bool {
            if value.isFinite && value >= 0 && value < 1 { return true }
            errors.append(.init(keyPath: keyPath, problem: .outOfRange(value: value, allowed: "0 <= x < 1")))
            return false
        }

        for (name, stick) in [("left", leftStick), ("right", rightStick)] {
            let prefix = "sticks.\(name)"
            let inner = fraction(stick.deadzoneFraction, prefix + ".deadzone")
            let outer = fraction(stick.outerDeadzoneFraction, prefix + ".outer_deadzone")
            fraction(stick.antiDeadzoneFraction, prefix + ".anti_deadzone")
            if inner, outer, stick.deadzoneFraction + stick.outerDeadzoneFraction >= 1 {
                errors.append(.init(keyPath: prefix + ".outer_deadzone", problem: .conflict(
                    reason: "deadzone + outer_deadzone must be below 1, leaving some travel")))
            }
            errors += Self.curveErrors(stick.curve, keyPath: prefix + ".curve")
        }
        for (name, trigger) in [("left", leftTrigger), ("right", rightTrigger)] {
            let inner = fraction(trigger.deadzoneFraction, "triggers.\(name).deadzone")
            let outer = fraction(trigger.outerDeadzoneFraction, "triggers.\(name).outer_deadzone")
            if inner, outer, trigger.deadzoneFraction + trigger.outerDeadzoneFraction >= 1 {
                errors.append(.init(keyPath: "triggers.\(name).outer_deadzone", problem: .conflict(
                    reason: "deadzone + outer_deadzone must be below 1, leaving some travel")))
            }
        }
        for source in RemapControl.allCases {
            guard let threshold = thresholdFractions[source] else { continue }
            let keyPath = "thresholds.\(source.name)"
            if source.kind != .oneSided {
                errors.append(.init(keyPath: keyPath, problem: .conflict(
                    reason: "a threshold applies to a trigger or a stick half (leftx+, lefty-, ...), not to \(source.name)")))
            } else if !(threshold.isFinite && threshold > 0 && threshold <= 1) {
                errors.append(.init(keyPath: keyPath, problem: .outOfRange(value: threshold, allowed: "0 < x <= 1")))
            }
        }
        for button in Button.allCases {
            guard let turbo = turbo[button] else { continue }
            let milliseconds = Double(turbo.periodMicroseconds) / 1000
            let allowed = Turbo.allowedPeriodMilliseconds
            if !(Double(allowed.lowerBound)...Double(allowed.upperBound)).contains(milliseconds) {
                errors.append(.init(keyPath: "turbo.\(button.rawValue).period_ms", problem: .outOfRange(
                    value: milliseconds, allowed: "\(allowed.lowerBound)...\(allowed.upperBound) milliseconds")))
            }
        }
        if let gyro {
            for (axis, value) in [("x", gyro.xDeflectionPerRadianPerSecond), ("y", gyro.yDeflectionPerRadianPerSecond)] {
                let allowed = GyroToRightStick.allowedSensitivity
                if !(value.isFinite && allowed.contains(value)) {
                    errors.append(.init(keyPath: "gyro.sensitivity_\(axis)", problem: .outOfRange(
                        value: value, allowed: "\(allowed.lowerBound)...\(allowed.upperBound) (full deflections per rad/s)")))
                }
            }
            for axis in [Axis.rightx, .righty] where !target.axes.contains(axis) {
                errors.append(.init(keyPath: "gyro", problem: .targetNotOnVirtualPad(
                    target: axis.rawValue, padType: padType, allowed: target.controlNames)))
            }
        }

        errors += Self.mapErrors(map, keyPath: "map", target: target, padType: padType)
        for layer in layers {
            let prefix = "layers.\(layer.holdControl.name)"
            if layer.holdControl.kind == .twoSided {
                errors.append(.init(keyPath: prefix, problem: .conflict(
                    reason: "a layer is held by a button, a trigger or a stick half (leftx+, ...), not by \(layer.holdControl.name)")))
            }
            errors += Self.mapErrors(layer.map, keyPath: prefix + ".map", target: target, padType: padType)
        }
        var seenHolds: Set<RemapControl> = []
        for layer in layers {
            let hold = layer.holdControl
            if !seenHolds.insert(hold).inserted {
                errors.append(.init(keyPath: "layers.\(hold.name)", problem: .conflict(reason: "\(hold.name) holds two layers")))
            }
            let holdKeys = [hold] + Self.wholeAndHalves(of: hold)
            for mapped in holdKeys {
                if map[mapped] != nil {
                    errors.append(.init(keyPath: "map.\(mapped.name)", problem: .conflict(
                        reason: "\(mapped.name) holds layer \(hold.name), so it is never passed on; remove this mapping")))
                }
                for other in layers where other.map[mapped] != nil {
                    errors.append(.init(keyPath: "layers.\(other.holdControl.name).map.\(mapped.name)", problem: .conflict(
                        reason: "\(mapped.name) holds layer \(hold.name), so it is never passed on; remove this mapping")))
                }
            }
            if case let .button(button) = hold, toggles.contains(button) || turbo[button] != nil {
                errors.append(.init(keyPath: "layers.\(hold.name)", problem: .conflict(
                    reason: "\(hold.name) holds a layer; it cannot also be a toggle or turbo button")))
            }
        }
        errors += timedPressErrors(target: target, padType: padType)
        errors += mouseErrors()
        return errors
    }

    /// Tap/hold buttons and chords: their timings, targets, and buttons that cannot also be something else.
    func timedPressErrors(target: VirtualPadCapabilities, padType: String) -> [RemapValidationError] {
        var errors: [RemapValidationError] = []
        let layerButtons = Set(layers.compactMap { if case let .button(button) = $0.holdControl { button } else { nil } })
        func targetErrors(_ targets: [RemapControl], source: String, keyPath: String) {
            for mapped in targets {
                if !target.has(mapped) {
                    errors.append(.init(keyPath: keyPath, problem: .targetNotOnVirtualPad(
                        target: mapped.name, padType: padType, allowed: target.controlNames)))
                }
                if mapped.kind == .twoSided {
                    errors.append(.init(keyPath: keyPath, problem: .incompatibleKinds(
                        source: source, target: mapped.name, remedy: "say which half it drives: \(mapped.name)+ or \(mapped.name)-")))
                }
            }
        }
        for button in Button.allCases {
            guard let entry = tapHold[button] else { continue }
            let keyPath = "tap_hold.\(button.rawValue)"
            let milliseconds = Double(entry.holdMicroseconds) / 1000
            let allowed = TapHold.allowedHoldMilliseconds
            if !(Double(allowed.lowerBound)...Double(allowed.upperBound)).contains(milliseconds) {
                errors.append(.init(keyPath: keyPath + ".hold_ms", problem: .outOfRange(
                    value: milliseconds, allowed: "\(allowed.lowerBound)...\(allowed.upperBound) milliseconds")))
            }
            targetErrors(entry.tap, source: button.rawValue, keyPath: keyPath + ".tap")
            targetErrors(entry.hold, source: button.rawValue, keyPath: keyPath + ".hold")
            if layerButtons.contains(button) || toggles.contains(button) || turbo[button] != nil {
                errors.append(.init(keyPath: keyPath, problem: .conflict(
                    reason: "\(button.rawValue) is tapped and held here; it cannot also hold a layer, toggle or repeat")))
            }
            if map[.button(button)] != nil || layers.contains(where: { $0.map[.button(button)] != nil }) {
                errors.append(.init(keyPath: keyPath, problem: .conflict(
                    reason: "\(button.rawValue) drives its tap and hold targets only; remove its mapping in [map] or the layers")))
            }
        }
        let windowMilliseconds = Double(chordWindowMicroseconds) / 1000
        let allowedWindow = Chord.allowedWindowMilliseconds
        if !chords.isEmpty, !(Double(allowedWindow.lowerBound)...Double(allowedWindow.upperBound)).contains(windowMilliseconds) {
            errors.append(.init(keyPath: "chord_ms", problem: .outOfRange(
                value: windowMilliseconds, allowed: "\(allowedWindow.lowerBound)...\(allowedWindow.upperBound) milliseconds")))
        }
        var seen: Set<[Button]> = []
        for chord in chords {
            let keyPath = "chords.\(chord.name)"
            if chord.first == chord.second {
                errors.append(.init(keyPath: keyPath, problem: .conflict(reason: "a chord is two different buttons")))
            }
            if !seen.insert([chord.first, chord.second].sorted { $0.bit < $1.bit }).inserted {
                errors.append(.init(keyPath: keyPath, problem: .conflict(reason: "these two buttons are a chord twice")))
            }
            targetErrors(chord.targets, source: chord.name, keyPath: keyPath)
            for button in [chord.first, chord.second] where tapHold[button] != nil || layerButtons.contains(button) {
                errors.append(.init(keyPath: keyPath, problem: .conflict(
                    reason: "\(button.rawValue) is tapped and held, or holds a layer; it cannot also be in a chord")))
            }
        }
        return errors
    }

    /// The sticks, gyro and flick stick on the mouse: their speeds, and one use per stick.
    func mouseErrors() -> [RemapValidationError] {
        var errors: [RemapValidationError] = []
        func range(_ value: Double, _ allowed: ClosedRange<Double>, _ keyPath: String, unit: String) {
            if !(value.isFinite && allowed.contains(value)) {
                errors.append(.init(keyPath: keyPath, problem: .outOfRange(
                    value: value, allowed: "\(allowed.lowerBound)...\(allowed.upperBound) \(unit)")))
            }
        }
        if let pointerStick {
            range(pointerStick.countsPerSecond, StickToPointer.allowedCountsPerSecond, "mouse.speed", unit: "counts per second")
            range(pointerStick.acceleration, StickToPointer.allowedAcceleration, "mouse.acceleration", unit: "times")
        }
        if let scrollStick {
            range(scrollStick.notchesPerSecond, StickToScroll.allowedNotchesPerSecond, "mouse.scroll_speed", unit: "notches per second")
        }
        let uses: [(String, PadStick?)] = [
            ("mouse.stick", pointerStick?.stick), ("mouse.scroll_stick", scrollStick?.stick), ("flick.stick", flickStick?.stick),
        ]
        for (index, use) in uses.enumerated() {
            guard let stick = use.1 else { continue }
            if let earlier = uses[..<index].first(where: { $0.1 == stick }) {
                errors.append(.init(keyPath: use.0, problem: .conflict(
                    reason: "the \(stick.rawValue) stick is already \(earlier.0); one use per stick")))
            }
        }
        let countsPerTurn: ClosedRange<Double> = 1...1_000_000
        if let gyroMouse {
            let settings = gyroMouse.settings
            range(settings.countsPerTurn, countsPerTurn, "gyro.counts_per_turn", unit: "counts")
            range(settings.sensitivity, -100...100, "gyro.sensitivity", unit: "game degrees per pad degree")
            range(settings.tighteningDegreesPerSecond, 0...100, "gyro.tightening", unit: "°/s")
            range(settings.smoothingDegreesPerSecond, 0...100, "gyro.smoothing", unit: "°/s")
            if let acceleration = settings.acceleration {
                range(acceleration.upperSensitivity, -100...100, "gyro.upper_sensitivity", unit: "game degrees per pad degree")
                range(acceleration.lowerSpeedDegreesPerSecond, 0...10_000, "gyro.lower_speed", unit: "°/s")
                range(acceleration.upperSpeedDegreesPerSecond, 0...10_000, "gyro.upper_speed", unit: "°/s")
                if acceleration.upperSpeedDegreesPerSecond < acceleration.lowerSpeedDegreesPerSecond {
                    errors.append(.init(keyPath: "gyro.upper_speed", problem: .conflict(reason: "upper_speed must be at least lower_speed")))
                }
            }
            if gyro != nil {
                errors.append(.init(keyPath: "gyro.output", problem: .conflict(reason: "the gyro drives the stick or the mouse, not both")))
            }
        }
        if let flickStick {
            range(flickStick.settings.countsPerTurn, countsPerTurn, "flick.counts_per_turn", unit: "counts")
            range(Double(flickStick.settings.flickMicroseconds) / 1000, 0...1000, "flick.flick_time_ms", unit: "milliseconds")
        }
        return errors
    }

    /// Throws the first of `validationErrors(for:)`.
    public func validate(for target: VirtualPadCapabilities) throws(RemapValidationError) {
        if let first = validationErrors(for: target).first { throw first }
    }

    static func curveErrors(_ curve: ResponseCurve, keyPath: String) -> [RemapValidationError] {
        switch curve {
        case let .exponent(exponent):
            let allowed = ResponseCurve.allowedExponents
            if exponent.isFinite && allowed.contains(exponent) { return [] }
            return [.init(keyPath: keyPath, problem: .outOfRange(value: exponent, allowed: "an exponent in \(allowed.lowerBound)...\(allowed.upperBound), or a list of [x, y] points"))]
        case let .points(points):
            func invalid(_ reason: String) -> [RemapValidationError] {
                [.init(keyPath: keyPath, problem: .curvePointsInvalid(reason: reason))]
            }
            guard points.count >= 2 else { return invalid("a curve needs at least two points, [0, y] first and [1, y] last") }
            for point in points where !(point.x.isFinite && point.y.isFinite && (0...1).contains(point.x) && (0...1).contains(point.y)) {
                return invalid("point [\(point.x), \(point.y)] is outside 0...1")
            }
            if points[0].x != 0 || points[points.count - 1].x != 1 {
                return invalid("the first point's x must be 0 and the last one's 1")
            }
            for (left, right) in zip(points, points.dropFirst()) {
                if right.x <= left.x { return invalid("x must increase from point to point ([\(left.x), \(left.y)] then [\(right.x), \(right.y)])") }
                if right.y < left.y { return invalid("y must not decrease: the curve is monotonic ([\(left.x), \(left.y)] then [\(right.x), \(right.y)])") }
            }
            return []
        }
    }

    /// A stick axis and its two halves, as any of them; nothing for other controls.
    static func wholeAndHalves(of control: RemapControl) -> [RemapControl] {
        switch control {
        case let .axis(axis) where !axis.isTrigger:
            StickDirection.allCases.map { RemapControl.stickHalf(axis, $0) }
        case let .stickHalf(axis, _):
            [.axis(axis)]
        default:
            []
        }
    }

    static func mapErrors(
        _ map: [RemapControl: [RemapControl]], keyPath prefix: String, target: VirtualPadCapabilities, padType: String
    ) -> [RemapValidationError] {
        var errors: [RemapValidationError] = []
        for source in RemapControl.allCases {
            guard let targets = map[source] else { continue }
            let keyPath = "\(prefix).\(source.name)"
            if case let .stickHalf(axis, _) = source, map[.axis(axis)] != nil {
                errors.append(.init(keyPath: keyPath, problem: .conflict(
                    reason: "\(axis.rawValue) is mapped whole as well; map either \(axis.rawValue) or its halves")))
            }
            for mapped in targets {
                if !target.has(mapped) {
                    errors.append(.init(keyPath: keyPath, problem: .targetNotOnVirtualPad(
                        target: mapped.name, padType: padType, allowed: target.controlNames)))
                }
                switch (source.kind, mapped.kind) {
                case (.twoSided, .twoSided), (.digital, .digital), (.digital, .oneSided), (.oneSided, .digital),
                    (.oneSided, .oneSided):
                    break
                case (.twoSided, _):
                    errors.append(.init(keyPath: keyPath, problem: .incompatibleKinds(
                        source: source.name, target: mapped.name,
                        remedy: "a whole stick axis drives a whole stick axis; map its halves (\(source.name)+, \(source.name)-) to drive buttons or triggers")))
                case (_, .twoSided):
                    errors.append(.init(keyPath: keyPath, problem: .incompatibleKinds(
                        source: source.name, target: mapped.name,
                        remedy: "say which half it drives: \(mapped.name)+ or \(mapped.name)-")))
                }
            }
        }
        return errors
    }
}
