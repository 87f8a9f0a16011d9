@testable import PadLinux
import Testing

@Suite("Force-feedback mixing (ff-memless rules)")
struct ForceFeedbackMixerTests {
    static func at(_ milliseconds: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: milliseconds * 1_000_000) }
    static func rumble(_ strong: UInt16, _ weak: UInt16, length: UInt16 = 0, delay: UInt16 = 0)
        -> ForceFeedbackMixer.Effect
    {
        .init(waveform: .rumble(strong: strong, weak: weak), length: length, delay: delay)
    }

    @Test func uploadedButNotPlayingIsSilent() {
        var mixer = ForceFeedbackMixer()
        mixer.upload(id: 0, Self.rumble(0xFFFF, 0xFFFF), now: Self.at(0))
        #expect(mixer.output(at: Self.at(1)) == .off)
        #expect(mixer.nextDeadline(after: Self.at(1)) == nil)
    }

    @Test func playingEffectsAddUpAndClip() {
        var mixer = ForceFeedbackMixer()
        mixer.upload(id: 0, Self.rumble(0x8000, 0x1000), now: Self.at(0))
        mixer.upload(id: 1, Self.rumble(0x9000, 0x2000), now: Self.at(0))
        mixer.play(id: 0, count: 1, now: Self.at(0))
        #expect(mixer.output(at: Self.at(0)) == .init(strong: 0x8000, weak: 0x1000))
        mixer.play(id: 1, count: 1, now: Self.at(0))
        #expect(mixer.output(at: Self.at(0)) == .init(strong: 0xFFFF, weak: 0x3000))
        mixer.play(id: 0, count: 0, now: Self.at(5))
        #expect(mixer.output(at: Self.at(5)) == .init(strong: 0x9000, weak: 0x2000))
    }

    @Test func gainScales() {
        var mixer = ForceFeedbackMixer()
        mixer.upload(id: 3, Self.rumble(0xFFFF, 0x8000), now: Self.at(0))
        mixer.play(id: 3, count: 1, now: Self.at(0))
        mixer.setGain(0x8000)
        #expect(mixer.output(at: Self.at(0)) == .init(strong: 0x8000, weak: 0x4000))
    }

    @Test func periodicDrivesBothMotorsByMagnitude() {
        var mixer = ForceFeedbackMixer()
        mixer.upload(id: 0, .init(waveform: .periodic(magnitude: -0x4000), length: 0, delay: 0), now: Self.at(0))
        mixer.play(id: 0, count: 1, now: Self.at(0))
        // |magnitude| · 0xFFFF / 0x7FFF
        let expected = UInt16(0x4000 * 0xFFFF / 0x7FFF)
        #expect(mixer.output(at: Self.at(0)) == .init(strong: expected, weak: expected))
    }

    @Test func delayAndLengthAreHonoured() {
        var mixer = ForceFeedbackMixer()
        mixer.upload(id: 0, Self.rumble(0x4000, 0x2000, length: 100, delay: 50), now: Self.at(0))
        mixer.play(id: 0, count: 1, now: Self.at(1000))
        #expect(mixer.output(at: Self.at(1000)) == .off)
        #expect(mixer.nextDeadline(after: Self.at(1000)) == Self.at(1050))
        mixer.advance(to: Self.at(1050))
        #expect(mixer.output(at: Self.at(1050)) == .init(strong: 0x4000, weak: 0x2000))
        #expect(mixer.nextDeadline(after: Self.at(1050)) == Self.at(1150))
        mixer.advance(to: Self.at(1150))
        #expect(mixer.output(at: Self.at(1150)) == .off)
        #expect(mixer.nextDeadline(after: Self.at(1150)) == nil)
    }

    @Test func playCountRepeats() {
        var mixer = ForceFeedbackMixer()
        mixer.upload(id: 0, Self.rumble(0x4000, 0, length: 10, delay: 5), now: Self.at(0))
        mixer.play(id: 0, count: 2, now: Self.at(0))
        mixer.advance(to: Self.at(15))  // first play 5..15, second 20..30
        #expect(mixer.output(at: Self.at(15)) == .off)
        #expect(mixer.nextDeadline(after: Self.at(15)) == Self.at(20))
        mixer.advance(to: Self.at(25))
        #expect(mixer.output(at: Self.at(25)).strong == 0x4000)
        mixer.advance(to: Self.at(30))
        #expect(mixer.output(at: Self.at(30)) == .off)
        #expect(mixer.nextDeadline(after: Self.at(30)) == nil)
    }

    /// SDL: length 0xFFFF ms, re-uploads the same id to change magnitudes while playing.
    @Test func reuploadOfPlayingEffectUpdatesOutput() {
        var mixer = ForceFeedbackMixer()
        mixer.upload(id: 0, Self.rumble(0x1000, 0x1000, length: 0xFFFF), now: Self.at(0))
        mixer.play(id: 0, count: 1, now: Self.at(0))
        mixer.upload(id: 0, Self.rumble(0xC000, 0x0000, length: 0xFFFF), now: Self.at(500))
        #expect(mixer.output(at: Self.at(500)) == .init(strong: 0xC000, weak: 0))
        #expect(mixer.nextDeadline(after: Self.at(500)) == Self.at(500 + 0xFFFF))
    }

    @Test func eraseStopsAPlayingEffect() {
        var mixer = ForceFeedbackMixer()
        mixer.upload(id: 7, Self.rumble(0xFFFF, 0xFFFF), now: Self.at(0))
        mixer.play(id: 7, count: 1, now: Self.at(0))
        mixer.erase(id: 7)
        #expect(mixer.output(at: Self.at(0)) == .off)
        mixer.play(id: 7, count: 1, now: Self.at(0))  // gone: playing it does nothing
        #expect(mixer.output(at: Self.at(0)) == .off)
    }

    @Test func idsOutsideTheSlotsAreRefused() {
        var mixer = ForceFeedbackMixer()
        let high = mixer.upload(id: 16, Self.rumble(1, 1), now: Self.at(0))
        let negative = mixer.upload(id: -1, Self.rumble(1, 1), now: Self.at(0))
        #expect(!high && !negative)
    }
}
