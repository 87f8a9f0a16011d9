/// A DualShock 4 v2 (054c:09cc) as hid-sony (Linux 6.1) or hid-playstation (6.2 and later) probe it and SDL and
/// Steam read its hidraw node.
///
/// - Identity: the MAC derived from the seed as a virtual DualSense's (`DualSenseIdentity`), in `uniq` and in the
///   USB MAC and pairing reports; the probe's feature reports are `DualShock4FeatureReport`'s.
/// - Input: `DualShock4InputReport`, the full report from the start (Bluetooth 0x11 with its CRC, USB 0x01): a real
///   pad on Bluetooth sends the short 0x01 report until the host reads its calibration, which both drivers do at
///   probe. Battery level, touchpad (two contacts and the click) and motion as in the model.
/// - Output reports (the drivers' and games' USB 0x05 or Bluetooth 0x11: rumble, lightbar) become feedback.
public struct EmulatedDualShock4: EmulatedHIDPad {
    public static let defaultName = "Sony Interactive Entertainment Wireless Controller"

    public var kind: VirtualPadKind { .dualShock4 }
    /// A real DualShock 4 reports every 4 ms on USB and Bluetooth alike; 20 ms (the DualSense target's pace) keeps
    /// SDL's stream alive without flooding the emulated kernel.
    public var heartbeatMilliseconds: UInt64 { 20 }
    public let identity: DualSenseIdentity
    public let description: HIDDeviceDescription
    public private(set) var probeAnswered = false
    private var sequence: UInt8 = 0

    /// `physicalPath` defaults to "padbridge/MAC".
    public init(name: String? = nil, seed: String, transport: HIDTransport, physicalPath: String? = nil) {
        identity = DualSenseIdentity(seed: seed)
        description = HIDDeviceDescription(
            name: name ?? Self.defaultName, physicalPath: physicalPath ?? "padbridge/\(identity.uniq)",
            uniq: identity.uniq, transport: transport, vendorID: DualShock4Descriptor.vendorID,
            productID: DualShock4Descriptor.productID, version: DualShock4Descriptor.version,
            reportDescriptor: DualShock4Descriptor.bytes(for: transport))
    }

    public var inputReportCapacity: Int { DualShock4InputReport.size(for: description.transport) }

    /// hid-sony and hid-playstation both name the sensor and touchpad nodes after the pad.
    public func inputDeviceNames(forPadNamed name: String) -> [String] {
        [name, "\(name) Motion Sensors", "\(name) Touchpad"]
    }

    public mutating func encodeInput(_ snapshot: PadSnapshot, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        defer { sequence &+= 1 }
        return DualShock4InputReport.encode(snapshot, transport: description.transport, sequence: sequence, into: buffer)
    }

    public mutating func featureReply(to reportID: UInt8) -> [UInt8]? {
        let transport = description.transport
        let reply = DualShock4FeatureReport.reply(to: reportID, identity: identity, transport: transport)
        if reply != nil && reportID == DualShock4FeatureReport.calibrationID(for: transport) { probeAnswered = true }
        return reply
    }

    public mutating func receiveOutput(_ report: [UInt8], showing snapshot: PadSnapshot) -> EmulatedPadResponse {
        guard let feedback = try? DualShock4OutputReport.decode(report) else { return .nothing }
        return EmulatedPadResponse(feedback: feedback.events)
    }
}
