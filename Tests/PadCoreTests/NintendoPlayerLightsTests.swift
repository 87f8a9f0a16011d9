import PadCore
import Testing

@Suite struct NintendoPlayerLightsTests {
    /// hid-playstation's (and `feedback --player`'s) patterns for players 1...5.
    static let playerPatterns: [UInt8] = [0x04, 0x0A, 0x15, 0x1B, 0x1F]

    @Test func playerNLightsTheFirstNLightsAndPlayerFiveAllFour() {
        let on = true, off = false
        #expect(Self.playerPatterns.map(NintendoPlayerLights.lights(playerLeds:)) == [
            [on, off, off, off], [on, on, off, off], [on, on, on, off], [on, on, on, on], [on, on, on, on],
        ])
        #expect(NintendoPlayerLights.lights(playerLeds: 0) == [off, off, off, off])
        #expect(NintendoPlayerLights.lights(playerLeds: 0xE0) == [off, off, off, off], "bits beyond the five LEDs")
    }

    @Test func lightsShowingAPlayerReadBackAsThatPlayersPattern() {
        for (index, pattern) in Self.playerPatterns.prefix(4).enumerated() {
            let lights = (0..<4).map { $0 <= index }
            #expect(NintendoPlayerLights.playerLeds(lights: lights) == pattern)
        }
        #expect(NintendoPlayerLights.playerLeds(lights: [false, false, false, false]) == 0)
    }

    @Test func lightsShowingNoPlayerAreUnknown() {
        #expect(NintendoPlayerLights.playerLeds(lights: [false, true, false, false]) == nil)
        #expect(NintendoPlayerLights.playerLeds(lights: [true, false, true, false]) == nil)
        #expect(NintendoPlayerLights.playerLeds(lights: [true, true, true]) == nil, "three lights are not this pad")
    }
}
