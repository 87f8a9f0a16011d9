/// The pipeline's first stage: each physical stick and trigger shaped (`StickShaping`, `TriggerShaping`), then the
/// sticks swapped (`RemapProfile.swapSticks`). Writes `RemapFrame.shaped`; keeps no state.
struct StickAndTriggerShaping: RemapStage {
    let leftStick: StickShaping
    let rightStick: StickShaping
    let swapSticks: Bool
    let leftTrigger: TriggerShaping
    let rightTrigger: TriggerShaping

    init(profile: RemapProfile) {
        leftStick = profile.leftStick
        rightStick = profile.rightStick
        swapSticks = profile.swapSticks
        leftTrigger = profile.leftTrigger
        rightTrigger = profile.rightTrigger
    }

    /// No deadzone, curve, inversion or swap.
    var passesThroughUnchanged: Bool {
        !swapSticks && [leftStick, rightStick].allSatisfy { !$0.shapesRadius && !$0.invertX && !$0.invertY }
            && leftTrigger.isIdentity && rightTrigger.isIdentity
    }

    func apply(_ frame: inout RemapFrame, atMicroseconds _: UInt64) {
        let source = frame.source
        (frame.shaped.leftX, frame.shaped.leftY) = leftStick.shaped(x: source.leftX, y: source.leftY)
        (frame.shaped.rightX, frame.shaped.rightY) = rightStick.shaped(x: source.rightX, y: source.rightY)
        if swapSticks {
            swap(&frame.shaped.leftX, &frame.shaped.rightX)
            swap(&frame.shaped.leftY, &frame.shaped.rightY)
        }
        frame.shaped.leftTrigger = leftTrigger.shaped(source.leftTrigger)
        frame.shaped.rightTrigger = rightTrigger.shaped(source.rightTrigger)
    }
}
