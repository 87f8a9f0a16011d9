/// Incremental events between two snapshots: the libevdev idea of recovering state by diffing.
///
/// Laws (tested for random snapshots): `a.applying(SnapshotDiff.events(from: a, to: b)) == b`,
/// and `SnapshotDiff.events(from: a, to: a).isEmpty`.
///
/// Events come in a fixed order: buttons (in `Button.allCases` order), axes (in `Axis.allCases` order),
/// touch contacts 0 then 1, motion, battery.
public enum SnapshotDiff {
    /// Calls `body` once per changed control. Allocation-free: the hot path of every reader.
    @inlinable
    public static func forEachEvent<E: Error>(
        from old: PadSnapshot, to new: PadSnapshot, _ body: (PadEvent) throws(E) -> Void
    ) throws(E) {
        let changedButtons = old.buttons.rawValue ^ new.buttons.rawValue
        if changedButtons != 0 {
            for button in Button.allCases where changedButtons & button.bit != 0 {
                try body(.button(button, pressed: new.buttons.contains(button)))
            }
        }
        for axis in Axis.allCases where old[axis] != new[axis] {
            try body(.axis(axis, value: new[axis]))
        }
        if old.touches.first != new.touches.first { try body(.touch(contact: 0, new.touches.first)) }
        if old.touches.second != new.touches.second { try body(.touch(contact: 1, new.touches.second)) }
        if old.motion != new.motion { try body(.motion(new.motion)) }
        if old.battery != new.battery { try body(.battery(new.battery)) }
    }

    /// The events from `old` to `new`, collected.
    public static func events(from old: PadSnapshot, to new: PadSnapshot) -> [PadEvent] {
        var result: [PadEvent] = []
        forEachEvent(from: old, to: new) { result.append($0) }
        return result
    }
}
