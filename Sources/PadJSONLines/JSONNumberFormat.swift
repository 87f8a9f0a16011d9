/// Numbers as they appear in padbridge's JSON lines: integers without a fraction, fractions with at most
/// six decimals (enough for every unit padbridge carries: 1/255 steps, 1/1919 of a touchpad, 1/16 °/s).
enum JSONNumberFormat {
    static func decimal(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let rounded = (value * 1_000_000).rounded() / 1_000_000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 {
            return String(Int64(rounded))
        }
        return "\(rounded)"
    }

    static func vector(_ vector: Vector3Components) -> String {
        "[\(decimal(vector.0)),\(decimal(vector.1)),\(decimal(vector.2))]"
    }

    typealias Vector3Components = (Double, Double, Double)
}
