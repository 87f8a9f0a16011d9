/// The four player lights along a Nintendo Switch pad's edge, as the kernel's hid-nintendo drives them: one LED class
/// device each (`<hid device>:green:player-1` ... `player-4`), brightness 0 or 1.
public enum NintendoPlayerLights {
    /// How many lights the pad has.
    public static let count = 4

    /// The lights (first to fourth) showing what `playerLeds` (the DualSense's five LEDs, as `Feedback.playerLeds`)
    /// shows. Player N's pattern lights N of the five (hid-playstation's and SDL's patterns), and the pad lights its
    /// first N, as the Switch shows player N and as hid-nintendo lights pads as they come (player 5 and more: all
    /// four). Any other mask is read by how many LEDs it lights; none lit is all off.
    public static func lights(playerLeds: UInt8) -> [Bool] {
        let lit = min((playerLeds & 0x1F).nonzeroBitCount, count)
        return (0..<count).map { $0 < lit }
    }

    /// The DualSense mask of the player the lights show (player N's pattern when the first N are lit, 0 when none
    /// is), or nil when they show something else (lights that are not a prefix, or not four of them).
    public static func playerLeds(lights: [Bool]) -> UInt8? {
        guard lights.count == count else { return nil }
        let lit = lights.prefix { $0 }.count
        guard !lights.dropFirst(lit).contains(true) else { return nil }
        return lit == 0 ? 0 : PlayerLedPatterns.player[lit - 1]
    }
}

/// The DualSense's player LED patterns (five LEDs, bit 0 the leftmost): player N lights N of them, symmetrically, as
/// hid-playstation and SDL set them.
public enum PlayerLedPatterns {
    /// Players 1 to 5.
    public static let player: [UInt8] = [0x04, 0x0A, 0x15, 0x1B, 0x1F]
}
