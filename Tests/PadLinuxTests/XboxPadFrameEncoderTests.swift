import CPadLinux
import Glibc
import PadCore
import PadTestSupport
@testable import PadLinux
import Testing

@Suite("Xbox 360 pad frame encoding")
struct XboxPadFrameEncoderTests {
    /// (type, code, value) of each event of the frame `encoder` makes for `snapshot`.
    static func frame(_ encoder: inout XboxPadFrameEncoder, _ snapshot: PadSnapshot) -> [[Int32]] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: XboxPadFrameEncoder.maximumFrameBytes, alignment: MemoryLayout<input_event>.alignment)
        defer { buffer.deallocate() }
        let bytes = encoder.encode(snapshot, into: buffer)
        #expect(bytes % MemoryLayout<input_event>.stride == 0)
        return buffer.bindMemory(to: input_event.self).prefix(bytes / MemoryLayout<input_event>.stride).map {
            [Int32($0.type), Int32($0.code), $0.value]
        }
    }

    @Test func aFrameIsTheChangesThenSyn() {
        var encoder = XboxPadFrameEncoder()
        #expect(Self.frame(&encoder, .neutral).isEmpty, "nothing changed: nothing to write")
        #expect(Self.frame(&encoder, PadSnapshot(buttons: ButtonSet([.a]), leftX: 100)) == [
            [EV_KEY, BTN_A, 1], [EV_ABS, ABS_X, 100], [EV_SYN, SYN_REPORT, 0],
        ])
        #expect(Self.frame(&encoder, PadSnapshot(buttons: ButtonSet([.b, .dpup]), leftX: 100, rightTrigger: 32767)) == [
            [EV_KEY, BTN_A, 0], [EV_KEY, BTN_B, 1], [EV_ABS, ABS_RZ, 255], [EV_ABS, ABS_HAT0Y, -1],
            [EV_SYN, SYN_REPORT, 0],
        ])
        #expect(Self.frame(&encoder, PadSnapshot(buttons: ButtonSet([.b, .dpup]), leftX: 100, rightTrigger: 32767)).isEmpty)
    }

    @Test func afterAFailedWriteTheNextFrameCarriesEverything() {
        var encoder = XboxPadFrameEncoder()
        _ = Self.frame(&encoder, PadSnapshot(buttons: ButtonSet([.guide]), leftY: -5))
        encoder.forgetShown()
        let frame = Self.frame(&encoder, PadSnapshot(buttons: ButtonSet([.guide]), leftY: -5))
        #expect(frame.count == XboxPadState.keys.count + XboxPadState.axisCodes.count + 1)
        #expect(frame.filter { $0[0] == EV_KEY } == XboxPadState.keys.map { [EV_KEY, $0, $0 == BTN_MODE ? 1 : 0] })
        #expect(frame.filter { $0[0] == EV_ABS } == XboxPadState.axisCodes.map { [EV_ABS, $0, $0 == ABS_Y ? -5 : 0] })
        #expect(frame.last == [EV_SYN, SYN_REPORT, 0])
    }

    /// The frame, worked out the plain way from the states' key and axis arrays.
    static func reference(from previous: XboxPadState, to state: XboxPadState) -> [[Int32]] {
        var events: [[Int32]] = []
        for (index, code) in XboxPadState.keys.enumerated() where state.keys[index] != previous.keys[index] {
            events.append([EV_KEY, code, state.keys[index] ? 1 : 0])
        }
        for (index, code) in XboxPadState.axisCodes.enumerated() where state.axes[index] != previous.axes[index] {
            events.append([EV_ABS, code, state.axes[index]])
        }
        return events.isEmpty ? [] : events + [[EV_SYN, SYN_REPORT, 0]]
    }

    @Test func framesMatchThePlainWayOnRandomStates() {
        var generator = SplitMix64(seed: 0x0B0C_5EED)
        var encoder = XboxPadFrameEncoder()
        var previous = XboxPadState.neutral
        for _ in 0..<500 {
            let snapshot = PadSnapshot(
                buttons: ButtonSet(rawValue: UInt32.random(in: 0..<(1 << 21), using: &generator)),
                leftX: .random(in: .min ... .max, using: &generator), rightY: .random(in: -3...3, using: &generator),
                leftTrigger: .random(in: 0 ... .max, using: &generator))
            let state = XboxPadState(snapshot)
            #expect(Self.frame(&encoder, snapshot) == Self.reference(from: previous, to: state))
            previous = state
        }
    }
}
