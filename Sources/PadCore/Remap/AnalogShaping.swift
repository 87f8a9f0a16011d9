/// How raw deflection r (0...1, the radius of a stick or the travel of a trigger) becomes output, after the
/// deadzones have rescaled it to t (0...1): `curve(t)`. Always maps 0 to (at most) its start and 1 to 1.
public enum ResponseCurve: Sendable, Hashable {
    /// t^exponent: above 1 gives finer control near the centre, below 1 a quicker start. 1 is linear.
    case exponent(Double)
    /// Piecewise-linear through the points (x: input, y: output), x strictly increasing from 0 to 1,
    /// y non-decreasing within 0...1.
    case points([CurvePoint])

    public static let linear = ResponseCurve.exponent(1)
    /// Allowed exponents.
    public static let allowedExponents: ClosedRange<Double> = 0.1...10

    /// The curve at `t`, with `t` clamped to 0...1.
    public func value(at t: Double) -> Double {
        let t = min(1, max(0, t.isNaN ? 0 : t))
        switch self {
        case let .exponent(exponent):
            return exponent == 1 ? t : power(t, exponent)
        case let .points(points):
            guard let first = points.first else { return t }
            if t <= first.x { return first.y }
            for (left, right) in zip(points, points.dropFirst()) where t <= right.x {
                let span = right.x - left.x
                return span > 0 ? left.y + (right.y - left.y) * (t - left.x) / span : right.y
            }
            return points[points.count - 1].y
        }
    }
}

public struct CurvePoint: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// Shaping of one physical stick. All amounts are fractions of full deflection.
///
/// With r the stick's radius (0...1, clamped: corners of a square gate read as 1) and its direction kept:
/// 1. radial deadzone: r <= `deadzoneFraction` gives 0 (the stick is centred);
/// 2. outer deadzone: r >= 1 - `outerDeadzoneFraction` gives full deflection;
/// 3. between them, t = (r - deadzone) / (1 - outer - deadzone): the deadzone's edge maps to 0, so output
///    starts continuously from 0;
/// 4. response curve: c = curve(t);
/// 5. anti-deadzone: output = anti + (1 - anti) × c for r outside the deadzone, so the smallest movement
///    already reaches `antiDeadzoneFraction` (a game's own deadzone is jumped); inside the deadzone output is 0.
/// Then `invertX`/`invertY` negate an axis (-32768 becomes 32767).
public struct StickShaping: Sendable, Hashable {
    public var deadzoneFraction: Double
    public var outerDeadzoneFraction: Double
    public var antiDeadzoneFraction: Double
    public var curve: ResponseCurve
    public var invertX: Bool
    public var invertY: Bool

    public init(
        deadzoneFraction: Double = 0, outerDeadzoneFraction: Double = 0, antiDeadzoneFraction: Double = 0,
        curve: ResponseCurve = .linear, invertX: Bool = false, invertY: Bool = false
    ) {
        self.deadzoneFraction = deadzoneFraction
        self.outerDeadzoneFraction = outerDeadzoneFraction
        self.antiDeadzoneFraction = antiDeadzoneFraction
        self.curve = curve
        self.invertX = invertX
        self.invertY = invertY
    }

    /// No deadzones, linear: the radius is left alone (only inversion, if any, applies).
    public var shapesRadius: Bool {
        deadzoneFraction != 0 || outerDeadzoneFraction != 0 || antiDeadzoneFraction != 0 || curve != .linear
    }

    /// Output radius for input radius `r` (0...1).
    public func shapedRadius(_ r: Double) -> Double {
        let r = min(1, max(0, r.isNaN ? 0 : r))
        if r <= deadzoneFraction { return 0 }
        let liveSpan = 1 - outerDeadzoneFraction - deadzoneFraction
        let t = liveSpan > 0 ? min(1, (r - deadzoneFraction) / liveSpan) : 1
        return antiDeadzoneFraction + (1 - antiDeadzoneFraction) * curve.value(at: t)
    }

    /// Shapes one stick's raw values.
    public func shaped(x: Int16, y: Int16) -> (x: Int16, y: Int16) {
        var (outX, outY) = (x, y)
        if shapesRadius {
            let fx = AnalogScale.stickFraction(x)
            let fy = AnalogScale.stickFraction(y)
            let r = (fx * fx + fy * fy).squareRoot()
            if r == 0 {
                (outX, outY) = (0, 0)
            } else {
                let scale = shapedRadius(r) / r
                (outX, outY) = (AnalogScale.stickValue(fx * scale), AnalogScale.stickValue(fy * scale))
            }
        }
        if invertX { outX = AnalogScale.negated(outX) }
        if invertY { outY = AnalogScale.negated(outY) }
        return (outX, outY)
    }
}

/// Shaping of one physical trigger, fractions of full travel: travel <= `deadzoneFraction` gives 0,
/// travel >= 1 - `outerDeadzoneFraction` gives full, linear in between (the deadzone's edge maps to 0).
public struct TriggerShaping: Sendable, Hashable {
    public var deadzoneFraction: Double
    public var outerDeadzoneFraction: Double

    public init(deadzoneFraction: Double = 0, outerDeadzoneFraction: Double = 0) {
        self.deadzoneFraction = deadzoneFraction
        self.outerDeadzoneFraction = outerDeadzoneFraction
    }

    public var isIdentity: Bool { deadzoneFraction == 0 && outerDeadzoneFraction == 0 }

    public func shaped(_ value: Int16) -> Int16 {
        if isIdentity { return value }
        let travel = Double(max(0, value)) / Double(Int16.max)
        if travel <= deadzoneFraction { return 0 }
        let liveSpan = 1 - outerDeadzoneFraction - deadzoneFraction
        let t = liveSpan > 0 ? min(1, (travel - deadzoneFraction) / liveSpan) : 1
        return Int16((t * Double(Int16.max)).rounded())
    }
}

/// Conversions between `Int16` axis values and fractions. Stick fractions are value / 32767, clamped to -1...1.
enum AnalogScale {
    static func stickFraction(_ value: Int16) -> Double { max(-1, Double(value) / Double(Int16.max)) }

    static func stickValue(_ fraction: Double) -> Int16 {
        let clamped = min(1, max(-1, fraction.isNaN ? 0 : fraction))
        return Int16((clamped * Double(Int16.max)).rounded())
    }

    static func negated(_ value: Int16) -> Int16 { value == .min ? .max : -value }
}

/// x^y for x in 0...1 and y > 0, with the standard library only: exp(y × ln x) by range reduction and series.
func power(_ base: Double, _ exponent: Double) -> Double {
    if base <= 0 { return 0 }
    if base >= 1 { return 1 }
    return exponential(exponent * naturalLogarithm(base))
}

/// ln x for x > 0: x = m × 2^e with m in [1, 2), ln m by the atanh series (converges fast for m near 1).
func naturalLogarithm(_ x: Double) -> Double {
    let ln2 = 0.693_147_180_559_945_3
    var m = x.significand
    var e = Double(x.exponent)
    if m > 1.414_213_562_373_095 {
        m /= 2
        e += 1
    }
    let z = (m - 1) / (m + 1)
    let z2 = z * z
    var term = z
    var sum = 0.0
    var k = 1.0
    while k < 60 {
        sum += term / k
        term *= z2
        k += 2
    }
    return 2 * sum + e * ln2
}

/// e^x for x <= 0 (what `power` needs; also right for small positive x): e^x = 2^n × e^r, |r| <= ln2/2.
func exponential(_ x: Double) -> Double {
    if x < -745 { return 0 }
    let ln2 = 0.693_147_180_559_945_3
    let n = (x / ln2).rounded()
    let r = x - n * ln2
    var term = 1.0
    var sum = 1.0
    for k in 1...20 {
        term *= r / Double(k)
        sum += term
    }
    return Double(sign: .plus, exponent: Int(n), significand: 1) * sum
}
