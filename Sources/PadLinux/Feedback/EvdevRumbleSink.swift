public import PadCore

/// Feedback for pads padbridge reaches through evdev force feedback (Xbox and generic pads): rumble as one FF_RUMBLE
/// effect, updated in place; and, on an Xbox 360 pad xpad drives, the player LEDs on the pad's ring of lights through
/// the LED class device xpad makes for it (`XboxLedRing`).
public final class EvdevRumbleSink: PhysicalFeedbackSink {
    private var device: EvdevRumbleDevice?
    private var ring: XpadLedRingDevice?
    /// The ring's LED class device, when the pad has one.
    private let ringPath: String?
    private var playing = false

    public init(path: String) throws(DeviceAccessError) {
        ringPath = XpadLedRingDevice.ledDirectory(forEventNode: path)
        if let ringPath { ring = try XpadLedRingDevice(ledDirectory: ringPath) }
        do {
            device = try EvdevRumbleDevice(path: path)
        } catch {
            ring.take()?.close()
            throw error
        }
    }

    public var supported: FeedbackParts { ringPath == nil ? .rumbleOnly : [.rumble, .playerLeds] }

    /// What the sink drives, for log lines.
    public var summary: String {
        ringPath.map { "evdev force feedback and xpad's LED ring (\($0))" } ?? "evdev force feedback (rumble only)"
    }

    public func write(_ feedback: Feedback) throws(DeviceAccessError) {
        if let playerLeds = feedback.playerLeds, ring != nil {
            try ring!.send(XboxLedRing.command(playerLeds: playerLeds))
        }
        guard let rumble = feedback.rumble, device != nil else { return }
        if rumble.isOff {
            if playing { try device!.stop() }
            playing = false
        } else {
            try device!.upload(strong: Rumble.word(rumble.strong), weak: Rumble.word(rumble.weak))
            try device!.play()
            playing = true
        }
    }

    public func close() {
        device.take()?.close()
        ring.take()?.close()
    }
}
