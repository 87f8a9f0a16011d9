/// The pipeline's timing stage: tap/hold buttons and chords (`RemapProfile.tapHold`, `.chords`). Given the buttons
/// held and the time, it says which buttons not to route through the map now, which to route as if held (a lone
/// chord member's replayed tap), which extra targets to press, and when it next changes on its own.
struct TimedPresses: RemapStage {
    struct Step {
        /// Buttons whose own mapping must not drive anything now.
        var withheld = ButtonSet()
        /// Buttons to route as held although they are not (a tap replayed).
        var replayed = ButtonSet()
        /// Targets pressed (tap/hold and chord outputs), in the routing table's terms.
        var targets: [OutputSlot] = []
        var wakeMicroseconds: UInt64?
    }

    private struct TapHoldEntry: Sendable {
        let button: Button
        let tap: [OutputSlot]
        let hold: [OutputSlot]
        let holdMicroseconds: UInt64
        var pressedSinceMicroseconds: UInt64?
        var holding = false
        var tapUntilMicroseconds: UInt64?
    }

    private enum MemberState: Sendable, Hashable {
        case idle
        /// Pressed at this time, waiting for the chord window: its own mapping withheld.
        case waiting(sinceMicroseconds: UInt64)
        /// Pressed alone past the window: its own mapping drives.
        case alone
        /// Part of a chord, or left over from one: withheld until released.
        case chorded
    }

    private struct ChordEntry: Sendable {
        let first: Button
        let second: Button
        let targets: [OutputSlot]
        var active = false
    }

    private var tapHolds: [TapHoldEntry]
    private var chords: [ChordEntry]
    private let members: [Button]
    private var memberStates: [Button: MemberState]
    private var memberTapUntil: [Button: UInt64] = [:]
    private let windowMicroseconds: UInt64

    init(profile: RemapProfile) {
        tapHolds = Button.allCases.compactMap { button in
            profile.tapHold[button].map { entry in
                TapHoldEntry(
                    button: button, tap: entry.tap.compactMap(OutputSlot.init), hold: entry.hold.compactMap(OutputSlot.init),
                    holdMicroseconds: entry.holdMicroseconds)
            }
        }
        chords = profile.chords.map { ChordEntry(first: $0.first, second: $0.second, targets: $0.targets.compactMap(OutputSlot.init)) }
        members = Button.allCases.filter { button in profile.chords.contains { $0.first == button || $0.second == button } }
        memberStates = Dictionary(uniqueKeysWithValues: members.map { ($0, MemberState.idle) })
        windowMicroseconds = profile.chordWindowMicroseconds
    }

    var isEmpty: Bool { tapHolds.isEmpty && chords.isEmpty }

    /// No tap/hold button and no chord.
    var passesThroughUnchanged: Bool { isEmpty }

    /// Runs `step` on the buttons held after toggles and turbo, for `TargetRouting` to read.
    mutating func apply(_ frame: inout RemapFrame, atMicroseconds now: UInt64) {
        frame.timing = step(held: frame.held, atMicroseconds: now)
        if let wake = frame.timing.wakeMicroseconds { frame.wake(atMicroseconds: wake) }
    }

    mutating func step(held: ButtonSet, atMicroseconds now: UInt64) -> Step {
        var result = Step()
        func wake(at time: UInt64) { result.wakeMicroseconds = min(result.wakeMicroseconds ?? .max, time) }

        for index in tapHolds.indices {
            var entry = tapHolds[index]
            result.withheld.insert(entry.button)
            if held.contains(entry.button) {
                let since = entry.pressedSinceMicroseconds ?? now
                entry.pressedSinceMicroseconds = since
                if !entry.holding, now >= since, now - since >= entry.holdMicroseconds { entry.holding = true }
                if entry.holding { result.targets += entry.hold } else { wake(at: since + entry.holdMicroseconds) }
            } else {
                if entry.pressedSinceMicroseconds != nil, !entry.holding {
                    entry.tapUntilMicroseconds = now + TapHold.tapPressMicroseconds
                }
                entry.pressedSinceMicroseconds = nil
                entry.holding = false
            }
            if let until = entry.tapUntilMicroseconds {
                if now < until {
                    result.targets += entry.tap
                    wake(at: until)
                } else {
                    entry.tapUntilMicroseconds = nil
                }
            }
            tapHolds[index] = entry
        }

        guard !chords.isEmpty else { return result }
        for button in members {
            let pressed = held.contains(button)
            switch memberStates[button] ?? .idle {
            case .idle:
                if pressed { memberStates[button] = .waiting(sinceMicroseconds: now) }
            case let .waiting(since):
                if !pressed {
                    // Released within the window and no partner came: its own mapping, tapped.
                    memberStates[button] = .idle
                    memberTapUntil[button] = now + TapHold.tapPressMicroseconds
                } else if now >= since, now - since >= windowMicroseconds {
                    memberStates[button] = .alone
                }
            case .alone, .chorded:
                if !pressed { memberStates[button] = .idle }
            }
        }
        for index in chords.indices {
            let chord = chords[index]
            if chord.active {
                if held.contains(chord.first) && held.contains(chord.second) { continue }
                chords[index].active = false
            } else if case .waiting = memberStates[chord.first], case .waiting = memberStates[chord.second] {
                chords[index].active = true
                memberStates[chord.first] = .chorded
                memberStates[chord.second] = .chorded
            }
        }
        for chord in chords where chord.active { result.targets += chord.targets }
        for button in members {
            switch memberStates[button] ?? .idle {
            case let .waiting(since):
                result.withheld.insert(button)
                wake(at: since + windowMicroseconds)
            case .chorded:
                result.withheld.insert(button)
            case .idle, .alone:
                break
            }
            if let until = memberTapUntil[button] {
                if now < until {
                    result.replayed.insert(button)
                    wake(at: until)
                } else {
                    memberTapUntil[button] = nil
                }
            }
        }
        return result
    }
}
