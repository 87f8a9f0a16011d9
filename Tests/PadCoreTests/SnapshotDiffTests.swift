import PadCore
import PadTestSupport
import Testing

@Suite struct SnapshotDiffTests {
    @Test(arguments: [1, 2, 3, 42, 0xDEAD_BEEF] as [UInt64], [1.0, 0.3, 0.05])
    func applyingTheDiffReproducesTheTarget(seed: UInt64, changeRate: Double) {
        var generator = SplitMix64(seed: seed)
        var old = PadSnapshot.random(using: &generator)
        for _ in 0..<500 {
            let new = PadSnapshot.random(using: &generator, from: old, changeRate: changeRate)
            let events = SnapshotDiff.events(from: old, to: new)
            #expect(old.applying(events) == new)
            #expect(events.isEmpty == (old == new))
            old = new
        }
    }

    @Test(arguments: [7, 8, 9] as [UInt64])
    func diffOfASnapshotWithItselfIsEmpty(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let snapshot = PadSnapshot.random(using: &generator)
            #expect(SnapshotDiff.events(from: snapshot, to: snapshot).isEmpty)
        }
    }

    @Test func eventsNameExactlyWhatChangedInAFixedOrder() {
        var new = PadSnapshot.neutral
        new[.b] = true
        new[.a] = true
        new.rightTrigger = 32767
        new.leftX = -12000
        new.touches[1] = TouchContact(trackingID: 5, active: true, x: 0.5, y: 0.25)
        new.battery = BatteryState(percent: 80, charging: true)
        #expect(
            SnapshotDiff.events(from: .neutral, to: new) == [
                .button(.a, pressed: true),
                .button(.b, pressed: true),
                .axis(.leftx, value: -12000),
                .axis(.righttrigger, value: 32767),
                .touch(contact: 1, TouchContact(trackingID: 5, active: true, x: 0.5, y: 0.25)),
                .battery(BatteryState(percent: 80, charging: true)),
            ])
        #expect(
            SnapshotDiff.events(from: new, to: .neutral.applying([.battery(new.battery)])) == [
                .button(.a, pressed: false),
                .button(.b, pressed: false),
                .axis(.leftx, value: 0),
                .axis(.righttrigger, value: 0),
                .touch(contact: 1, .lifted),
            ])
    }

    @Test func releasedKeepsBatteryAndLetsGoOfEverythingElse() {
        var generator = SplitMix64(seed: 99)
        let held = PadSnapshot.random(using: &generator)
        let released = held.released
        #expect(released.buttons.isEmpty)
        #expect(Axis.allCases.allSatisfy { released[$0] == 0 })
        #expect(!released.touches.first.active && !released.touches.second.active)
        #expect(released.battery == held.battery)
        #expect(released.motion.gyroRadiansPerSecond == .zero)
    }

    @Test func triggersNeverGoNegative() {
        var snapshot = PadSnapshot.neutral
        snapshot.apply(.axis(.lefttrigger, value: -5))
        #expect(snapshot.leftTrigger == 0)
    }
}
