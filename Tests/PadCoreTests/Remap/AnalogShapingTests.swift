@testable import PadCore
import Testing

@Suite struct AnalogShapingTests {
    static let shapings: [StickShaping] = [
        StickShaping(deadzoneFraction: 0.1),
        StickShaping(deadzoneFraction: 0.1, outerDeadzoneFraction: 0.05),
        StickShaping(deadzoneFraction: 0.15, outerDeadzoneFraction: 0.1, curve: .exponent(2)),
        StickShaping(deadzoneFraction: 0.05, curve: .exponent(0.5)),
        StickShaping(deadzoneFraction: 0.1, curve: .points([.init(x: 0, y: 0), .init(x: 0.5, y: 0.3), .init(x: 1, y: 1)])),
        StickShaping(deadzoneFraction: 0.1, antiDeadzoneFraction: 0.2),
    ]
    static let angles: [Double] = [0, 0.4, 1.3, 2.2, 3.1, 4, 5.5]

    @Test(arguments: shapings, angles)
    func insideTheRadialDeadzoneIsCentred(shaping: StickShaping, angle: Double) {
        for step in 0..<20 {  // strictly inside: the edge itself rounds either way once in Int16
            let radius = shaping.deadzoneFraction * Double(step) / 20
            let (x, y) = stickValues(radius: radius, angle: angle)
            let shaped = shaping.shaped(x: x, y: y)
            #expect(shaped.x == 0 && shaped.y == 0, "radius \(radius)")
        }
    }

    @Test(arguments: shapings)
    func radiusIsMonotonicContinuousAtTheEdgeAndFullBeyondTheOuterDeadzone(shaping: StickShaping) {
        var previous = 0.0
        for step in 0...1000 {
            let r = Double(step) / 1000
            let shaped = shaping.shapedRadius(r)
            #expect(shaped >= previous - 1e-12, "not monotonic at \(r)")
            #expect((0...1).contains(shaped))
            previous = shaped
        }
        let justOutside = shaping.shapedRadius(shaping.deadzoneFraction + 1e-12)
        #expect(abs(justOutside - shaping.antiDeadzoneFraction) < 1e-4, "the deadzone's edge maps to the anti-deadzone (0 without)")
        #expect(shaping.shapedRadius(1 - shaping.outerDeadzoneFraction) == 1)
        #expect(shaping.shapedRadius(1) == 1)
    }

    @Test(arguments: shapings, angles)
    func directionIsKept(shaping: StickShaping, angle: Double) {
        let (x, y) = stickValues(radius: 0.7, angle: angle)
        let shaped = shaping.shaped(x: x, y: y)
        // Cross product of input and output directions is ~0 and they point the same way.
        let cross = Double(x) * Double(shaped.y) - Double(y) * Double(shaped.x)
        let dot = Double(x) * Double(shaped.x) + Double(y) * Double(shaped.y)
        #expect(abs(cross) / (Double(Int16.max) * Double(Int16.max)) < 1e-3)
        #expect(dot > 0)
    }

    @Test(arguments: [0.1, 0.5, 1, 1.5, 2, 3, 10] as [Double])
    func exponentCurveMatchesRepeatedMultiplicationAndSquareRoots(exponent: Double) {
        for step in 0...100 {
            let t = Double(step) / 100
            let value = ResponseCurve.exponent(exponent).value(at: t)
            let expected: Double =
                switch exponent {
                case 0.5: t.squareRoot()
                case 1.5: t * t.squareRoot()
                case 2: t * t
                case 3: t * t * t
                case 10: (0..<10).reduce(1) { product, _ in product * t }
                case 0.1: value  // checked below: value^10 == t
                default: t
                }
            #expect(abs(value - expected) < 1e-12, "t \(t)")
            if exponent == 0.1, t > 0 {
                // value^10 == t
                #expect(abs((0..<10).reduce(1.0) { product, _ in product * value } - t) < 1e-9)
            }
        }
    }

    @Test func pointsCurveInterpolatesLinearly() {
        let curve = ResponseCurve.points([.init(x: 0, y: 0), .init(x: 0.5, y: 0.3), .init(x: 1, y: 1)])
        #expect(abs(curve.value(at: 0.25) - 0.15) < 1e-12)
        #expect(abs(curve.value(at: 0.75) - 0.65) < 1e-12)
        #expect(curve.value(at: 0.5) == 0.3)
        #expect(curve.value(at: 1) == 1)
        #expect(curve.value(at: 2) == 1)
        #expect(curve.value(at: -1) == 0)
    }

    @Test func outerDeadzoneGivesFullDeflectionOnTheStick() {
        let shaping = StickShaping(outerDeadzoneFraction: 0.1)
        #expect(shaping.shaped(x: 29500, y: 0) == (x: 32767, y: 0))
        #expect(shaping.shaped(x: 0, y: -29500) == (x: 0, y: -32767))
    }

    @Test func invertingTheMinimumGivesTheMaximum() {
        let shaping = StickShaping(invertX: true, invertY: true)
        #expect(shaping.shaped(x: .min, y: 100) == (x: .max, y: -100))
    }

    private func stickValues(radius: Double, angle: Double) -> (Int16, Int16) {
        // cos/sin by series: no Foundation in PadCore's tests either.
        func cosine(_ a: Double) -> Double {
            var term = 1.0, sum = 1.0
            for k in 1...20 {
                term *= -a * a / Double((2 * k - 1) * (2 * k))
                sum += term
            }
            return sum
        }
        let x = radius * cosine(angle)
        let y = radius * cosine(angle - Double.pi / 2)
        return (Int16((x * 32767).rounded()), Int16((y * 32767).rounded()))
    }
}
