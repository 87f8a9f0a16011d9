import PadCore
import Testing

@Suite struct XboxLedRingTests {
    /// hid-playstation's (and `feedback --player`'s) patterns for players 1...5.
    static let playerPatterns: [UInt8] = [0x04, 0x0A, 0x15, 0x1B, 0x1F]

    @Test func playerNLightsQuadrantNAsSDLDoesAndPlayerFiveWraps() {
        // xpad's commands 6...9: quadrant 1...4 on (drivers/input/joystick/xpad.c, xpad_send_led_command).
        #expect(Self.playerPatterns.map(XboxLedRing.command(playerLeds:)) == [6, 7, 8, 9, 6])
    }

    @Test func noLEDIsTheRingOffAndOtherMasksCountTheirLEDs() {
        #expect(XboxLedRing.command(playerLeds: 0) == 0)
        #expect(XboxLedRing.command(playerLeds: 0b00001) == 6)
        #expect(XboxLedRing.command(playerLeds: 0b10001) == 7)
        #expect(XboxLedRing.command(playerLeds: 0xE0) == 0)   // bits beyond the five LEDs light nothing
    }

    @Test func everyMaskGivesACommandXpadTakes() {
        for mask in UInt8.min...UInt8.max {
            let command = XboxLedRing.command(playerLeds: mask)
            #expect(command == 0 || (6...9).contains(command))
        }
    }
}
