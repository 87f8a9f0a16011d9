/// The bus a PlayStation pad's HID reports travel over. It decides report IDs, sizes and whether a CRC trailer is present.
public enum HIDTransport: String, Sendable, Hashable, CaseIterable {
    case usb, bluetooth
}
