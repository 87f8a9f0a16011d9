public import PadCore

/// Remap tests as text, events in and events out (evsieve's way). One line per step:
///
///     "[TIME:] INPUTS -> OUTPUTS"
///
/// TIME is microseconds (default: the previous step's time + 1000); INPUTS are applied to the source snapshot,
/// then the pipeline runs once and OUTPUTS are the events between its previous and its new output
/// (`SnapshotDiff` order: buttons in `Button.allCases` order, then axes). Events: `+a` press, `-a` release,
/// `leftx=-32768` an axis, `gyro=X,Y,Z` the gyroscope in rad/s (input only; motion is left out of outputs).
/// Whitespace separates events; a step with no inputs just runs the pipeline again (a turbo wake).
public enum RemapScript {
    /// Runs `lines` and returns them as the pipeline answered: equal to `lines` when every step's outputs match.
    public static func run(_ pipeline: inout RemapPipeline, _ lines: [String]) -> [String] {
        var source = PadSnapshot.neutral
        var output = PadSnapshot.neutral
        var time: UInt64 = 0
        var answered: [String] = []
        for line in lines {
            let arrow = line.firstRange(of: "->")
            var inputText = arrow.map { String(line[..<$0.lowerBound]) } ?? line
            var prefix = ""
            if let colon = inputText.firstIndex(of: ":") {
                time = UInt64(inputText[..<colon].trimmed) ?? time
                prefix = "\(time): "
                inputText = String(inputText[inputText.index(after: colon)...])
            } else if !answered.isEmpty {
                time += 1000
            }
            for word in inputText.split(separator: " ") { apply(String(word), to: &source) }
            let new = pipeline.apply(source, atMicroseconds: time)
            let outputs = SnapshotDiff.events(from: output, to: new).compactMap(format)
            output = new
            let inputs = inputText.split(separator: " ").joined(separator: " ")
            answered.append("\(prefix)\(inputs)\(inputs.isEmpty ? "" : " ")->\(outputs.isEmpty ? "" : " ")\(outputs.joined(separator: " "))")
        }
        return answered
    }

    /// `lines` with spacing normalised as `run` writes them, to compare with its answer.
    public static func normalised(_ lines: [String]) -> [String] {
        lines.map { line in
            let arrow = line.firstRange(of: "->")
            var left = arrow.map { String(line[..<$0.lowerBound]) } ?? line
            let right = arrow.map { String(line[$0.upperBound...]) } ?? ""
            var prefix = ""
            if let colon = left.firstIndex(of: ":") {
                prefix = "\(left[..<colon].trimmed): "
                left = String(left[left.index(after: colon)...])
            }
            let inputs = left.split(separator: " ").joined(separator: " ")
            let outputs = right.split(separator: " ").joined(separator: " ")
            return "\(prefix)\(inputs)\(inputs.isEmpty ? "" : " ")->\(outputs.isEmpty ? "" : " ")\(outputs)"
        }
    }

    static func apply(_ word: String, to snapshot: inout PadSnapshot) {
        if let first = word.first, first == "+" || first == "-", let button = Button(rawValue: String(word.dropFirst())) {
            snapshot[button] = first == "+"
        } else if let equals = word.firstIndex(of: "=") {
            let name = String(word[..<equals])
            let value = String(word[word.index(after: equals)...])
            if name == "gyro" {
                let parts = value.split(separator: ",").compactMap { Double(String($0)) }
                precondition(parts.count == 3, "gyro=X,Y,Z: \(word)")
                snapshot.motion.gyroRadiansPerSecond = Vector3(x: parts[0], y: parts[1], z: parts[2])
            } else if let axis = Axis(rawValue: name), let number = Int16(value) {
                snapshot[axis] = number
            } else {
                preconditionFailure("not an input event: \(word)")
            }
        } else {
            preconditionFailure("not an input event: \(word)")
        }
    }

    static func format(_ event: PadEvent) -> String? {
        switch event {
        case let .button(button, pressed): (pressed ? "+" : "-") + button.rawValue
        case let .axis(axis, value): "\(axis.rawValue)=\(value)"
        case .touch, .motion, .battery: nil
        }
    }
}

extension StringProtocol {
    var trimmed: String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
