/// The pipeline's thresholds (`RemapProfile.thresholdFractions`): each one-sided slot (a trigger or a stick half) of
/// the shaped snapshot is latched beyond its threshold, and released only once it falls
/// `RemapPipeline.hysteresisFraction` below it (at most half the threshold), so a trigger resting at the threshold
/// does not chatter. Writes `RemapFrame.magnitudes` and `.thresholdLatches`, which the layers' hold controls and the
/// routes of one-sided sources to buttons read.
struct PressThresholds: RemapStage {
    /// Per `OneSidedSlot.index`.
    private let fractions: [Double]
    private(set) var latches = SlotLatches()

    init(thresholdFractions: [RemapControl: Double]) {
        fractions = OneSidedSlot.all.map { thresholdFractions[$0.control] ?? RemapProfile.defaultThresholdFraction }
    }

    /// Always: a latch changes no control by itself (the hold controls and the routes that read it do, and say so).
    var passesThroughUnchanged: Bool { true }

    mutating func apply(_ frame: inout RemapFrame, atMicroseconds _: UInt64) {
        for slot in OneSidedSlot.all {
            let magnitude = slot.magnitude(in: frame.shaped)
            frame.magnitudes[slot.index] = magnitude
            let fraction = Double(magnitude) / Double(slot.fullMagnitude)
            let threshold = fractions[slot.index]
            if latches[slot.index] {
                if fraction < threshold - min(RemapPipeline.hysteresisFraction, threshold / 2) {
                    latches[slot.index] = false
                }
            } else if fraction >= threshold {
                latches[slot.index] = true
            }
        }
        frame.thresholdLatches = latches
    }
}
