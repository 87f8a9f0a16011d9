/// What a uhid device tells the kernel about itself in UHID_CREATE2.
public struct HIDDeviceDescription: Sendable, Hashable {
    public var name: String
    public var physicalPath: String
    /// The kernel's `uniq`: a pad's Bluetooth address, "aa:bb:cc:dd:ee:ff".
    public var uniq: String
    public var transport: HIDTransport
    public var vendorID: UInt32
    public var productID: UInt32
    public var version: UInt32
    public var reportDescriptor: [UInt8]

    public init(
        name: String, physicalPath: String, uniq: String, transport: HIDTransport, vendorID: UInt32,
        productID: UInt32, version: UInt32, reportDescriptor: [UInt8]
    ) {
        self.name = name
        self.physicalPath = physicalPath
        self.uniq = uniq
        self.transport = transport
        self.vendorID = vendorID
        self.productID = productID
        self.version = version
        self.reportDescriptor = reportDescriptor
    }
}

/// What an output report from a driver or a game meant to an emulated pad.
public struct EmulatedPadResponse: Sendable, Hashable {
    /// What the game asked of the pad, one event per field.
    public var feedback: [FeedbackEvent]
    /// Input reports to send at once, in order: a pad's answers to commands (a Switch Pro's subcommand replies).
    public var inputReports: [[UInt8]]

    public init(feedback: [FeedbackEvent] = [], inputReports: [[UInt8]] = []) {
        self.feedback = feedback
        self.inputReports = inputReports
    }

    public static let nothing = EmulatedPadResponse()
}

/// A pad padbridge emulates over uhid, as the real pad talks to its kernel driver and to the readers of its hidraw
/// node (SDL's HIDAPI drivers, Steam): its identity and report descriptor, the feature reports the driver asks for
/// at probe, the input report for a snapshot, and what the output reports it is sent mean.
///
/// Pure: `UhidVirtualPad` (PadLinux) owns the uhid device and the timers and asks its emulation what to say. A
/// value type, so its state (a handshake's progress, a report counter) is owned by that one pad.
public protocol EmulatedHIDPad: Sendable {
    /// The virtual pad kind this emulates.
    var kind: VirtualPadKind { get }
    /// How often, in milliseconds, the pad sends its state while a reader has it open (real pads stream; SDL
    /// relies on the stream).
    var heartbeatMilliseconds: UInt64 { get }
    /// Whether a changed state goes out at once (true), or only at the heartbeat's pace (false: a pad whose driver
    /// times itself by a steady stream, as hid-nintendo paces its subcommands by a Switch Pro's 15 ms reports).
    var sendsChangesAtOnce: Bool { get }
    /// Whether readers count the pad's reports as its clock (its reports carry no sensor time: a Steam Deck's, a
    /// Switch Pro's), so a late heartbeat sends every report it owes (`ReportPace`).
    var reportsAreItsClock: Bool { get }

    var description: HIDDeviceDescription { get }
    /// The most bytes one input report takes.
    var inputReportCapacity: Int { get }
    /// Whether the driver has asked what its probe asks before it makes the pad's nodes (a DualSense's
    /// calibration): the pad is not ready before; a pad whose driver asks nothing is answered from the start.
    var probeAnswered: Bool { get }
    /// Whether input reports may be sent: false while the pad waits for a driver's command that starts its stream
    /// (a Switch Pro before the host sets its input mode).
    var isStreaming: Bool { get }

    /// The names of the input devices the driver makes for the pad named `name`, the gamepad first: the pad is
    /// ready once each has its event node.
    func inputDeviceNames(forPadNamed name: String) -> [String]
    /// Writes the input report showing `snapshot` (its motion stamped by the virtual sensor clock) into `buffer`
    /// (`inputReportCapacity` bytes); returns the bytes written.
    mutating func encodeInput(_ snapshot: PadSnapshot, into buffer: UnsafeMutableRawBufferPointer) -> Int
    /// The reply to a GET_REPORT of feature `reportID`, or nil to refuse it (at once, with EIO).
    mutating func featureReply(to reportID: UInt8) -> [UInt8]?
    /// What a SET_REPORT of feature `reportID` with `data` (the report number first, as hidraw passes it) means,
    /// or nil to refuse it (at once, with EIO). A Steam Deck's commands, its rumble among them, come this way.
    mutating func receiveFeature(_ reportID: UInt8, data: [UInt8]) -> EmulatedPadResponse?
    /// What an output report (`report[0]` its ID) means, as `snapshot` is the state the pad shows.
    mutating func receiveOutput(_ report: [UInt8], showing snapshot: PadSnapshot) -> EmulatedPadResponse
}

extension EmulatedHIDPad {
    public var probeAnswered: Bool { true }
    public var isStreaming: Bool { true }
    public var sendsChangesAtOnce: Bool { true }
    public var reportsAreItsClock: Bool { false }
    public mutating func receiveFeature(_ reportID: UInt8, data: [UInt8]) -> EmulatedPadResponse? { nil }
}
