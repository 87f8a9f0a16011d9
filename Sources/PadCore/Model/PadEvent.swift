/// One incremental change of a pad's state. What `SnapshotDiff` produces and `PadSnapshot.apply` consumes.
public enum PadEvent: Sendable, Hashable {
    case button(Button, pressed: Bool)
    case axis(Axis, value: Int16)
    /// `contact` is 0 or 1.
    case touch(contact: Int, TouchContact)
    case motion(MotionSample)
    case battery(BatteryState)
}

extension PadSnapshot {
    /// Applies one event. Out-of-range touch contacts are ignored; trigger values are clamped to 0...32767.
    @inlinable public mutating func apply(_ event: PadEvent) {
        switch event {
        case let .button(button, pressed): buttons.set(button, pressed: pressed)
        case let .axis(axis, value): self[axis] = value
        case let .touch(contact, state): touches[contact] = state
        case let .motion(sample): motion = sample
        case let .battery(state): battery = state
        }
    }

    public func applying(_ events: some Sequence<PadEvent>) -> PadSnapshot {
        var copy = self
        for event in events { copy.apply(event) }
        return copy
    }
}
