import RealModule

/// Flick stick (`[flick] stick = "right"`, JoyShockMapper's): pushing the stick to its edge turns the game to the
/// direction it points (forward 0 °, right 90 °, behind 180 °, left −90 °) over `flickMicroseconds`; then turning the
/// stick along the edge turns the game by as much; letting go stops. In mouse counts, `countsPerTurn` to a full turn.
public struct FlickStickSettings: Sendable, Hashable {
    public var countsPerTurn: Double
    /// How long a flick takes.
    public var flickMicroseconds: UInt64
    /// The deflection (fraction of full) at which the stick is at its edge: a flick starts.
    public var edge: Double
    /// The deflection below which the stick counts as let go again.
    public var release: Double

    public init(countsPerTurn: Double, flickMicroseconds: UInt64 = 100_000, edge: Double = 0.9, release: Double = 0.7) {
        self.countsPerTurn = countsPerTurn
        self.flickMicroseconds = flickMicroseconds
        self.edge = edge
        self.release = release
    }
}

public struct FlickStick: Sendable {
    public var settings: FlickStickSettings
    /// The flick under way: when it started, its counts, and how many have been given.
    private var flick: (startMicroseconds: UInt64, counts: Double, given: Double)?
    /// The stick's direction (degrees) while it is held at the edge.
    private var heldAngle: Double?
    private var carried = 0.0

    public init(settings: FlickStickSettings) {
        self.settings = settings
    }

    /// The horizontal mouse counts (positive: turn right) for the stick at (`x`, `y`) (−1...1 each, y down positive,
    /// as `PadSnapshot`'s axes run) at `timeMicroseconds` (a monotonic clock).
    public mutating func counts(x: Double, y: Double, timeMicroseconds now: UInt64) -> Int {
        let deflection = (x * x + y * y).squareRoot()
        let angle = Self.degrees(atan2Of: x, -y)
        var turn = 0.0
        if let held = heldAngle {
            if deflection < settings.release {
                heldAngle = nil
            } else {
                turn += Self.wrapped(angle - held) / 360 * settings.countsPerTurn
                heldAngle = angle
            }
        } else if deflection >= settings.edge {
            heldAngle = angle
            flick = (now, angle / 360 * settings.countsPerTurn, 0)
        }
        if let current = flick {
            let elapsed = now >= current.startMicroseconds ? now - current.startMicroseconds : 0
            let fraction = settings.flickMicroseconds == 0 ? 1 : min(Double(elapsed) / Double(settings.flickMicroseconds), 1)
            let due = current.counts * fraction
            turn += due - current.given
            flick = fraction >= 1 ? nil : (current.startMicroseconds, current.counts, due)
        }
        carried += turn
        let whole = carried.rounded(.towardZero)
        carried -= whole
        return Int(whole)
    }

    /// Whether a flick is still being given out (the caller keeps calling while it is, even if the stick is still).
    public var isFlicking: Bool { flick != nil }

    /// An angle in (−180, 180].
    static func wrapped(_ degrees: Double) -> Double {
        var angle = degrees.truncatingRemainder(dividingBy: 360)
        if angle > 180 { angle -= 360 }
        if angle <= -180 { angle += 360 }
        return angle
    }

    /// The direction of (`x`, `forward`) in degrees, clockwise from forward.
    static func degrees(atan2Of x: Double, _ forward: Double) -> Double {
        guard x != 0 || forward != 0 else { return 0 }
        return Double.atan2(y: x, x: forward) * 180 / Double.pi
    }
}
