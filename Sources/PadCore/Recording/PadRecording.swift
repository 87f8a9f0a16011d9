/// Everything needed to bring a pad back: who it is, what each of its nodes declares, and then every event, input
/// report and feedback output it saw, on one clock. Written and read as `PadRecordingFormat` text.
public struct PadRecording: Sendable, Hashable {
    public var identity: RecordedPadIdentity
    public var evdevNodes: [RecordedEvdevNode]
    public var hidrawNodes: [RecordedHidrawNode]
    /// In time order.
    public var entries: [RecordedEntry]

    public init(
        identity: RecordedPadIdentity, evdevNodes: [RecordedEvdevNode] = [], hidrawNodes: [RecordedHidrawNode] = [],
        entries: [RecordedEntry] = []
    ) {
        self.identity = identity
        self.evdevNodes = evdevNodes
        self.hidrawNodes = hidrawNodes
        self.entries = entries
    }

    /// The recording's length: the last entry's time.
    public var durationMicroseconds: Int64 { entries.last?.microseconds ?? 0 }
}

/// Which side of a bridge a node belongs to: the pad in the user's hands, or the virtual pad a bridge made of it.
public enum RecordedSide: String, Sendable, Hashable, CaseIterable {
    case physical
    case virtual
}

/// The pad as discovery knew it.
public struct RecordedPadIdentity: Sendable, Hashable {
    /// The pad's ID (`Fingerprint`), as `list` shows it.
    public var id: String
    public var name: String
    public var kind: ControllerKind
    public var bus: ControllerBus
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16
    /// Serial number or MAC address, when the pad has one.
    public var serial: String?

    public init(
        id: String, name: String, kind: ControllerKind, bus: ControllerBus, vendor: UInt16, product: UInt16,
        version: UInt16, serial: String?
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.version = version
        self.serial = serial
    }
}

extension RecordedPadIdentity {
    /// The pad as discovery found it.
    public init(_ controller: Controller) {
        self.init(
            id: controller.fingerprint.rawValue, name: controller.name, kind: controller.kind, bus: controller.bus,
            vendor: controller.vendorID, product: controller.productID, version: controller.version,
            serial: controller.serial)
    }
}

/// One evdev node: its identity and everything it declares (enough to make it again through uinput).
public struct RecordedEvdevNode: Sendable, Hashable {
    /// The node's number in this recording; events name it.
    public var index: Int
    public var side: RecordedSide
    /// The node's role in its controller ("pad", "motion", "touchpad", ...).
    public var role: String
    /// Where it was (`/dev/input/event3`); for the reader only.
    public var path: String
    public var name: String
    public var bus: UInt16
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16
    public var phys: String?
    public var uniq: String?
    /// `INPUT_PROP_*` bits.
    public var properties: [UInt16]
    /// Declared codes per event type (EV_SYN not listed).
    public var codes: [UInt16: [UInt16]]
    public var absoluteInfo: [UInt16: EvdevAbsoluteInfo]

    public init(
        index: Int, side: RecordedSide = .physical, role: String, path: String, name: String, bus: UInt16,
        vendor: UInt16, product: UInt16, version: UInt16, phys: String? = nil, uniq: String? = nil,
        properties: [UInt16] = [], codes: [UInt16: [UInt16]] = [:], absoluteInfo: [UInt16: EvdevAbsoluteInfo] = [:]
    ) {
        self.index = index
        self.side = side
        self.role = role
        self.path = path
        self.name = name
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.version = version
        self.phys = phys
        self.uniq = uniq
        self.properties = properties
        self.codes = codes
        self.absoluteInfo = absoluteInfo
    }
}

/// One hidraw node: its HID report descriptor and the feature reports it answered (enough to make it again
/// through uhid and answer a driver's probe, as hid-playstation's requests for calibration and MAC).
public struct RecordedHidrawNode: Sendable, Hashable {
    public var index: Int
    public var side: RecordedSide
    public var path: String
    public var reportDescriptor: [UInt8]
    /// Report ID → the bytes the device returned (byte 0 = the ID).
    public var featureReports: [UInt8: [UInt8]]

    public init(
        index: Int, side: RecordedSide = .physical, path: String, reportDescriptor: [UInt8],
        featureReports: [UInt8: [UInt8]] = [:]
    ) {
        self.index = index
        self.side = side
        self.path = path
        self.reportDescriptor = reportDescriptor
        self.featureReports = featureReports
    }
}

/// One timestamped thing that happened, microseconds after the recording started.
public enum RecordedEntry: Sendable, Hashable {
    /// An evdev event read from node `node` (EV_SYN included: it frames the others).
    case evdev(microseconds: Int64, node: Int, type: UInt16, code: UInt16, value: Int32)
    /// An input report read from hidraw node `node`.
    case hidrawInput(microseconds: Int64, node: Int, report: [UInt8])
    /// Feedback that reached the pad (`side` physical) or that a game sent a bridge's virtual pad, as one line of
    /// `padbridge feedback`'s JSON.
    case feedback(microseconds: Int64, side: RecordedSide, line: String)

    public var microseconds: Int64 {
        switch self {
        case .evdev(let time, _, _, _, _), .hidrawInput(let time, _, _), .feedback(let time, _, _): time
        }
    }
}
