import CPadLinux
import Glibc
import PadCore
@testable import PadLinux
import Testing

@Suite("Xbox 360 pad state mapping")
struct XboxPadStateTests {
    @Test(arguments: [(Int16(0), Int32(0)), (1, 0), (64, 0), (65, 1), (16383, 127), (16384, 128), (32767, 255), (-5, 0)])
    func triggerScaling(value: Int16, expected: Int32) {
        #expect(XboxPadState.triggerByte(value) == expected)
    }

    @Test func sticksPassThroughUnchanged() {
        let state = XboxPadState(PadSnapshot(leftX: -32768, leftY: 32767, rightX: 1, rightY: -1))
        #expect(Array(state.axes[0..<4]) == [-32768, 32767, 1, -1])
    }

    @Test(arguments: [
        ([Button.dpup], Int32(0), Int32(-1)), ([.dpdown], 0, 1), ([.dpleft], -1, 0), ([.dpright], 1, 0),
        ([.dpup, .dpright], 1, -1), ([.dpup, .dpdown], 0, 0), ([.dpleft, .dpright], 0, 0), ([], 0, 0),
    ])
    func dpadBecomesTheHat(buttons: [Button], x: Int32, y: Int32) {
        let state = XboxPadState(PadSnapshot(buttons: ButtonSet(buttons)))
        #expect(state.axes[6] == x && state.axes[7] == y)
        #expect(!state.keys.contains(true))
    }

    @Test func buttonsMapToXpadKeys() {
        let all = XboxPadState(PadSnapshot(buttons: ButtonSet(Button.allCases)))
        #expect(all.keys.allSatisfy { $0 })
        let guide = XboxPadState(PadSnapshot(buttons: ButtonSet([.guide])))
        #expect(guide.keys == XboxPadState.keys.map { $0 == BTN_MODE })
        let extras = XboxPadState(PadSnapshot(buttons: ButtonSet([.misc1, .paddle1, .touchpad])))
        #expect(extras == .neutral, "buttons an Xbox 360 pad lacks are dropped")
    }

    @Test func eventsAreOnlyTheChanges() {
        let before = XboxPadState(PadSnapshot(buttons: ButtonSet([.a]), leftX: 100))
        let after = XboxPadState(PadSnapshot(buttons: ButtonSet([.b]), leftX: 100, rightTrigger: 32767))
        let events = after.events(changedFrom: before).map { [Int32($0.type), Int32($0.code), $0.value] }
        #expect(events == [[EV_KEY, BTN_A, 0], [EV_KEY, BTN_B, 1], [EV_ABS, ABS_RZ, 255]])
        #expect(after.events(changedFrom: after).isEmpty)
    }
}
