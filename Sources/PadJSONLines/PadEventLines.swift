import FoundationEssentials
public import PadCore

/// Pad events as JSON lines: what `padbridge virtual` reads and `padbridge monitor --json` prints.
///
///     {"type":"button","button":"a","pressed":true}
///     {"type":"axis","axis":"leftx","value":-12000}
///     {"type":"touch","contact":0,"active":true,"x":0.5,"y":0.25}
///     {"type":"motion","gyro":[0,0,0.5],"accel":[0,9.81,0]}
///     {"type":"battery","percent":80,"charging":false}
///
/// Units: sticks -32768...32767 (up negative), triggers 0...32767, touch x/y 0...1, gyro rad/s,
/// accel m/s², optional motion `timestamp` in µs, battery percent 0...100.
public enum PadEventLines {
    /// One line for one event, keys in a fixed order, no trailing newline.
    public static func line(for event: PadEvent) -> String {
        switch event {
        case let .button(button, pressed):
            return #"{"type":"button","button":"\#(button.rawValue)","pressed":\#(pressed)}"#
        case let .axis(axis, value):
            return #"{"type":"axis","axis":"\#(axis.rawValue)","value":\#(value)}"#
        case let .touch(contact, state):
            // The surface only where it is not the touchpad (a Steam Deck's trackpads): other pads' lines are as before.
            let surface = state.surface == .touchpad ? "" : #","surface":"\#(state.surface.name)""#
            return #"{"type":"touch","contact":\#(contact),"active":\#(state.active),"x":\#(JSONNumberFormat.decimal(state.x)),"y":\#(JSONNumberFormat.decimal(state.y)),"id":\#(state.trackingID)\#(surface)}"#
        case let .motion(sample):
            let gyro = sample.gyroRadiansPerSecond
            let accel = sample.accelMetersPerSecondSquared
            return #"{"type":"motion","gyro":\#(JSONNumberFormat.vector((gyro.x, gyro.y, gyro.z))),"accel":\#(JSONNumberFormat.vector((accel.x, accel.y, accel.z))),"timestamp":\#(sample.timestampMicroseconds)}"#
        case let .battery(state):
            return #"{"type":"battery","percent":\#(state.percent),"charging":\#(state.charging)}"#
        }
    }

    /// Reads one line. Fields a line leaves out (a motion line without `accel`, a touch line without
    /// coordinates) keep their values from `current`.
    public static func event(from line: String, current: PadSnapshot = .neutral) throws(JSONLineError) -> PadEvent {
        let fields: Fields = try decodeLine(line)
        switch fields.type {
        case "button":
            let button = try required(fields.button, "button", allowed: Button.allCases.map(\.rawValue))
            guard let value = Button(rawValue: button) else {
                throw unknown("button", button, allowed: Button.allCases.map(\.rawValue))
            }
            return .button(value, pressed: try required(fields.pressed, "pressed", allowed: ["true", "false"]))
        case "axis":
            let name = try required(fields.axis, "axis", allowed: Axis.allCases.map(\.rawValue))
            guard let axis = Axis(rawValue: name) else {
                throw unknown("axis", name, allowed: Axis.allCases.map(\.rawValue))
            }
            let range = axis.range
            let raw = try required(fields.value, "value", allowed: ["\(range.lowerBound)...\(range.upperBound)"])
            guard raw.isFinite, raw == raw.rounded(), raw >= Double(range.lowerBound), raw <= Double(range.upperBound)
            else {
                throw JSONLineError(
                    "\"value\" \(JSONNumberFormat.decimal(raw)) is out of range for \(axis.rawValue): allowed \(range.lowerBound)...\(range.upperBound)"
                )
            }
            return .axis(axis, value: Int16(raw))
        case "touch":
            let contact = try required(fields.contact, "contact", allowed: ["0", "1"])
            guard (0..<TouchContacts.count).contains(contact) else {
                throw JSONLineError("\"contact\" \(contact) is out of range: allowed 0 or 1")
            }
            var state = current.touches[contact]
            state.active = try required(fields.active, "active", allowed: ["true", "false"])
            if let x = fields.x { state.x = try unitInterval(x, "x") }
            if let y = fields.y { state.y = try unitInterval(y, "y") }
            if let id = fields.id {
                guard (0...127).contains(id) else { throw JSONLineError("\"id\" \(id) is out of range: allowed 0...127") }
                state.trackingID = UInt8(id)
            }
            if let name = fields.surface {
                guard let surface = TouchSurface(name: name) else {
                    throw JSONLineError(
                        "\"surface\" \"\(name)\" is unknown: allowed \(TouchSurface.allCases.map(\.name).joined(separator: ", "))")
                }
                state.surface = surface
            }
            return .touch(contact: contact, state)
        case "motion":
            guard fields.gyro != nil || fields.accel != nil else {
                throw JSONLineError("a motion line needs \"gyro\" (rad/s) or \"accel\" (m/s²), each [x,y,z]")
            }
            var sample = current.motion
            if let gyro = fields.gyro { sample.gyroRadiansPerSecond = try vector(gyro, "gyro") }
            if let accel = fields.accel { sample.accelMetersPerSecondSquared = try vector(accel, "accel") }
            if let timestamp = fields.timestamp { sample.timestampMicroseconds = timestamp }
            return .motion(sample)
        case "battery":
            let percent = try required(fields.percent, "percent", allowed: ["0...100"])
            guard (0...100).contains(percent) else {
                throw JSONLineError("\"percent\" \(percent) is out of range: allowed 0...100")
            }
            let charging = fields.charging ?? current.battery.charging
            return .battery(BatteryState(percent: UInt8(percent), charging: charging))
        default:
            throw unknown("type", fields.type, allowed: ["button", "axis", "touch", "motion", "battery"])
        }
    }

    private struct Fields: Decodable {
        var type: String
        var button: String?
        var pressed: Bool?
        var axis: String?
        var value: Double?
        var contact: Int?
        var active: Bool?
        var x: Double?
        var y: Double?
        var id: Int?
        var surface: String?
        var gyro: [Double]?
        var accel: [Double]?
        var timestamp: UInt64?
        var percent: Int?
        var charging: Bool?
    }

    private static func vector(_ values: [Double], _ key: String) throws(JSONLineError) -> Vector3 {
        guard values.count == 3, values.allSatisfy(\.isFinite) else {
            throw JSONLineError("\"\(key)\" must be three finite numbers [x,y,z], got \(values.count) values")
        }
        return Vector3(x: values[0], y: values[1], z: values[2])
    }

    private static func unitInterval(_ value: Double, _ key: String) throws(JSONLineError) -> Double {
        guard value.isFinite, (0...1).contains(value) else {
            throw JSONLineError("\"\(key)\" \(JSONNumberFormat.decimal(value)) is out of range: allowed 0...1")
        }
        return value
    }
}

/// Decodes one line's fields; every failure becomes a `JSONLineError` that names the field and what it must be.
func decodeLine<Fields: Decodable>(_ line: String) throws(JSONLineError) -> Fields {
    do {
        return try JSONDecoder().decode(Fields.self, from: Data(line.utf8))
    } catch let error as DecodingError {
        throw JSONLineError(describe(error))
    } catch {
        throw JSONLineError("not a JSON object: \(error)")
    }
}

func required<T>(_ value: T?, _ key: String, allowed: [String]) throws(JSONLineError) -> T {
    guard let value else {
        throw JSONLineError("missing \"\(key)\" (allowed: \(allowed.joined(separator: ", ")))")
    }
    return value
}

func unknown(_ key: String, _ value: String, allowed: [String]) -> JSONLineError {
    JSONLineError("unknown \(key) \"\(value)\" (allowed: \(allowed.joined(separator: ", ")))")
}

func describe(_ error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map(\.stringValue).joined(separator: ".")
    }
    switch error {
    case let .keyNotFound(key, _):
        return "missing \"\(key.stringValue)\""
    case let .typeMismatch(type, context):
        return "\"\(path(context))\" has the wrong type: expected \(jsonTypeName(type))"
    case let .valueNotFound(type, context):
        return "\"\(path(context))\" is null: expected \(jsonTypeName(type))"
    case let .dataCorrupted(context):
        if context.codingPath.isEmpty { return "not valid JSON" }
        return "\"\(path(context))\" is not valid: \(context.debugDescription)"
    @unknown default:
        return "not a valid line"
    }
}

private func jsonTypeName(_ type: Any.Type) -> String {
    switch type {
    case is Bool.Type: "true or false"
    case is String.Type: "a string"
    case is Int.Type, is UInt64.Type: "an integer"
    case is Double.Type: "a number"
    case is [Double].Type: "an array of numbers"
    default: "\(type)"
    }
}
