/// The gyro's drift at rest (its bias: what it reads while nothing turns), measured and given to `GyroMouse` to
/// remove. Two ways, as JoyShockMapper and Steam Input offer them:
/// - by itself: whenever the pad lies still (the gyro steady within `stillnessDegreesPerSecond` on every axis and
///   gravity steady within `stillnessMetersPerSecondSquared`) for `stillMicroseconds`, the bias is the mean of that
///   stillness, and is kept up to date while the stillness lasts; a steady turn is not stillness: no axis may read
///   more than `largestBiasDegreesPerSecond` (a real gyro's drift is a fraction of that);
/// - on a button (`calibrate`): the mean of what the gyro reads while the button is held.
/// Pure: the caller passes each sample and its step (µs).
public struct RestingGyroCalibration: Sendable {
    public static let stillMicroseconds: UInt64 = 3_000_000
    public static let stillnessDegreesPerSecond: Double = 1.5
    public static let stillnessMetersPerSecondSquared: Double = 0.3
    public static let largestBiasDegreesPerSecond: Double = 5

    /// The bias to subtract from the gyro (rad/s), zero until measured.
    public private(set) var bias: Vector3 = .zero
    /// Whether `bias` has been measured.
    public private(set) var isCalibrated = false

    private var still = Accumulator()
    private var manual: Accumulator?

    private struct Accumulator {
        var first: MotionSample?
        var sum = Vector3.zero
        var count = 0
        var microseconds: UInt64 = 0

        mutating func add(_ sample: MotionSample, microseconds step: UInt64) {
            if first == nil { first = sample }
            sum.x += sample.gyroRadiansPerSecond.x
            sum.y += sample.gyroRadiansPerSecond.y
            sum.z += sample.gyroRadiansPerSecond.z
            count += 1
            microseconds += step
        }

        var mean: Vector3 {
            let n = Double(max(count, 1))
            return Vector3(x: sum.x / n, y: sum.y / n, z: sum.z / n)
        }
    }

    public init() {}

    /// Takes one sample, `stepMicroseconds` after the one before.
    public mutating func add(_ sample: MotionSample, stepMicroseconds: UInt64) {
        if manual != nil {
            manual!.add(sample, microseconds: stepMicroseconds)
            return
        }
        let largest = Self.largestBiasDegreesPerSecond * Double.pi / 180
        let gyro = sample.gyroRadiansPerSecond
        guard abs(gyro.x) <= largest, abs(gyro.y) <= largest, abs(gyro.z) <= largest else {
            still = Accumulator()
            return
        }
        if let first = still.first, !Self.isStill(sample, comparedTo: first) {
            still = Accumulator()
        }
        still.add(sample, microseconds: still.first == nil ? 0 : stepMicroseconds)
        if still.microseconds >= Self.stillMicroseconds {
            bias = still.mean
            isCalibrated = true
        }
    }

    /// The calibration button went down: what the gyro reads from now on is its bias.
    public mutating func beginCalibrating() {
        manual = Accumulator()
    }

    /// The calibration button came up: the mean of what was read meanwhile is the bias (unchanged if nothing was).
    public mutating func endCalibrating() {
        if let manual, manual.count > 0 {
            bias = manual.mean
            isCalibrated = true
        }
        manual = nil
        still = Accumulator()
    }

    private static func isStill(_ sample: MotionSample, comparedTo first: MotionSample) -> Bool {
        let limit = stillnessDegreesPerSecond * Double.pi / 180
        let gyro = sample.gyroRadiansPerSecond, reference = first.gyroRadiansPerSecond
        let accel = sample.accelMetersPerSecondSquared, gravity = first.accelMetersPerSecondSquared
        return abs(gyro.x - reference.x) <= limit && abs(gyro.y - reference.y) <= limit
            && abs(gyro.z - reference.z) <= limit
            && abs(accel.x - gravity.x) <= stillnessMetersPerSecondSquared
            && abs(accel.y - gravity.y) <= stillnessMetersPerSecondSquared
            && abs(accel.z - gravity.z) <= stillnessMetersPerSecondSquared
    }
}
