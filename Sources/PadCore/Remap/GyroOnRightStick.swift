/// The pipeline's gyro aiming (`RemapProfile.gyro`): the gyroscope's rate, scaled per axis, added to the right stick
/// the mappings produced, while the enable button (if any) is held after toggles and turbo. Keeps no state.
struct GyroOnRightStick: RemapStage {
    let gyro: GyroToRightStick?

    init(gyro: GyroToRightStick?) { self.gyro = gyro }

    /// No gyro on the stick.
    var passesThroughUnchanged: Bool { gyro == nil }

    func apply(_ frame: inout RemapFrame, atMicroseconds _: UInt64) {
        guard let gyro, gyro.enableButton.map(frame.held.contains) ?? true else { return }
        let rate = frame.source.motion.gyroRadiansPerSecond
        frame.output.rightX = Self.adding(-rate.y * gyro.xDeflectionPerRadianPerSecond, to: frame.output.rightX)
        frame.output.rightY = Self.adding(-rate.x * gyro.yDeflectionPerRadianPerSecond, to: frame.output.rightY)
    }

    /// `value` plus `deflection` full stick deflections (clamped to ±2 of them, then to the axis' range); a deflection
    /// that is not finite adds nothing.
    static func adding(_ deflection: Double, to value: Int16) -> Int16 {
        guard deflection.isFinite else { return value }
        let sum = Double(value) + min(2, max(-2, deflection)) * Double(Int16.max)
        return Int16(min(Double(Int16.max), max(Double(Int16.min), sum.rounded())))
    }
}
