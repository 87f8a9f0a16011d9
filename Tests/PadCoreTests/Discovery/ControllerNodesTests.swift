import PadCore
import Testing

/// A pad coming back is taken again only once it is complete: its nodes appear one by one, and one taken without
/// its touchpad or hidraw node would stay without them for the rest of the session.
private func node(_ number: Int, _ role: EvdevNodeRole) -> EvdevNode {
    EvdevNode(path: "/dev/input/event\(number)", role: role, inputSyspath: "/sys/devices/virtual/input/input\(number)")
}

@Suite struct ControllerNodesTests {
    static let dualSense = ControllerNodes(
        evdev: [node(3, .pad), node(4, .motion), node(5, .touchpad)], hidraw: "/dev/hidraw0")

    @Test func theSameNodesUnderOtherNumbersAreComplete() {
        let back = ControllerNodes(evdev: [node(7, .pad), node(8, .motion), node(9, .touchpad)], hidraw: "/dev/hidraw2")
        #expect(back.missing(comparedTo: Self.dualSense).isEmpty)
    }

    @Test func aMissingTouchpadOrHidrawNodeIsNamed() {
        let partial = ControllerNodes(evdev: [node(7, .pad), node(8, .motion)], hidraw: nil)
        #expect(partial.missing(comparedTo: Self.dualSense) == ["touchpad event node", "hidraw node"])
    }

    @Test func moreNodesThanBeforeAreComplete() {
        let more = ControllerNodes(
            evdev: [node(7, .pad), node(8, .motion), node(9, .touchpad), node(10, .other)], hidraw: "/dev/hidraw2")
        #expect(more.missing(comparedTo: Self.dualSense).isEmpty)
    }
}
