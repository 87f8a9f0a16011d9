/// Turns udev records of event and hidraw nodes into controllers: which nodes belong to one physical pad, what
/// it is, what it can do, and its fingerprint. Pure: the Linux adapter gathers the records, tests replay them.
public enum ControllerGrouping {
    /// The controllers among `records`, sorted by their pad node's number (the kernel's connection order), then
    /// by fingerprint.
    ///
    /// - Records taken: event nodes (subsystem "input", sysname "eventN") with an inputN ancestor, hidraw nodes
    ///   (subsystem "hidraw") under a HID device, and LED class devices (subsystem "leds") under a HID device (its
    ///   group) or a USB device (the group of a USB interface of it: xpad registers its LED there). Other input nodes
    ///   (js*, mouse*) are ignored.
    /// - Grouping: nodes belong together when they share the nearest ancestor of subsystem "hid" (a HID device
    ///   such as `0005:054C:0CE6.0019`). Event nodes without one (xpad over USB, uinput pads) group by their
    ///   inputN device's parent when it has a subsystem (the USB interface), else by the inputN device itself.
    /// - Only groups with a `.pad` node are controllers; the pad node is the lowest-numbered one.
    /// - A bridge's virtual keyboard and mouse (phys `P/keyboard`, `P/mouse`) join the bridge's virtual pad (phys `P`,
    ///   under `VirtualPadKind.bridgeOutputPhysicalPathPrefix`) as `nodes.desktop`.
    /// - Kind: from the vendor and product ids (`ControllerKind(vendorID:productID:)`); a pad those do not name is
    ///   an Xbox pad when its USB interface is bound by xpad (`ControllerKind(usbInterfaceDriver:interfaceClass:)`).
    /// - Two controllers never share a fingerprint: the later one (by pad node number) of two that derive the
    ///   same gets `Fingerprint.derive(..., occurrence: 2)`, and so on.
    public static func controllers(from records: [UdevDeviceRecord]) -> [Controller] {
        var groups: [String: NodeGroup] = [:]
        var groupOrder: [String] = []
        var leds: [UdevDeviceRecord] = []
        func group(_ key: String) -> NodeGroup { groups[key] ?? NodeGroup(syspath: key) }

        for record in records {
            if record.subsystem == "input", record.sysname.hasPrefix("event"),
                let inputIndex = record.ancestors.firstIndex(where: { $0.subsystem == "input" })
            {
                let input = record.ancestors[inputIndex]
                let hid = record.ancestors.first { $0.subsystem == "hid" }
                let key: String
                if let hid {
                    key = hid.syspath
                } else if let parent = record.ancestors.dropFirst(inputIndex + 1).first, parent.subsystem != nil {
                    key = parent.syspath
                } else {
                    key = input.syspath
                }
                var entry = group(key)
                entry.eventNodes.append(GroupedEventNode(record: record, input: input))
                if groups[key] == nil { groupOrder.append(key) }
                groups[key] = entry
            } else if record.subsystem == "hidraw", let hid = record.ancestors.first(where: { $0.subsystem == "hid" }) {
                var entry = group(hid.syspath)
                entry.hidrawNodes.append(record)
                if groups[hid.syspath] == nil { groupOrder.append(hid.syspath) }
                groups[hid.syspath] = entry
            } else if record.subsystem == "leds" {
                leds.append(record)
            }
        }
        // LEDs last: they join groups of nodes (a LED class device alone is no controller).
        for record in leds {
            guard let parent = record.ancestors.first else { continue }
            let key: String?
            if parent.subsystem == "hid" {
                key = groups[parent.syspath] != nil ? parent.syspath : nil
            } else if parent.subsystem == "usb" && parent.devtype == "usb_device" {
                key = groupOrder.first { $0.hasPrefix(parent.syspath + "/") }
            } else {
                key = nil
            }
            if let key { groups[key]?.ledRecords.append(record) }
        }

        var controllers: [Controller] = []
        var desktopNodes: [String: [String]] = [:]  // a bridge's virtual pad's phys -> its keyboard's and mouse's nodes
        for key in groupOrder {
            guard let group = groups[key] else { continue }
            if let controller = group.controller() {
                controllers.append(controller)
            } else if let node = group.eventNodes.first, group.eventNodes.count == 1,
                let phys = NodeGroup.physicalPath(input: node.input, hid: nil),
                phys.hasPrefix(VirtualPadKind.bridgeOutputPhysicalPathPrefix),
                let slash = phys.lastIndex(of: "/"), ["/keyboard", "/mouse"].contains(String(phys[slash...]))
            {
                desktopNodes[String(phys[..<slash]), default: []].append(node.path)
            }
        }
        if !desktopNodes.isEmpty {
            for index in controllers.indices {
                guard let phys = controllers[index].physicalPath, let nodes = desktopNodes[phys] else { continue }
                controllers[index].nodes.desktop = nodes.sorted {
                    (ControllerGrouping.nodeNumber($0) ?? .max) < (ControllerGrouping.nodeNumber($1) ?? .max)
                }
            }
        }
        controllers.sort { lhs, rhs in
            let left = padNodeNumber(lhs), right = padNodeNumber(rhs)
            return left != right ? left < right : lhs.fingerprint < rhs.fingerprint
        }
        var taken = Set<Fingerprint>()
        for index in controllers.indices {
            var occurrence = 1
            let controller = controllers[index]
            var fingerprint = controller.fingerprint
            while taken.contains(fingerprint) {
                occurrence += 1
                fingerprint = Fingerprint.derive(
                    bus: controller.bus, vendorID: controller.vendorID, productID: controller.productID,
                    serial: controller.serial, portPath: controller.portPath, occurrence: occurrence)
            }
            taken.insert(fingerprint)
            controllers[index].fingerprint = fingerprint
        }
        return controllers
    }

    /// The number at the end of a node's name ("event12" -> 12, "/dev/hidraw3" -> 3); nil when there is none.
    public static func nodeNumber(_ name: String) -> Int? {
        let digits = name.reversed().prefix { $0.isASCII && $0.isNumber }
        return digits.isEmpty ? nil : Int(String(digits.reversed()))
    }

    private static func padNodeNumber(_ controller: Controller) -> Int {
        controller.nodes.evdev.first.flatMap { nodeNumber($0.path) } ?? Int.max
    }

    /// The port path of a grouping device, for pads udev gave no `ID_PATH`: its syspath without the
    /// `/sys/devices/` prefix, with the numbers the kernel hands out per connection taken out, so the same pad
    /// on the same port gets the same path after a replug or reboot:
    /// - a HID device's instance counter: `0005:054C:0CE6.0019` -> `0005:054C:0CE6`;
    /// - input device numbers: `input12` -> `input`;
    /// - Bluetooth connection handles: `hci0:256` -> `hci0`.
    /// USB and PCI path parts (`usb1/1-2/1-2:1.3`, `0000:00:14.0`) name the physical port and stay.
    public static func derivedPortPath(fromSyspath syspath: String) -> String {
        var path = Substring(syspath)
        if path.hasPrefix("/sys/devices/") { path = path.dropFirst("/sys/devices/".count) }
        let components = path.split(separator: "/", omittingEmptySubsequences: true).map { component -> Substring in
            if isHIDDeviceName(component), let dot = component.lastIndex(of: ".") {
                return component[..<dot]
            }
            if component.hasPrefix("input"), component.count > 5,
                component.dropFirst(5).allSatisfy({ $0.isASCII && $0.isNumber })
            {
                return "input"
            }
            if component.hasPrefix("hci"), let colon = component.firstIndex(of: ":") {
                return component[..<colon]
            }
            return component
        }
        return components.joined(separator: "/")
    }

    /// "BBBB:VVVV:PPPP.NNNN", the kernel's name for a HID device (bus, vendor, product, instance; hex).
    private static func isHIDDeviceName(_ name: Substring) -> Bool {
        let parts = name.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let dot = parts[2].firstIndex(of: ".") else { return false }
        let hexParts = [parts[0], parts[1], parts[2][..<dot], parts[2][parts[2].index(after: dot)...]]
        return hexParts.allSatisfy { $0.count == 4 && $0.allSatisfy(\.isHexDigit) }
    }
}

/// An event node with the inputN device above it.
struct GroupedEventNode {
    var record: UdevDeviceRecord
    var input: UdevAncestorRecord

    var capabilities: InputDeviceCapabilities { InputDeviceCapabilities(udevProperties: input.properties) }
    var role: EvdevNodeRole {
        EvdevNodeRole(capabilities: capabilities, udevProperties: input.properties.merging(record.properties) { $1 })
    }
    var number: Int { ControllerGrouping.nodeNumber(record.sysname) ?? Int.max }
    var path: String { record.devnode ?? "/dev/input/\(record.sysname)" }
}

/// The nodes that share one grouping device.
struct NodeGroup {
    var syspath: String
    var eventNodes: [GroupedEventNode] = []
    var hidrawNodes: [UdevDeviceRecord] = []
    var ledRecords: [UdevDeviceRecord] = []

    init(syspath: String) { self.syspath = syspath }

    func controller() -> Controller? {
        let roles = eventNodes.map { ($0, $0.role) }
        let pads = roles.filter { $0.1 == .pad }.sorted { $0.0.number < $1.0.number }
        guard let (pad, _) = pads.first else { return nil }
        let record = pad.record
        let hid = record.ancestors.first { $0.subsystem == "hid" }
        let identity = DeviceIdentity(input: pad.input, hid: hid)
        let serial = Self.serial(input: pad.input, hid: hid, ancestors: record.ancestors)
        let portPath =
            nonEmpty(record.properties["ID_PATH"]) ?? nonEmpty(pad.input.properties["ID_PATH"])
            ?? ControllerGrouping.derivedPortPath(fromSyspath: syspath)
        let usbInterface = record.ancestors.first { $0.subsystem == "usb" && $0.devtype == "usb_interface" }
        // The id table first (it tells an Xbox One pad from a 360 one without more); a pad it does not know is an
        // Xbox pad when xpad drives it.
        let kindByIDs = ControllerKind(vendorID: identity.vendorID, productID: identity.productID)
        let kind =
            kindByIDs != .generic
            ? kindByIDs
            : ControllerKind(
                usbInterfaceDriver: usbInterface?.driver, interfaceClass: usbInterface?.properties["INTERFACE"])
                ?? .generic
        let bus = ControllerBus(kernelBusType: identity.busType)

        let others = roles.filter { $0.0.record.syspath != record.syspath }.sorted { $0.0.number < $1.0.number }
        let evdev = [pad].map { EvdevNode(path: $0.path, role: .pad, inputSyspath: $0.input.syspath) }
            + others.map { EvdevNode(path: $0.0.path, role: $0.1, inputSyspath: $0.0.input.syspath) }
        let hidraw = hidrawNodes.sorted {
            (ControllerGrouping.nodeNumber($0.sysname) ?? Int.max) < (ControllerGrouping.nodeNumber($1.sysname) ?? Int.max)
        }.first.map { $0.devnode ?? "/dev/\($0.sysname)" }
        // By name, a number at the end by its value ("player-2" before "player-10", "xpad2" before "xpad10").
        let leds = ledRecords.map(\.sysname).sorted { lhs, rhs in
            let left = ControllerGrouping.nodeNumber(lhs), right = ControllerGrouping.nodeNumber(rhs)
            let leftStem = lhs.dropLast(left.map { String($0).count } ?? 0)
            let rightStem = rhs.dropLast(right.map { String($0).count } ?? 0)
            return leftStem != rightStem ? leftStem < rightStem : (left ?? -1) < (right ?? -1)
        }.map { "/sys/class/leds/\($0)" }
        let nodes = ControllerNodes(evdev: evdev, hidraw: hidraw, leds: leds)

        let driver = hid?.driver ?? usbInterface?.driver
        let capabilities = Capabilities.derive(
            kind: kind, bus: bus, padCapabilities: pad.capabilities,
            touchpadCapabilities: roles.first { $0.1 == .touchpad }?.0.capabilities,
            hasMotionNode: roles.contains { $0.1 == .motion }, hasHidraw: hidraw != nil,
            hasPlayerLightClassDevices: (kind == .xbox360 && usbInterface?.driver == "xpad") || hid?.driver == "nintendo")

        var controller = Controller(
            fingerprint: Fingerprint.derive(
                bus: bus, vendorID: identity.vendorID, productID: identity.productID, serial: serial,
                portPath: portPath),
            name: Self.name(input: pad.input, hid: hid), kind: kind, bus: bus,
            vendorID: identity.vendorID, productID: identity.productID, version: identity.version,
            serial: serial, portPath: portPath, capabilities: capabilities, nodes: nodes,
            groupSyspath: syspath, driver: driver)
        // A uinput pad carries its phys on its input device; hid-playstation leaves its input devices' phys empty, so
        // a uhid pad (a bridge's virtual DualSense) carries it on the HID device only.
        let phys = Self.physicalPath(input: pad.input, hid: hid)
        controller.physicalPath = phys
        controller.isBridgeOutput = phys?.hasPrefix(VirtualPadKind.bridgeOutputPhysicalPathPrefix) ?? false
        return controller
    }

    /// The inputN device's PHYS, else its `phys` attribute, else the HID device's HID_PHYS.
    static func physicalPath(input: UdevAncestorRecord, hid: UdevAncestorRecord?) -> String? {
        nonEmpty(unquoted(input.properties["PHYS"])) ?? nonEmpty(input.attributes["phys"]) ?? nonEmpty(hid?.properties["HID_PHYS"])
    }

    /// The inputN device's NAME (uevent quotes it), else its `name` attribute, else the HID device's HID_NAME.
    static func name(input: UdevAncestorRecord, hid: UdevAncestorRecord?) -> String {
        nonEmpty(unquoted(input.properties["NAME"])) ?? nonEmpty(input.attributes["name"])
            ?? nonEmpty(hid?.properties["HID_NAME"]) ?? ""
    }

    /// The inputN device's UNIQ (hid-playstation puts the MAC there), else its `uniq` attribute, else the HID
    /// device's HID_UNIQ, else a USB device's `serial` attribute; nil when all are empty. MACs come out lowercase.
    static func serial(input: UdevAncestorRecord, hid: UdevAncestorRecord?, ancestors: [UdevAncestorRecord]) -> String? {
        let usbSerial = ancestors.first { $0.subsystem == "usb" && $0.devtype == "usb_device" }?.attributes["serial"]
        let found =
            nonEmpty(unquoted(input.properties["UNIQ"])) ?? nonEmpty(input.attributes["uniq"])
            ?? nonEmpty(hid?.properties["HID_UNIQ"]) ?? nonEmpty(usbSerial.map { String($0.trimmingWhitespace) })
        guard let found else { return nil }
        return isMACAddress(found) ? found.lowercased() : found
    }

    /// Six colon-separated pairs of hex digits.
    static func isMACAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}

/// Bus, vendor, product and version of a pad: from the inputN device's PRODUCT ("5/54c/ce6/8100", hex), else its
/// `id/*` attributes, else the HID device's HID_ID ("0005:0000054C:00000CE6", no version).
struct DeviceIdentity {
    var busType: UInt16 = 0
    var vendorID: UInt16 = 0
    var productID: UInt16 = 0
    var version: UInt16 = 0

    init(input: UdevAncestorRecord, hid: UdevAncestorRecord?) {
        if let parts = Self.hexFields(input.properties["PRODUCT"], separator: "/"), parts.count == 4 {
            (busType, vendorID, productID, version) = (parts[0], parts[1], parts[2], parts[3])
        } else if let bus = Self.hex(input.attributes["id/bustype"]), let vendor = Self.hex(input.attributes["id/vendor"]),
            let product = Self.hex(input.attributes["id/product"])
        {
            (busType, vendorID, productID) = (bus, vendor, product)
            version = Self.hex(input.attributes["id/version"]) ?? 0
        } else if let parts = Self.hexFields(hid?.properties["HID_ID"], separator: ":"), parts.count == 3 {
            (busType, vendorID, productID) = (parts[0], parts[1], parts[2])
        }
    }

    private static func hex(_ text: String?) -> UInt16? {
        hex(text?[...])
    }

    private static func hex(_ text: Substring?) -> UInt16? {
        guard let text = text?.trimmingWhitespace, !text.isEmpty, text.count <= 8, let value = UInt32(text, radix: 16) else {
            return nil
        }
        return UInt16(exactly: value)
    }

    private static func hexFields(_ text: String?, separator: Character) -> [UInt16]? {
        guard let text else { return nil }
        let fields = text.split(separator: separator, omittingEmptySubsequences: false).map { hex($0) }
        return fields.contains(where: { $0 == nil }) ? nil : fields.compactMap { $0 }
    }
}

extension Capabilities {
    /// What a controller offers, from its kind and nodes:
    /// - buttons and axes: the pad node's KEY and ABS codes through the kind's built-in layout (the gamepad
    ///   convention for `.generic`); `.touchpad` (the click) when a touchpad node reports BTN_LEFT;
    /// - touchpad, motion: a node of that role;
    /// - rumble: FF_RUMBLE in the pad node's FF bitmap, or a PlayStation pad with a hidraw node;
    /// - lightbar: DualSense, DualSense Edge, DualShock 4 with a hidraw node; player LEDs and adaptive
    ///   triggers: DualSense and DualSense Edge with a hidraw node; player LEDs also on an Xbox 360 pad xpad drives
    ///   (its LED ring, through the LED class device xpad makes) and on a pad hid-nintendo drives (its four player
    ///   lights, LED class devices too): `hasPlayerLightClassDevices`;
    /// - battery: PlayStation pads (the Linux adapter may refine it from power_supply).
    public static func derive(
        kind: ControllerKind, bus: ControllerBus, padCapabilities: InputDeviceCapabilities,
        touchpadCapabilities: InputDeviceCapabilities?, hasMotionNode: Bool, hasHidraw: Bool,
        hasPlayerLightClassDevices: Bool = false
    ) -> Capabilities {
        let layout = EvdevLayout.builtIn(for: kind, bus: bus) ?? .linuxGamepadConvention
        var (buttons, axes) = layout.inputs(
            keyCodes: padCapabilities.keys.codes, absoluteCodes: padCapabilities.absolutes.codes)
        if touchpadCapabilities?.keys.contains(EvdevCode.btnMouseLeft) == true { buttons.insert(.touchpad) }
        let isDualSense = kind == .dualSense || kind == .dualSenseEdge
        return Capabilities(
            buttons: buttons, axes: axes, touchpad: touchpadCapabilities != nil, motion: hasMotionNode,
            rumble: padCapabilities.forceFeedback.contains(EvdevCode.ffRumble) || (kind.isPlayStation && hasHidraw),
            lightbar: kind.isPlayStation && hasHidraw, playerLeds: (isDualSense && hasHidraw) || hasPlayerLightClassDevices,
            adaptiveTriggers: isDualSense && hasHidraw, battery: kind.isPlayStation)
    }
}

private func nonEmpty(_ text: String?) -> String? {
    guard let text, !text.isEmpty else { return nil }
    return text
}

/// uevent quotes string values with spaces: `NAME="Sony Interactive Entertainment DualSense Wireless Controller"`.
private func unquoted(_ text: String?) -> String? {
    guard let text else { return nil }
    if text.count >= 2, text.first == "\"", text.last == "\"" { return String(text.dropFirst().dropLast()) }
    return text
}
