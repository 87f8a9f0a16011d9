public import PadCore

/// Feedback for pads padbridge reaches through evdev force feedback (Xbox and generic pads): rumble as one FF_RUMBLE
/// effect, updated in place; and, on an Xbox 360 pad xpad drives, the player LEDs on the pad's ring of lights through
/// the LED class device xpad makes for it (`XboxLedRing`).
public final class EvdevRumbleSink: PhysicalFeedbackSink {
    private var device: EvdevRumbleDevice?
    private var ring: XpadLedRingDevice?
    /// The ring's LED class device, when the pad has one this process can write.
    private let ringPath: String?
    /// Why a ring the pad has is not driven: its `brightness` attribute is the kernel's, root's to write unless a udev
    /// rule hands it on; then rumble goes on without the ring.
    private let ringUnavailable: DeviceAccessError?
    private var playing = false

    public init(path: String) throws(DeviceAccessError) {
        device = try EvdevRumbleDevice(path: path)
        guard let directory = XpadLedRingDevice.ledDirectory(forEventNode: path) else {
            ringPath = nil
            ringUnavailable = nil
            return
        }
        do {
            ring = try XpadLedRingDevice(ledDirectory: directory)
            ringPath = directory
            ringUnavailable = nil
        } catch {
            ringPath = nil
            ringUnavailable = error
        }
    }

    public var supported: FeedbackParts { ringPath == nil ? .rumbleOnly : [.rumble, .playerLeds] }

    /// What the sink drives, for log lines and refusals.
    public var summary: String {
        if let ringPath { return "evdev force feedback and xpad's LED ring (\(ringPath))" }
        if let ringUnavailable { return "evdev force feedback (rumble only; xpad's LED ring: \(ringUnavailable))" }
        return "evdev force feedback (rumble only)"
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
