import PadCore

/// `padbridge monitor`'s readable lines: the kernel's timestamp of the frame, then the change.
///
///     1700000123.456789  button a pressed
///     1700000123.460812  axis leftx -12000
///     1700000123.464101  touch 1 down x 0.750 y 0.125 (id 7)
///     1700000123.468000  motion gyro 0.500 -0.250 1.000 rad/s accel 0.000 9.807 0.000 m/s² (t 123456 µs)
enum MonitorText {
    static func line(for event: PadEvent, seconds: Int64, microseconds: Int32) -> String {
        let micro = String(microseconds)
        let stamp = "\(seconds)." + String(repeating: "0", count: max(0, 6 - micro.count)) + micro
        return stamp + "  " + describe(event)
    }

    static func describe(_ event: PadEvent) -> String {
        switch event {
        case let .button(button, pressed):
            return "button \(button.rawValue) \(pressed ? "pressed" : "released")"
        case let .axis(axis, value):
            return "axis \(axis.rawValue) \(value)"
        case let .touch(contact, state):
            let surface = state.surface == .touchpad ? "" : " on the \(state.surface.name)"
            guard state.active else { return "touch \(contact) up\(surface)" }
            return "touch \(contact)\(surface) down x \(NumberText.fixed(state.x, places: 3)) y \(NumberText.fixed(state.y, places: 3)) (id \(state.trackingID))"
        case let .motion(sample):
            let gyro = sample.gyroRadiansPerSecond, accel = sample.accelMetersPerSecondSquared
            return "motion gyro \([gyro.x, gyro.y, gyro.z].map { NumberText.fixed($0, places: 3) }.joined(separator: " ")) rad/s "
                + "accel \([accel.x, accel.y, accel.z].map { NumberText.fixed($0, places: 3) }.joined(separator: " ")) m/s² "
                + "(t \(sample.timestampMicroseconds) µs)"
        case let .battery(state):
            return "battery \(state.percent)%\(state.charging ? " charging" : "")"
        }
    }
}
