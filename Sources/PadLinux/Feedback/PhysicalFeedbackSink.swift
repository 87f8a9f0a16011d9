public import PadCore

/// A physical pad's outputs as padbridge writes them: the end of the feedback pipeline.
///
/// Loop-confined like the `DeviceEventLoop` it is used from. `write` gets only fields in `supported` (the drain
/// restricts them); a `.gone` error means the pad was unplugged.
public protocol PhysicalFeedbackSink: AnyObject {
    var supported: FeedbackParts { get }
    func write(_ feedback: Feedback) throws(DeviceAccessError)
    /// Releases the device node. Idempotent. Does not write anything (the drain's closing write comes first).
    func close()
}

/// A sink opened from a device path, with the state the pad showed before padbridge touched it (best effort; nil
/// fields are unknown) — what a closing write restores.
public struct OpenedFeedbackSink {
    public let sink: any PhysicalFeedbackSink
    public let initialState: Feedback
    /// What the pad is, for log lines ("DualSense over Bluetooth", "evdev force feedback").
    public let summary: String
}

public enum PhysicalFeedbackSinks {
    /// Opens `/dev/hidrawN` (a DualSense or DualShock 4, written with output reports; an Xbox pad on Bluetooth,
    /// written with its rumble report) or `/dev/input/eventN` (any pad with FF_RUMBLE; an Xbox 360 pad's LED ring or
    /// a Switch pad's player lights too, where the driver made them). Other paths are `.invalidArgument`.
    public static func open(path: String) throws(DeviceAccessError) -> OpenedFeedbackSink {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if name.hasPrefix("hidraw") {
            let device = try HidrawDevice(path: path)
            let info = try device.rawInfo()
            if info.vendor == XboxBluetoothHidrawSink.microsoftVendor && info.bus == HidrawInfo.busBluetooth {
                return OpenedFeedbackSink(
                    sink: XboxBluetoothHidrawSink(device: device), initialState: Feedback(),
                    summary: "Xbox pad over Bluetooth (report 0x03, four motors)")
            }
            device.close()
            return try PlayStationHidrawSink.open(path: path)
        }
        if name.hasPrefix("event") {
            let sink = try EvdevRumbleSink(path: path)
            // (xpad does not say which command the ring last got, so its player LEDs are not restored; a Switch pad's
            // lights are, when they showed a player.)
            return OpenedFeedbackSink(
                sink: sink, initialState: Feedback(playerLeds: sink.initialPlayerLeds), summary: sink.summary)
        }
        throw DeviceAccessError(
            code: .invalidArgument, path: path, operation: "open (expected /dev/hidrawN or /dev/input/eventN)")
    }
}
