public import PadCore

/// An Xbox One S, Elite 2 or Series pad on Bluetooth written through its hidraw node with rumble report 0x03
/// (`XboxBluetoothRumbleReport`): all four motors, the trigger motors too, which the kernel's force feedback
/// (hid-microsoft's, two motors) cannot reach.
public final class XboxBluetoothHidrawSink: PhysicalFeedbackSink {
    public static let microsoftVendor: UInt16 = 0x045E

    private var device: HidrawDevice?

    init(device: consuming HidrawDevice) {
        self.device = consume device
    }

    public var supported: FeedbackParts { .rumble }

    public func write(_ feedback: Feedback) throws(DeviceAccessError) {
        guard let rumble = feedback.rumble, device != nil else { return }
        try device!.write(XboxBluetoothRumbleReport.encoded(rumble))
    }

    public func close() {
        device.take()?.close()
    }
}
