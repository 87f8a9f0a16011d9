extension RemapProfile {
    /// What the profile makes besides the virtual pad, in lines for people (`doctor --profile`, `monitor --view
    /// --profile`): the virtual keyboard with the keys it presses and what presses them, the virtual mouse with its
    /// buttons, wheel and pointer and what drives them. Empty when it drives neither.
    public var desktopSummary: [String] {
        var keyboard: [String: [String]] = [:]  // target -> sources
        var mouse: [String: [String]] = [:]
        var order: [String] = []
        func note(_ targets: [RemapControl], from source: String) {
            for target in targets {
                guard let desktop = target.desktopTarget else { continue }
                if !order.contains(desktop.name) { order.append(desktop.name) }
                if desktop.needsKeyboard {
                    keyboard[desktop.name, default: []].append(source)
                } else {
                    mouse[desktop.name, default: []].append(source)
                }
            }
        }
        for source in RemapControl.allCases {
            if let targets = map[source] { note(targets, from: source.name) }
        }
        for layer in layers {
            for source in RemapControl.allCases {
                if let targets = layer.map[source] { note(targets, from: "\(source.name) in layer \(layer.holdControl.name)") }
            }
        }
        for button in Button.allCases {
            guard let entry = tapHold[button] else { continue }
            note(entry.tap, from: "\(button.rawValue) tapped")
            note(entry.hold, from: "\(button.rawValue) held")
        }
        for chord in chords { note(chord.targets, from: chord.name) }

        func listing(_ targets: [String: [String]]) -> String {
            order.filter { targets[$0] != nil }.map { "\($0) (\(targets[$0]!.joined(separator: ", ")))" }
                .joined(separator: ", ")
        }
        var lines: [String] = []
        if !keyboard.isEmpty { lines.append("virtual keyboard: " + listing(keyboard)) }
        var movers: [String] = []
        if let pointerStick {
            var text = "pointer: \(pointerStick.stick.rawValue) stick, \(Self.number(pointerStick.countsPerSecond)) counts/s at full"
            if pointerStick.acceleration > 1 {
                text += ", x\(Self.number(pointerStick.acceleration)) after \(pointerStick.accelerationMicroseconds / 1000) ms"
            }
            movers.append(text)
        }
        if let scrollStick {
            movers.append("wheel: \(scrollStick.stick.rawValue) stick, \(Self.number(scrollStick.notchesPerSecond)) notches/s at full")
        }
        if let gyroMouse {
            let settings = gyroMouse.settings
            var text = "pointer: gyro, \(Self.number(settings.countsPerTurn)) counts per turn, sensitivity \(Self.number(settings.sensitivity))"
            if let acceleration = settings.acceleration {
                text += " to \(Self.number(acceleration.upperSensitivity)) from \(Self.number(acceleration.lowerSpeedDegreesPerSecond))"
                    + "-\(Self.number(acceleration.upperSpeedDegreesPerSecond)) °/s"
            }
            text += ", \(settings.space.rawValue) space"
            if let button = gyroMouse.enableButton { text += ", while \(button.rawValue) is held" }
            if let button = gyroMouse.calibrateButton { text += ", \(button.rawValue) calibrates" }
            movers.append(text)
        }
        if let flickStick {
            movers.append(
                "pointer: flick stick on the \(flickStick.stick.rawValue) stick, \(Self.number(flickStick.settings.countsPerTurn)) counts per turn")
        }
        if !mouse.isEmpty || !movers.isEmpty {
            lines.append("virtual mouse: " + ([listing(mouse)].filter { !$0.isEmpty } + movers).joined(separator: "; "))
        }
        return lines
    }

    /// 1200, 1.5: no trailing zeros.
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
