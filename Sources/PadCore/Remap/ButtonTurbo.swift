/// The pipeline's turbo (`RemapProfile.turbo`): a turbo button held (after toggles) is pressed for the first half of
/// each period and released for the second, the first period starting when it is pressed. Asks to be woken at each
/// edge while held, and not otherwise.
struct ButtonTurbo: RemapStage {
    private struct Entry: Sendable {
        let button: Button
        /// At least 2, so both halves last a microsecond or more.
        let periodMicroseconds: UInt64
        var heldSinceMicroseconds: UInt64?
    }

    /// In `Button.allCases` order; updated in place (no allocation per frame).
    private var entries: [Entry]

    init(turbo: [Button: Turbo]) {
        entries = Button.allCases.compactMap { button in
            turbo[button].map { Entry(button: button, periodMicroseconds: max(2, $0.periodMicroseconds)) }
        }
    }

    /// No turbo button.
    var passesThroughUnchanged: Bool { entries.isEmpty }

    mutating func apply(_ frame: inout RemapFrame, atMicroseconds now: UInt64) {
        for index in entries.indices {
            let button = entries[index].button
            guard frame.held.contains(button) else {
                entries[index].heldSinceMicroseconds = nil
                continue
            }
            let since = entries[index].heldSinceMicroseconds ?? now
            entries[index].heldSinceMicroseconds = since
            let period = entries[index].periodMicroseconds
            let elapsed = now >= since ? now - since : 0
            let phase = elapsed % period
            let pressedPart = period / 2
            if phase >= pressedPart { frame.held.remove(button) }
            frame.wake(atMicroseconds: now - phase + (phase < pressedPart ? pressedPart : period))
        }
    }
}
