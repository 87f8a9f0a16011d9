public import PadCore

/// Rumble for pads padbridge reaches only through evdev force feedback (Xbox and generic pads): one FF_RUMBLE
/// effect, updated in place.
public final class EvdevRumbleSink: PhysicalFeedbackSink {
    private var device: EvdevRumbleDevice?
    private var playing = false

    public init(path: String) throws(DeviceAccessError) {
        device = try EvdevRumbleDevice(path: path)
    }

    public var supported: FeedbackParts { .rumbleOnly }

    public func write(_ feedback: Feedback) throws(DeviceAccessError) {
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
    }
}
