/// The family a physical controller belongs to, which decides how padbridge reads it and what feedback it takes.
public enum ControllerKind: String, Sendable, Hashable, Codable, CaseIterable {
    case dualSense, dualSenseEdge, dualShock4
    case xbox360, xboxOne
    case switchPro
    /// A Steam Deck's built-in controls (28de:1205). Read through hid-steam from Linux 6.3; no earlier kernel makes
    /// a gamepad of them.
    case steamDeck
    /// Any other gamepad; SDL's game-controller database supplies its layout where it knows the pad.
    case generic

    /// The kind as padbridge prints it (`list`, `--json`) and as a profiles directory names its file
    /// (`xbox-one.toml`): dualsense, dualsense-edge, dualshock4, xbox360, xbox-one, switch-pro, generic.
    public var name: String {
        switch self {
        case .dualSense: "dualsense"
        case .dualSenseEdge: "dualsense-edge"
        case .dualShock4: "dualshock4"
        case .xbox360: "xbox360"
        case .xboxOne: "xbox-one"
        case .switchPro: "switch-pro"
        case .steamDeck: "steam-deck"
        case .generic: "generic"
        }
    }
}

/// How a controller is connected, from the kernel's `BUS_*` id.
public enum ControllerBus: String, Sendable, Hashable, Codable {
    case usb, bluetooth, virtual, other

    /// The kernel's `BUS_*` id (`other`: BUS_VIRTUAL, as padbridge's own devices are).
    public var kernelBusType: UInt16 {
        switch self {
        case .usb: 0x03
        case .bluetooth: 0x05
        case .virtual, .other: 0x06
        }
    }

    /// BUS_USB 0x03, BUS_BLUETOOTH 0x05, BUS_VIRTUAL 0x06.
    public init(kernelBusType: UInt16) {
        switch kernelBusType {
        case 0x03: self = .usb
        case 0x05: self = .bluetooth
        case 0x06: self = .virtual
        default: self = .other
        }
    }
}

/// A controller's stable id: the same physical pad gets the same fingerprint across unplug/replug and reboots,
/// and two pads never share one. Lowercase hex, so a unique prefix selects a pad on the command line.
public struct Fingerprint: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
    public static func < (lhs: Fingerprint, rhs: Fingerprint) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What a controller has: which inputs, and which kinds of feedback it takes.
public struct Capabilities: Sendable, Hashable {
    /// The buttons its nodes report.
    public var buttons: ButtonSet
    /// The analog axes its nodes report, in `Axis.allCases` order.
    public var axes: [Axis]
    public var touchpad: Bool
    public var motion: Bool
    public var rumble: Bool
    public var lightbar: Bool
    public var playerLeds: Bool
    public var adaptiveTriggers: Bool
    public var battery: Bool

    public init(
        buttons: ButtonSet = ButtonSet(), axes: [Axis] = [], touchpad: Bool = false, motion: Bool = false,
        rumble: Bool = false, lightbar: Bool = false, playerLeds: Bool = false, adaptiveTriggers: Bool = false,
        battery: Bool = false
    ) {
        self.buttons = buttons
        self.axes = axes
        self.touchpad = touchpad
        self.motion = motion
        self.rumble = rumble
        self.lightbar = lightbar
        self.playerLeds = playerLeds
        self.adaptiveTriggers = adaptiveTriggers
        self.battery = battery
    }
}

/// What one evdev node of a controller carries.
public enum EvdevNodeRole: String, Sendable, Hashable, Codable {
    /// Buttons, sticks, triggers, d-pad.
    case pad
    /// Accelerometer and gyroscope (INPUT_PROP_ACCELEROMETER).
    case motion
    /// A touchpad's contacts (multitouch slots).
    case touchpad
    /// Anything else the device made (a headset jack's switches, ...).
    case other
}

public struct EvdevNode: Sendable, Hashable, Codable {
    /// "/dev/input/event3".
    public var path: String
    public var role: EvdevNodeRole
    /// The inputN device's syspath, which the kernel shares between a node and its siblings (js0, ...).
    public var inputSyspath: String

    public init(path: String, role: EvdevNodeRole, inputSyspath: String) {
        self.path = path
        self.role = role
        self.inputSyspath = inputSyspath
    }
}

/// The device nodes one physical controller has.
public struct ControllerNodes: Sendable, Hashable {
    /// Its event nodes, the pad node first, then by node number.
    public var evdev: [EvdevNode]
    /// Its hidraw node, if it is a HID device.
    public var hidraw: String?
    /// Its LED class devices (`/sys/class/leds/NAME`: a DualSense's lightbar and player LEDs, a Switch pad's player
    /// lights, an Xbox 360 pad's ring), in natural order. Sysfs directories, not device nodes: not in `allPaths`.
    public var leds: [String]
    /// For a bridge's virtual pad: the event nodes of the virtual keyboard and mouse the same bridge made beside it
    /// (`remap` with a profile that drives them). Not the pad's own: not in `allPaths`, never read or hidden with it.
    public var desktop: [String]

    public init(evdev: [EvdevNode], hidraw: String?, leds: [String] = [], desktop: [String] = []) {
        self.evdev = evdev
        self.hidraw = hidraw
        self.leds = leds
        self.desktop = desktop
    }

    /// Every path, event nodes first.
    public var allPaths: [String] { evdev.map(\.path) + (hidraw.map { [$0] } ?? []) }
    public func evdev(_ role: EvdevNodeRole) -> EvdevNode? { evdev.first { $0.role == role } }

    /// What `earlier` had that these nodes lack ("touchpad event node", "hidraw node"), by role, not by path: a pad
    /// that comes back gets other node numbers, and its nodes appear one by one.
    public func missing(comparedTo earlier: ControllerNodes) -> [String] {
        var missing: [String] = []
        for role in [EvdevNodeRole.pad, .motion, .touchpad, .other] {
            let lacking = earlier.evdev.count { $0.role == role } - evdev.count { $0.role == role }
            if lacking > 0 { missing += Array(repeating: "\(role.rawValue) event node", count: lacking) }
        }
        if earlier.hidraw != nil && hidraw == nil { missing.append("hidraw node") }
        return missing
    }
}

/// SDL2's view of a controller, joined to udev's by device path.
public struct SDLControllerInfo: Sendable, Hashable, Codable {
    /// SDL's joystick GUID as its 32 hex digits.
    public var guid: String
    /// The name SDL's mapping gives the pad ("PS5 Controller").
    public var mappingName: String?
    /// The mapping string from SDL's game-controller database ("030000004c050000e60c000000016800,PS5 Controller,a:b0,...").
    public var mapping: String?
    /// The node SDL reads the pad through (an event node, or the hidraw node for SDL's HIDAPI drivers).
    public var path: String

    public init(guid: String, mappingName: String?, mapping: String?, path: String) {
        self.guid = guid
        self.mappingName = mappingName
        self.mapping = mapping
        self.path = path
    }
}

/// One physical controller, however many nodes the kernel made for it.
public struct Controller: Sendable, Hashable {
    public var fingerprint: Fingerprint
    public var name: String
    public var kind: ControllerKind
    public var bus: ControllerBus
    public var vendorID: UInt16
    public var productID: UInt16
    public var version: UInt16
    /// The device's unique serial or MAC (lowercase, colon-separated for MACs), if it reports one.
    public var serial: String?
    /// The physical port it hangs off ("pci-0000:00:14.0-usb-0:2:1.0"), used in the fingerprint when there is no serial.
    public var portPath: String?
    public var capabilities: Capabilities
    public var nodes: ControllerNodes
    /// The syspath that groups the nodes (the HID device, or the input device for non-HID pads).
    public var groupSyspath: String
    /// The kernel driver bound to the device ("playstation", "xpad", ...).
    public var driver: String?
    /// SDL's view, once joined (`nil` when SDL does not list the pad or is unavailable).
    public var sdl: SDLControllerInfo?
    /// The battery as the kernel's power_supply device reports it, where the Linux adapter found one.
    public var battery: BatteryState?
    /// A virtual pad a padbridge bridge shows (`remap`, `serve`; its `phys` starts with
    /// `VirtualPadKind.bridgeOutputPhysicalPathPrefix`): never forwarded by `connect --all`.
    public var isBridgeOutput = false
    /// Its `phys` (the input device's, else the HID device's), nil when empty.
    public var physicalPath: String?

    /// The pad with `fingerprint` among `controllers`, as a session that lost it takes it back: never a bridge's
    /// own virtual pad. Identical pads with no serial or port path are told apart by their order, so when the
    /// source goes away a virtual pad that mirrors it (`serve`'s on the same machine, over loopback) can be listed
    /// with the fingerprint the source had: a client took the host's virtual pad for its returning pad.
    public static func returning(_ fingerprint: Fingerprint, among controllers: [Controller]) -> Controller? {
        controllers.first { $0.fingerprint == fingerprint && !$0.isBridgeOutput }
    }

    public init(
        fingerprint: Fingerprint, name: String, kind: ControllerKind, bus: ControllerBus,
        vendorID: UInt16, productID: UInt16, version: UInt16, serial: String?, portPath: String?,
        capabilities: Capabilities, nodes: ControllerNodes, groupSyspath: String, driver: String?,
        sdl: SDLControllerInfo? = nil, battery: BatteryState? = nil
    ) {
        self.fingerprint = fingerprint
        self.name = name
        self.kind = kind
        self.bus = bus
        self.vendorID = vendorID
        self.productID = productID
        self.version = version
        self.serial = serial
        self.portPath = portPath
        self.capabilities = capabilities
        self.nodes = nodes
        self.groupSyspath = groupSyspath
        self.driver = driver
        self.sdl = sdl
        self.battery = battery
    }
}

extension Controller {
    /// The node feedback for this pad is written to: a DualSense's or DualShock 4's hidraw node (every output: rumble,
    /// lightbar, LEDs, trigger effects), an Xbox One or Series pad's on Bluetooth (its rumble report reaches the
    /// trigger motors too), else its pad event node when it takes force feedback (rumble). nil when the pad takes no
    /// feedback padbridge can give it.
    public var feedbackNodePath: String? {
        if kind.isPlayStation, let hidraw = nodes.hidraw { return hidraw }
        if kind == .xboxOne, bus == .bluetooth, let hidraw = nodes.hidraw { return hidraw }
        if capabilities.rumble, let pad = nodes.evdev(.pad) { return pad.path }
        return nil
    }
}
