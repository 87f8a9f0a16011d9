/// A three-component vector in a named unit (see the property that holds it).
public struct Vector3: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable public init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    public static let zero = Vector3(x: 0, y: 0, z: 0)

    /// The component at `index`: 0 is x, 1 y, 2 z (any other index reads and writes z).
    @inlinable public subscript(index: Int) -> Double {
        get { index == 0 ? x : index == 1 ? y : z }
        set {
            switch index {
            case 0: x = newValue
            case 1: y = newValue
            default: z = newValue
            }
        }
    }
}

/// One motion-sensor reading.
public struct MotionSample: Sendable, Hashable {
    /// Angular velocity in radians per second (x pitch, y yaw, z roll).
    public var gyroRadiansPerSecond: Vector3
    /// Acceleration in metres per second squared, gravity included.
    public var accelMetersPerSecondSquared: Vector3
    /// The sensor's own clock in microseconds (wraps as the device's counter does).
    public var timestampMicroseconds: UInt64

    @inlinable public init(
        gyroRadiansPerSecond: Vector3 = .zero,
        accelMetersPerSecondSquared: Vector3 = .zero,
        timestampMicroseconds: UInt64 = 0
    ) {
        self.gyroRadiansPerSecond = gyroRadiansPerSecond
        self.accelMetersPerSecondSquared = accelMetersPerSecondSquared
        self.timestampMicroseconds = timestampMicroseconds
    }

    public static let still = MotionSample()
}

/// Standard gravity, for converting between g and m/s².
public let standardGravityMetersPerSecondSquared = 9.80665
