import PadCore
import Testing

/// Gyro aiming in real-world units (issue 28), on the fake clock: samples with the sensor's own timestamps.
@Suite struct GyroMouseTests {
    static let radiansPerDegree = Double.pi / 180
    static let gravityUp = Vector3(x: 0, y: 9.80665, z: 0)   // flat on a table: "up" is the pad's y

    /// `count` samples `stepMicroseconds` apart turning at `yaw` and `pitch` (°/s), the first at `start`.
    static func samples(
        yaw: Double = 0, pitch: Double = 0, roll: Double = 0, count: Int, stepMicroseconds: UInt64 = 4_000,
        start: UInt64 = 1_000, gravity: Vector3 = gravityUp
    ) -> [MotionSample] {
        (0..<count).map { index in
            MotionSample(
                gyroRadiansPerSecond: Vector3(x: pitch * radiansPerDegree, y: yaw * radiansPerDegree, z: roll * radiansPerDegree),
                accelMetersPerSecondSquared: gravity, timestampMicroseconds: start + UInt64(index) * stepMicroseconds)
        }
    }

    static func total(_ mouse: inout GyroMouse, _ samples: [MotionSample], bias: Vector3 = .zero) -> (x: Int, y: Int) {
        var sum = (x: 0, y: 0)
        for sample in samples {
            let counts = mouse.counts(for: sample, arrivalMicroseconds: sample.timestampMicroseconds, bias: bias)
            sum.x += counts.x
            sum.y += counts.y
        }
        return sum
    }

    @Test func aQuarterTurnOfThePadIsAQuarterTurnInTheGame() {
        // 90 °/s for 1 s of the sensor's clock: 251 samples 4 ms apart, the first only starting the clock.
        var mouse = GyroMouse(settings: GyroMouseSettings(countsPerTurn: 3600, sensitivity: 1))
        let left = Self.total(&mouse, Self.samples(yaw: 90, count: 251))
        #expect(abs(left.x - -900) <= 1 && left.y == 0, "turning left moves the pointer left: \(left)")
        var up = GyroMouse(settings: GyroMouseSettings(countsPerTurn: 3600, sensitivity: 2))
        let tilted = Self.total(&up, Self.samples(pitch: 45, count: 251))
        #expect(tilted.x == 0 && abs(tilted.y - -900) <= 1, "tilting the front up moves the pointer up: \(tilted)")
    }

    @Test func slowTurnsLoseLessThanACountOverTenThousandReports() {
        // 1 °/s is 0.04 counts a report at 3600 a turn: every fraction is carried, none dropped.
        var mouse = GyroMouse(settings: GyroMouseSettings(countsPerTurn: 3600))
        let moved = Self.total(&mouse, Self.samples(yaw: -1, count: 10_001))
        let exact = 1.0 * 40.0 * 3600 / 360   // 10,000 steps of 4 ms at 1 °/s: 40 °, 400 counts
        #expect(Double(moved.x) <= exact && exact - Double(moved.x) < 1, "\(moved.x) of \(exact)")
    }

    @Test func theSensorsClockCountsNotWhenReportsArrive() {
        // Two reports held up and delivered together: their own timestamps still say 4 ms each.
        var mouse = GyroMouse(settings: GyroMouseSettings(countsPerTurn: 360_000))
        let samples = Self.samples(yaw: -100, count: 3)
        _ = mouse.counts(for: samples[0], arrivalMicroseconds: 0)
        let late = mouse.counts(for: samples[1], arrivalMicroseconds: 50_000)
        let atOnce = mouse.counts(for: samples[2], arrivalMicroseconds: 50_001)
        #expect(abs(late.x - 400) <= 1 && abs(atOnce.x - 400) <= 1, "100 °/s for 4 ms is 0.4 ° = 400 counts: \(late), \(atOnce)")
    }

    @Test func playerSpaceTurnsAboutGravityWhenThePadIsHeldTilted() {
        // The pad tilted back 60 ° (its face toward the player): "up" is mostly its z. A turn of the body by 30 °/s
        // about the vertical shows on the pad's y and z; player space reads it as the turn it is, local space not.
        let cosine = 0.5, sine = 0.8660254037844386   // cos 60 °, sin 60 °
        let gravity = Vector3(x: 0, y: 9.80665 * cosine, z: 9.80665 * sine)
        let samples = (0..<251).map { index in
            MotionSample(
                gyroRadiansPerSecond: Vector3(x: 0, y: 30 * cosine * Self.radiansPerDegree, z: 30 * sine * Self.radiansPerDegree),
                accelMetersPerSecondSquared: gravity, timestampMicroseconds: 1_000 + UInt64(index) * 4_000)
        }
        var player = GyroMouse(settings: GyroMouseSettings(countsPerTurn: 3600, space: .player))
        var local = GyroMouse(settings: GyroMouseSettings(countsPerTurn: 3600, space: .local))
        #expect(abs(Self.total(&player, samples).x - -300) <= 1, "30 ° of turn: 300 counts")
        #expect(abs(Self.total(&local, samples).x - -150) <= 1, "local space sees only the pad's y: half of it")
    }

    @Test func accelerationBlendsBetweenTwoSensitivities() {
        let settings = GyroMouseSettings(
            countsPerTurn: 3600, sensitivity: 1,
            acceleration: .init(lowerSpeedDegreesPerSecond: 100, upperSpeedDegreesPerSecond: 300, upperSensitivity: 3))
        for (speed, expected) in [(50.0, 500.0), (200.0, 4000.0), (400.0, 12000.0)] {
            var mouse = GyroMouse(settings: settings)
            let moved = Self.total(&mouse, Self.samples(yaw: -speed, count: 251))
            // 1 s at `speed`: speed × sensitivity degrees, 10 counts a degree (sensitivity 1, 2, 3)
            #expect(abs(Double(moved.x) - expected) <= 1, "\(speed) °/s: \(moved.x)")
        }
    }

    @Test func tighteningStillsSensorNoiseButNotATurn() {
        // +0.4 and −0.1 °/s in turn for 4 s: 0.6 ° (6 counts) of drift as it comes; under 5 °/s of tightening each
        // is scaled by its speed / 5, which leaves 0.06 °.
        let noise = (0..<1001).map { index in
            MotionSample(
                gyroRadiansPerSecond: Vector3(x: 0, y: (index % 2 == 0 ? 0.4 : -0.1) * Self.radiansPerDegree, z: 0),
                accelMetersPerSecondSquared: Self.gravityUp, timestampMicroseconds: UInt64(index) * 4_000 + 1)
        }
        var plain = GyroMouse(settings: GyroMouseSettings(countsPerTurn: 3600))
        #expect(abs(Self.total(&plain, noise).x) >= 5, "the noise moves the pointer untightened")
        let settings = GyroMouseSettings(countsPerTurn: 3600, tighteningDegreesPerSecond: 5)
        var noisy = GyroMouse(settings: settings)
        #expect(Self.total(&noisy, noise) == (0, 0))
        var turning = GyroMouse(settings: settings)
        #expect(abs(Self.total(&turning, Self.samples(yaw: -90, count: 251)).x - 900) <= 1)
    }

    @Test func smoothingCalmsSmallMovementsOnlyAndKeepsTheirSum() {
        // ±4 °/s in turn (a hand's tremor): 16 counts a step either way at 1000 counts a degree; averaged over 20 ms
        // below 5 °/s, a fifth of that at most. A 90 °/s turn is above the threshold and comes through as it is.
        let tremor = (0..<101).map { index in
            MotionSample(
                gyroRadiansPerSecond: Vector3(x: 0, y: (index % 2 == 0 ? 4 : -4) * Self.radiansPerDegree, z: 0),
                accelMetersPerSecondSquared: Self.gravityUp, timestampMicroseconds: UInt64(index) * 4_000 + 1)
        }
        func steps(_ settings: GyroMouseSettings) -> [Int] {
            var mouse = GyroMouse(settings: settings)
            return tremor.map { mouse.counts(for: $0, arrivalMicroseconds: $0.timestampMicroseconds).x }
        }
        let plain = steps(GyroMouseSettings(countsPerTurn: 360_000))
        let smooth = steps(GyroMouseSettings(
            countsPerTurn: 360_000, smoothingDegreesPerSecond: 10, smoothingWindowMicroseconds: 20_000))
        #expect(plain.dropFirst().allSatisfy { abs($0) >= 15 }, "\(plain.prefix(6))")
        #expect(smooth.dropFirst(5).allSatisfy { abs($0) <= 4 }, "once the window is full: \(smooth.prefix(8))")
        var fast = GyroMouse(settings: GyroMouseSettings(
            countsPerTurn: 3600, smoothingDegreesPerSecond: 10, smoothingWindowMicroseconds: 20_000))
        #expect(abs(Self.total(&fast, Self.samples(yaw: -90, count: 251)).x - 900) <= 1)
    }

    @Test func restingDriftIsMeasuredWhenThePadLiesStillAndRemoved() {
        // 0.3 °/s of bias: 6 counts in 2 s at 3600 a turn, uncalibrated; none once the pad has lain still for 3 s.
        let resting = Self.samples(yaw: 0.3, count: 1_001)   // 4 s
        var calibration = RestingGyroCalibration()
        for sample in resting { calibration.add(sample, stepMicroseconds: 4_000) }
        #expect(calibration.isCalibrated)
        let later = Self.samples(yaw: 0.3, count: 501, start: 5_000_000)
        var uncalibrated = GyroMouse(settings: GyroMouseSettings(countsPerTurn: 3600))
        #expect((-6)...(-5) ~= Self.total(&uncalibrated, later).x, "0.6 ° of drift")
        var calibrated = GyroMouse(settings: GyroMouseSettings(countsPerTurn: 3600))
        #expect(Self.total(&calibrated, later, bias: calibration.bias) == (0, 0))
    }

    @Test func movementRestartsTheStillnessAndTheButtonCalibratesAtOnce() {
        var calibration = RestingGyroCalibration()
        for (index, sample) in Self.samples(yaw: 0.3, count: 700).enumerated() {
            // a nudge after 2 s: the 3 s of stillness start again
            let nudged = index == 500 ? MotionSample(
                gyroRadiansPerSecond: Vector3(x: 0, y: 20 * Self.radiansPerDegree, z: 0),
                accelMetersPerSecondSquared: Self.gravityUp, timestampMicroseconds: sample.timestampMicroseconds) : sample
            calibration.add(nudged, stepMicroseconds: 4_000)
        }
        #expect(!calibration.isCalibrated, "no 3 s of stillness yet")
        calibration.beginCalibrating()
        for sample in Self.samples(yaw: -0.5, count: 10) { calibration.add(sample, stepMicroseconds: 4_000) }
        calibration.endCalibrating()
        #expect(calibration.isCalibrated && abs(calibration.bias.y - -0.5 * Self.radiansPerDegree) < 1e-12)
    }
}

@Suite struct FlickStickTests {
    static func run(_ flick: inout FlickStick, _ positions: [(x: Double, y: Double)], stepMicroseconds: UInt64 = 4_000,
                    start: UInt64 = 10_000) -> [Int] {
        positions.enumerated().map { index, position in
            flick.counts(x: position.x, y: position.y, timeMicroseconds: start + UInt64(index) * stepMicroseconds)
        }
    }

    @Test func aFlickToTheRightTurnsAQuarterWithinTheFlickTime() {
        var flick = FlickStick(settings: FlickStickSettings(countsPerTurn: 3600, flickMicroseconds: 100_000))
        // pushed right and held: 100 ms is 25 steps of 4 ms after the push
        let counts = Self.run(&flick, Array(repeating: (1.0, 0.0), count: 40))
        #expect(counts.prefix(26).reduce(0, +) == 900, "\(counts)")
        #expect(counts.dropFirst(26).allSatisfy { $0 == 0 }, "held still at the edge: no more turn")
        #expect(counts[1] > 0 && counts[1] < 900, "spread over the flick time, not at once")
    }

    @Test func flicksPointWhereTheStickPoints() {
        for (position, expected) in [((0.0, 1.0), 1800), ((-1.0, 0.0), -900), ((0.0, -1.0), 0), ((0.7071, -0.7071), 450)] {
            var flick = FlickStick(settings: FlickStickSettings(countsPerTurn: 3600))
            let total = Self.run(&flick, Array(repeating: position, count: 30)).reduce(0, +)
            #expect(abs(total - expected) <= 1, "stick at \(position): \(total)")
        }
    }

    @Test func turningAlongTheEdgeTurnsByTheRotationAndLettingGoStops() {
        var flick = FlickStick(settings: FlickStickSettings(countsPerTurn: 3600, flickMicroseconds: 0))
        // forward (no flick), then half a turn clockwise along the edge in 5 ° steps, then let go and turn back
        var positions: [(x: Double, y: Double)] = [(0, -1)]
        for degrees in stride(from: 5.0, through: 180, by: 5) {
            let radians = degrees * Double.pi / 180
            positions.append((x: Self.sine(radians), y: -Self.cosine(radians)))
        }
        let turned = Self.run(&flick, positions).reduce(0, +)
        #expect(abs(turned - 1800) <= 1, "half a turn along the edge: \(turned)")
        let released = Self.run(&flick, [(0, 0.2), (0.5, 0.2), (-0.9, -0.5)].map { (x: $0.0, y: $0.1) })
        #expect(released[0] == 0 && released[1] == 0, "let go: no turn")
    }

    // sin and cos by their series: the test's own arithmetic, not the code under test's.
    static func sine(_ x: Double) -> Double {
        var term = x, sum = 0.0, n = 1.0
        for _ in 0..<20 { sum += term; term *= -x * x / ((n + 1) * (n + 2)); n += 2 }
        return sum
    }

    static func cosine(_ x: Double) -> Double { sine(x + Double.pi / 2) }
}
