/// How the pad's rotation turns into mouse counts (`[gyro] output = "mouse"`), in real-world units: with
/// `countsPerTurn` the counts the game takes for a 360 ° turn and `sensitivity` 1, turning the pad by 1 ° turns the
/// game by 1 °.
public struct GyroMouseSettings: Sendable, Hashable {
    /// The mouse counts the game turns a full 360 ° for (its own setting; found by turning once in the game).
    public var countsPerTurn: Double
    /// Game degrees per pad degree, at rotation speeds up to `acceleration.lowerSpeed` (all speeds without one).
    public var sensitivity: Double
    /// A second sensitivity at and above a rotation speed, and the speeds between which the first blends into it
    /// (nil: one sensitivity).
    public var acceleration: Acceleration?
    /// Below this rotation speed (°/s) movement is scaled down in proportion to the speed: the sensor's noise at
    /// rest moves nothing, a deliberate slow turn still does (0: off).
    public var tighteningDegreesPerSecond: Double
    /// Below this rotation speed (°/s) movement is averaged over `smoothingWindowMicroseconds`, fully at half of it,
    /// not at all from it up: small movements lose their jitter, fast ones keep their timing (0: off).
    public var smoothingDegreesPerSecond: Double
    public var smoothingWindowMicroseconds: UInt64
    /// Which rotation turns the game left and right.
    public var space: GyroSpace

    public struct Acceleration: Sendable, Hashable {
        public var lowerSpeedDegreesPerSecond: Double
        public var upperSpeedDegreesPerSecond: Double
        public var upperSensitivity: Double

        public init(lowerSpeedDegreesPerSecond: Double, upperSpeedDegreesPerSecond: Double, upperSensitivity: Double) {
            self.lowerSpeedDegreesPerSecond = lowerSpeedDegreesPerSecond
            self.upperSpeedDegreesPerSecond = upperSpeedDegreesPerSecond
            self.upperSensitivity = upperSensitivity
        }
    }

    public init(
        countsPerTurn: Double, sensitivity: Double = 1, acceleration: Acceleration? = nil,
        tighteningDegreesPerSecond: Double = 0, smoothingDegreesPerSecond: Double = 0,
        smoothingWindowMicroseconds: UInt64 = 125_000, space: GyroSpace = .player
    ) {
        self.countsPerTurn = countsPerTurn
        self.sensitivity = sensitivity
        self.acceleration = acceleration
        self.tighteningDegreesPerSecond = tighteningDegreesPerSecond
        self.smoothingDegreesPerSecond = smoothingDegreesPerSecond
        self.smoothingWindowMicroseconds = smoothingWindowMicroseconds
        self.space = space
    }

    /// The sensitivity at a rotation speed (°/s).
    func sensitivity(atDegreesPerSecond speed: Double) -> Double {
        guard let acceleration else { return sensitivity }
        let lower = acceleration.lowerSpeedDegreesPerSecond, upper = acceleration.upperSpeedDegreesPerSecond
        guard upper > lower else { return speed >= upper ? acceleration.upperSensitivity : sensitivity }
        let blend = min(max((speed - lower) / (upper - lower), 0), 1)
        return sensitivity + (acceleration.upperSensitivity - sensitivity) * blend
    }
}

/// Which rotation of the pad turns the game left and right (GyroWiki's "gyro spaces").
public enum GyroSpace: String, Sendable, Hashable, CaseIterable {
    /// About the pad's own up axis: right for a pad held flat, wrong as soon as it is tilted.
    case local
    /// About the direction gravity says is up, so a pad held at an angle still turns left and right; pitch stays the
    /// pad's own (tilting its front up looks up, however it is held).
    case player
}

/// Turns motion samples into relative mouse movement: rotation × time × sensitivity, in the game's counts, the
/// fractions carried from sample to sample so that slow turns add up and nothing is lost. Time is the sensor's own
/// clock where the pad has one (`MotionSample.timestampMicroseconds`, the kernel's 32-bit MSC_TIMESTAMP), so a
/// report that arrives late still counts the time it measured; else the time between calls.
///
/// Mouse x is −yaw (turning left is positive yaw and moves the pointer left), mouse y is −pitch (tilting the front
/// up is positive pitch and moves the pointer up, which is negative y). Pure: the caller passes the samples, their
/// arrival times and any bias to remove (`RestingGyroCalibration`).
public struct GyroMouse: Sendable {
    public var settings: GyroMouseSettings
    /// The counts not yet given out (fractions of a count, either sign).
    private var carried = (x: 0.0, y: 0.0)
    private var lastSensorMicroseconds: UInt64?
    private var lastArrivalMicroseconds: UInt64?
    /// Recent rates (°/s: yaw, pitch) for smoothing, with their durations (µs).
    private var recent: [(yaw: Double, pitch: Double, microseconds: UInt64)] = []

    /// A step longer than this is a gap (the pad was away, or the sensor's clock restarted), not a turn.
    public static let longestStepMicroseconds: UInt64 = 100_000

    public init(settings: GyroMouseSettings) {
        self.settings = settings
    }

    /// The mouse counts (x right, y down) for one sample: its rotation over the time since the previous sample.
    /// `bias` (rad/s) is subtracted from the gyro first. The first sample only starts the clock.
    public mutating func counts(
        for sample: MotionSample, arrivalMicroseconds: UInt64, bias: Vector3 = .zero
    ) -> (x: Int, y: Int) {
        let step = stepMicroseconds(sensor: sample.timestampMicroseconds, arrival: arrivalMicroseconds)
        guard let step, step > 0 else { return (0, 0) }
        let degreesPerRadian = 180 / Double.pi
        let gyro = Vector3(
            x: (sample.gyroRadiansPerSecond.x - bias.x) * degreesPerRadian,
            y: (sample.gyroRadiansPerSecond.y - bias.y) * degreesPerRadian,
            z: (sample.gyroRadiansPerSecond.z - bias.z) * degreesPerRadian)
        var yaw = gyro.y, pitch = gyro.x
        if settings.space == .player, let up = Self.unit(sample.accelMetersPerSecondSquared) {
            // The rotation about the world's vertical: the gyro's component along gravity's "up".
            yaw = gyro.x * up.x + gyro.y * up.y + gyro.z * up.z
        }
        (yaw, pitch) = smoothed(yaw: yaw, pitch: pitch, microseconds: step)
        let speed = (yaw * yaw + pitch * pitch).squareRoot()
        var scale = settings.sensitivity(atDegreesPerSecond: speed)
        if settings.tighteningDegreesPerSecond > 0 && speed < settings.tighteningDegreesPerSecond {
            scale *= speed / settings.tighteningDegreesPerSecond
        }
        let seconds = Double(step) / 1_000_000
        let countsPerDegree = settings.countsPerTurn / 360
        carried.x += -yaw * seconds * scale * countsPerDegree
        carried.y += -pitch * seconds * scale * countsPerDegree
        let whole = (x: carried.x.rounded(.towardZero), y: carried.y.rounded(.towardZero))
        carried.x -= whole.x
        carried.y -= whole.y
        return (Int(whole.x), Int(whole.y))
    }

    /// Forgets the clock and what was carried (the gyro was turned off, or the pad is another one).
    public mutating func reset() {
        carried = (0, 0)
        lastSensorMicroseconds = nil
        lastArrivalMicroseconds = nil
        recent.removeAll()
    }

    private mutating func stepMicroseconds(sensor: UInt64, arrival: UInt64) -> UInt64? {
        defer {
            lastSensorMicroseconds = sensor == 0 ? nil : sensor
            lastArrivalMicroseconds = arrival
        }
        let step: UInt64?
        if sensor != 0, let last = lastSensorMicroseconds {
            // The kernel's clock is 32 bits of µs: a smaller value is its wrap.
            step = sensor >= last ? sensor - last : (last <= UInt64(UInt32.max) ? (1 << 32) - last + sensor : nil)
        } else if sensor == 0, lastSensorMicroseconds == nil, let last = lastArrivalMicroseconds {
            step = arrival >= last ? arrival - last : nil
        } else {
            step = nil   // the first sample, or the pad's clock came or went: the clock starts here
        }
        guard let step, step <= Self.longestStepMicroseconds else { return nil }
        return step
    }

    /// Soft-tiered smoothing: the average of the last `smoothingWindowMicroseconds` for slow movement, the rate as
    /// it is for fast movement, a blend between.
    private mutating func smoothed(yaw: Double, pitch: Double, microseconds: UInt64) -> (Double, Double) {
        let threshold = settings.smoothingDegreesPerSecond
        guard threshold > 0, settings.smoothingWindowMicroseconds > 0 else { return (yaw, pitch) }
        recent.append((yaw, pitch, microseconds))
        var total: UInt64 = 0
        var kept = 0
        for entry in recent.reversed() {
            total += entry.microseconds
            kept += 1
            if total >= settings.smoothingWindowMicroseconds { break }
        }
        recent.removeFirst(recent.count - kept)
        let weight = Double(max(total, 1))
        let average = recent.reduce((0.0, 0.0)) { sum, entry in
            (sum.0 + entry.yaw * Double(entry.microseconds) / weight, sum.1 + entry.pitch * Double(entry.microseconds) / weight)
        }
        let speed = (yaw * yaw + pitch * pitch).squareRoot()
        let direct = min(max((speed - threshold / 2) / (threshold / 2), 0), 1)
        return (yaw * direct + average.0 * (1 - direct), pitch * direct + average.1 * (1 - direct))
    }

    private static func unit(_ vector: Vector3) -> Vector3? {
        let length = (vector.x * vector.x + vector.y * vector.y + vector.z * vector.z).squareRoot()
        guard length > 1 else { return nil }   // free fall, or no accelerometer: no "up"
        return Vector3(x: vector.x / length, y: vector.y / length, z: vector.z / length)
    }
}
