/// The ring of four lights around an Xbox 360 pad's guide button, as the kernel's xpad driver sets it: a command
/// 0...15 written to the LED class device xpad makes for the pad (`/sys/class/leds/xpadN/brightness`), which xpad
/// sends as the pad's `01 03 CMD` packet. Commands 6...9 light quadrant 1...4 steadily; 0 turns the ring off.
public enum XboxLedRing {
    /// The ring's command showing what `playerLeds` (the DualSense's five LEDs, as `Feedback.playerLeds`) shows:
    /// player N's pattern lights N of them (hid-playstation's and SDL's patterns: 1, 2, 3, 4 and 5 lit), and the
    /// ring lights quadrant N, as SDL's Xbox 360 driver does for player N (player 5 wraps to quadrant 1).
    /// Any other mask is read by how many LEDs it lights; none lit is the ring off.
    public static func command(playerLeds: UInt8) -> UInt8 {
        let lit = (playerLeds & 0x1F).nonzeroBitCount
        guard lit > 0 else { return 0 }
        return UInt8((lit - 1) % 4 + 6)
    }
}
