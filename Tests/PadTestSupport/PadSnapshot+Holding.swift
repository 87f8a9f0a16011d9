public import PadCore

extension PadSnapshot {
    /// The neutral state with `buttons` held and the left stick at `leftX`.
    public static func holding(_ buttons: Button..., leftX: Int16 = 0) -> PadSnapshot {
        var snapshot = PadSnapshot.neutral
        for button in buttons { snapshot[button] = true }
        snapshot.leftX = leftX
        return snapshot
    }
}
