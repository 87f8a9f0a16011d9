/// One slot's motion timestamps as DSU sends them: microseconds that only go forward, from the pad's own sensor clock.
///
/// A pad's sensor clock (evdev's MSC_TIMESTAMP) is a 32-bit microsecond counter that wraps every 71.6 minutes;
/// clients integrate the gyroscope over the differences between timestamps, so the counter is unwrapped to 64 bits.
/// A pad without a sensor clock (its samples stamped 0) is stamped with the time its frames arrived. A clock that jumps
/// back (the pad came back, its counter restarted) continues from where it was by the time that passed.
public struct DSUMotionClock: Sendable, Hashable {
    private var lastSensor: UInt64?
    private var lastArrival: UInt64 = 0
    /// The last timestamp given out.
    public private(set) var microseconds: UInt64 = 0

    public init() {}

    /// The timestamp for a sample stamped `sensorMicroseconds` (0: the pad has no sensor clock) that arrived at
    /// `arrivalMicroseconds` (a monotonic clock). The same sensor time gives the same timestamp again (a frame that
    /// changed only a button).
    public mutating func timestamp(sensorMicroseconds sensor: UInt64, arrivalMicroseconds arrival: UInt64) -> UInt64 {
        defer { lastArrival = arrival }
        guard sensor != 0 else {
            // No sensor clock: the arrival time, never going back.
            lastSensor = nil
            microseconds = max(microseconds &+ (microseconds == 0 ? 0 : 1), arrival)
            return microseconds
        }
        guard let last = lastSensor else {
            lastSensor = sensor
            // The first sample (or the first after a restart): where the previous stretch left off, plus the time
            // since; or, at the very start, the sensor's own reading.
            microseconds = microseconds == 0 ? sensor : microseconds &+ max(1, arrival &- lastArrival)
            return microseconds
        }
        lastSensor = sensor
        let step: UInt64
        if sensor <= UInt32.max && last <= UInt32.max {
            // A 32-bit counter: the difference modulo 2^32 (across a wrap); more than half the range is a jump back.
            let modular = (sensor &- last) & 0xFFFF_FFFF
            step = modular < 0x8000_0000 ? modular : max(1, arrival &- lastArrival)
        } else {
            step = sensor >= last ? sensor - last : max(1, arrival &- lastArrival)
        }
        microseconds &+= step
        return microseconds
    }

    /// The pad went away: its next sample starts a new stretch (its counter may have restarted).
    public mutating func restart() { lastSensor = nil }
}
