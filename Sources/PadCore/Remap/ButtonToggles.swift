/// The pipeline's toggles (`RemapProfile.toggles`): a press of a toggle button latches it on, the next press off.
/// Acts on the physical buttons, before turbo and the map. Turns `RemapFrame.held`'s toggle buttons into their latches.
struct ButtonToggles: RemapStage {
    let toggles: ButtonSet
    /// The toggle buttons latched on.
    private(set) var latched = ButtonSet()

    init(toggles: ButtonSet) { self.toggles = toggles }

    /// No toggle button.
    var passesThroughUnchanged: Bool { toggles.isEmpty }

    mutating func apply(_ frame: inout RemapFrame, atMicroseconds _: UInt64) {
        latched.rawValue ^= frame.newlyPressed.rawValue & toggles.rawValue
        frame.held = ButtonSet(
            rawValue: (frame.held.rawValue & ~toggles.rawValue) | (latched.rawValue & toggles.rawValue))
    }
}
