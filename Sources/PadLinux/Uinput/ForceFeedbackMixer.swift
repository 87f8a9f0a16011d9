/// The force-feedback effects a game uploaded to a uinput pad, and the two-motor output they add up to — what the
/// kernel's ff-memless does for a real xpad pad, which uinput leaves to its owner.
///
/// Pure: time is passed in. Combination follows ff-memless: rumble effects add `strong·gain/0xFFFF` and
/// `weak·gain/0xFFFF`; periodic effects add `|magnitude|·gain/0x7FFF` to both motors; each motor clips at 0xFFFF.
/// `replay.delay` postpones the start, `replay.length` ends each play (0 = until stopped), and a play count above 1
/// replays the effect that many times. Envelopes (attack/fade) are not modelled.
struct ForceFeedbackMixer: Sendable {
    static let effectSlots = 16

    struct Effect: Sendable, Hashable {
        enum Waveform: Sendable, Hashable {
            case rumble(strong: UInt16, weak: UInt16)
            case periodic(magnitude: Int16)
        }

        var waveform: Waveform
        /// Milliseconds; 0 means "until stopped".
        var length: UInt16
        /// Milliseconds before the effect starts.
        var delay: UInt16
    }

    struct Output: Sendable, Hashable {
        var strong: UInt16
        var weak: UInt16
        static let off = Output(strong: 0, weak: 0)
    }

    private struct Slot: Sendable {
        var effect: Effect
        /// Plays left, including the current one; 0 = not started.
        var remainingPlays: Int32 = 0
        var playAt = MonotonicInstant(nanoseconds: 0)
        /// nil: plays until stopped.
        var stopAt: MonotonicInstant?

        var isStarted: Bool { remainingPlays > 0 }

        mutating func start(at now: MonotonicInstant) {
            playAt = now.adding(milliseconds: UInt64(effect.delay))
            stopAt = effect.length == 0 ? nil : playAt.adding(milliseconds: UInt64(effect.length))
        }
    }

    private var slots: [Int: Slot] = [:]
    /// 0...0xFFFF (FF_GAIN); starts at full gain.
    private(set) var gain: UInt16 = 0xFFFF

    /// Stores (or replaces) effect `id`. Replacing a started effect restarts its timing with the new parameters,
    /// which is how SDL changes rumble magnitudes. Returns false for an id outside the 16 slots.
    @discardableResult
    mutating func upload(id: Int, _ effect: Effect, now: MonotonicInstant) -> Bool {
        guard (0..<Self.effectSlots).contains(id) else { return false }
        if var slot = slots[id] {
            slot.effect = effect
            if slot.isStarted { slot.start(at: now) }
            slots[id] = slot
        } else {
            slots[id] = Slot(effect: effect)
        }
        return true
    }

    /// Removes effect `id`; a playing effect stops.
    mutating func erase(id: Int) {
        slots[id] = nil
    }

    /// EV_FF with code = id: `count` > 0 starts (that many plays), 0 stops.
    mutating func play(id: Int, count: Int32, now: MonotonicInstant) {
        guard var slot = slots[id] else { return }
        slot.remainingPlays = max(count, 0)
        if slot.isStarted { slot.start(at: now) }
        slots[id] = slot
    }

    mutating func setGain(_ gain: UInt16) {
        self.gain = gain
    }

    /// Ends plays whose length ran out by `now`, starting the next play of repeated effects.
    mutating func advance(to now: MonotonicInstant) {
        for (id, var slot) in slots where slot.isStarted {
            while slot.isStarted, let stopAt = slot.stopAt, stopAt <= now {
                slot.remainingPlays -= 1
                if slot.isStarted {
                    slot.playAt = stopAt.adding(milliseconds: UInt64(slot.effect.delay))
                    slot.stopAt = slot.playAt.adding(milliseconds: UInt64(slot.effect.length))
                }
            }
            slots[id] = slot
        }
    }

    /// The combined motor output at `now` (call `advance(to:)` first).
    func output(at now: MonotonicInstant) -> Output {
        var strong: UInt32 = 0
        var weak: UInt32 = 0
        let gain = UInt32(gain)
        for slot in slots.values where slot.isStarted && slot.playAt <= now {
            if let stopAt = slot.stopAt, stopAt <= now { continue }
            switch slot.effect.waveform {
            case let .rumble(strongMagnitude, weakMagnitude):
                strong = min(strong + UInt32(strongMagnitude) * gain / 0xFFFF, 0xFFFF)
                weak = min(weak + UInt32(weakMagnitude) * gain / 0xFFFF, 0xFFFF)
            case let .periodic(magnitude):
                let level = UInt32(magnitude.magnitude) * gain / 0x7FFF
                strong = min(strong + level, 0xFFFF)
                weak = min(weak + level, 0xFFFF)
            }
        }
        return Output(strong: UInt16(strong), weak: UInt16(weak))
    }

    /// When the output may next change by itself: the earliest pending start or end of a started effect.
    func nextDeadline(after now: MonotonicInstant) -> MonotonicInstant? {
        var earliest: MonotonicInstant?
        for slot in slots.values where slot.isStarted {
            let candidate = slot.playAt > now ? slot.playAt : slot.stopAt
            if let candidate, earliest.map({ candidate < $0 }) ?? true { earliest = candidate }
        }
        return earliest
    }
}
