/// A DualSense, or a DualSense Edge, as hid-playstation probes it and SDL and Steam read its hidraw node.
///
/// - It answers the probe's feature reports (0x09 pairing with a MAC derived from the seed, 0x20 firmware, 0x05
///   calibration: `DualSenseFeatureReport`) and refuses every other one.
/// - Input: `DualSenseInputReport` (USB 0x01 or Bluetooth 0x31). The Edge's four back buttons are `paddle1`-`paddle4`
///   in the bits SDL reads (byte c+9: 0x80 right paddle, 0x40 left paddle, 0x20 right Fn, 0x10 left Fn); the
///   kernel makes no event for them, so only hidraw readers see them, as with a real Edge.
/// - Output reports (rumble, lightbar, player and mic LEDs, trigger effects) become feedback, one event per field.
public struct EmulatedDualSense: EmulatedHIDPad {
    public static let defaultName = "Sony Interactive Entertainment DualSense Wireless Controller"
    public static let defaultEdgeName = "Sony Interactive Entertainment DualSense Edge Wireless Controller"
    public static let edgeProductID: UInt32 = 0x0DF2

    public let kind: VirtualPadKind
    public var heartbeatMilliseconds: UInt64 { 20 }
    public let identity: DualSenseIdentity
    public let description: HIDDeviceDescription
    public private(set) var probeAnswered = false
    private var sequence: UInt8 = 0

    /// `edge`: a DualSense Edge (054c:0df2) rather than a DualSense (054c:0ce6). `physicalPath` defaults to
    /// "padbridge/MAC".
    public init(edge: Bool = false, name: String? = nil, seed: String, transport: HIDTransport,
                physicalPath: String? = nil) {
        kind = edge ? .dualSenseEdge : .dualSense
        identity = DualSenseIdentity(seed: seed)
        description = HIDDeviceDescription(
            name: name ?? (edge ? Self.defaultEdgeName : Self.defaultName),
            physicalPath: physicalPath ?? "padbridge/\(identity.uniq)", uniq: identity.uniq, transport: transport,
            vendorID: DualSenseDescriptor.vendorID,
            productID: edge ? Self.edgeProductID : DualSenseDescriptor.productID,
            version: DualSenseDescriptor.version(for: transport),
            reportDescriptor: DualSenseDescriptor.bytes(for: transport))
    }

    public var inputReportCapacity: Int { DualSenseInputReport.size(for: description.transport) }

    public func inputDeviceNames(forPadNamed name: String) -> [String] {
        [name, "\(name) Motion Sensors", "\(name) Touchpad"]
    }

    public mutating func encodeInput(_ snapshot: PadSnapshot, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        defer { sequence &+= 1 }
        return DualSenseInputReport.encode(snapshot, transport: description.transport, sequence: sequence, into: buffer)
    }

    public mutating func featureReply(to reportID: UInt8) -> [UInt8]? {
        let reply = DualSenseFeatureReport.reply(to: reportID, identity: identity, transport: description.transport)
        if reply != nil && reportID == DualSenseFeatureReport.calibrationID { probeAnswered = true }
        return reply
    }

    public mutating func receiveOutput(_ report: [UInt8], showing snapshot: PadSnapshot) -> EmulatedPadResponse {
        // A report that does not decode (SDL's deliberately CRC-less Bluetooth "tickle" report among them) means
        // nothing to the pad.
        guard let feedback = try? DualSenseOutputReport.decode(report) else { return .nothing }
        return EmulatedPadResponse(feedback: feedback.events)
    }
}
