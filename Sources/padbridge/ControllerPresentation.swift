import FoundationEssentials
import PadCore

/// How `list` and `list --watch` show a controller: a table row, or a JSON object.
enum ControllerPresentation {
    /// The kind as the command line spells it (`--as dualsense`).
    static func kindName(_ kind: ControllerKind) -> String { kind.name }

    /// The kind as people call it.
    static func kindTitle(_ kind: ControllerKind) -> String {
        switch kind {
        case .dualSense: "DualSense"
        case .dualSenseEdge: "DualSense Edge"
        case .dualShock4: "DualShock 4"
        case .xbox360: "Xbox 360"
        case .xboxOne: "Xbox One"
        case .switchPro: "Switch Pro"
        case .steamDeck: "Steam Deck"
        case .generic: "generic"
        }
    }

    static func capabilityWords(_ capabilities: Capabilities) -> [String] {
        var words = ["\(capabilities.buttons.pressed.count) buttons", "\(capabilities.axes.count) axes"]
        let parts: [(Bool, String)] = [
            (capabilities.touchpad, "touchpad"), (capabilities.motion, "motion"), (capabilities.rumble, "rumble"),
            (capabilities.lightbar, "lightbar"), (capabilities.playerLeds, "player-leds"),
            (capabilities.adaptiveTriggers, "adaptive-triggers"), (capabilities.battery, "battery"),
        ]
        words += parts.filter(\.0).map(\.1)
        return words
    }

    static func batteryText(_ battery: BatteryState?) -> String {
        guard let battery else { return "-" }
        return "\(battery.percent)%" + (battery.charging ? " charging" : "")
    }

    /// The readable table: a header, then one row per controller, columns aligned.
    static func table(_ controllers: [Controller]) -> [String] {
        let header = ["#", "ID", "KIND", "NAME", "BUS", "BATTERY", "CAPABILITIES"]
        let rows = controllers.enumerated().map { index, controller in
            [
                "\(index)", controller.fingerprint.rawValue, kindTitle(controller.kind), controller.name,
                controller.bus.rawValue, batteryText(controller.battery),
                capabilityWords(controller.capabilities).joined(separator: ", "),
            ]
        }
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toWidth: widths[column] + 2)
            }.joined()
        }
    }

    /// The JSON object for one controller (`list --json`, `list --watch --json`).
    struct Object: Encodable {
        struct Node: Encodable {
            var path: String
            var role: String
        }
        struct Nodes: Encodable {
            var evdev: [Node]
            var hidraw: String?
            var leds: [String]
            var desktop: [String]

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(evdev, forKey: .evdev)
                try container.encode(hidraw, forKey: .hidraw)  // null, not absent, when there is none
                try container.encode(leds, forKey: .leds)
                if !desktop.isEmpty { try container.encode(desktop, forKey: .desktop) }
            }
            enum CodingKeys: String, CodingKey { case evdev, hidraw, leds, desktop }
        }
        struct CapabilitySet: Encodable {
            var buttons: [String]
            var axes: [String]
            var touchpad, motion, rumble, lightbar, playerLeds, adaptiveTriggers, battery: Bool
        }
        struct Battery: Encodable {
            var percent: Int
            var charging: Bool
        }
        struct SDLView: Encodable {
            var guid: String
            var mappingName: String?
            var mapping: String?
            var path: String
        }

        var index: Int
        var id: String
        var name: String
        var kind: String
        var bus: String
        var vendor: String
        var product: String
        var version: String
        var serial: String?
        var portPath: String?
        var driver: String?
        var capabilities: CapabilitySet
        var nodes: Nodes
        var battery: Battery?
        var sdl: SDLView?

        init(_ controller: Controller, index: Int) {
            self.index = index
            id = controller.fingerprint.rawValue
            name = controller.name
            kind = ControllerPresentation.kindName(controller.kind)
            bus = controller.bus.rawValue
            vendor = NumberText.hex4(controller.vendorID)
            product = NumberText.hex4(controller.productID)
            version = NumberText.hex4(controller.version)
            serial = controller.serial
            portPath = controller.portPath
            driver = controller.driver
            let capabilities = controller.capabilities
            self.capabilities = CapabilitySet(
                buttons: capabilities.buttons.pressed.map(\.rawValue), axes: capabilities.axes.map(\.rawValue),
                touchpad: capabilities.touchpad, motion: capabilities.motion, rumble: capabilities.rumble,
                lightbar: capabilities.lightbar, playerLeds: capabilities.playerLeds,
                adaptiveTriggers: capabilities.adaptiveTriggers, battery: capabilities.battery)
            nodes = Nodes(
                evdev: controller.nodes.evdev.map { Node(path: $0.path, role: $0.role.rawValue) },
                hidraw: controller.nodes.hidraw, leds: controller.nodes.leds, desktop: controller.nodes.desktop)
            battery = controller.battery.map { Battery(percent: Int($0.percent), charging: $0.charging) }
            sdl = controller.sdl.map { SDLView(guid: $0.guid, mappingName: $0.mappingName, mapping: $0.mapping, path: $0.path) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(index, forKey: .index)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encode(kind, forKey: .kind)
            try container.encode(bus, forKey: .bus)
            try container.encode(vendor, forKey: .vendor)
            try container.encode(product, forKey: .product)
            try container.encode(version, forKey: .version)
            try container.encode(serial, forKey: .serial)
            try container.encode(portPath, forKey: .portPath)
            try container.encode(driver, forKey: .driver)
            try container.encode(capabilities, forKey: .capabilities)
            try container.encode(nodes, forKey: .nodes)
            try container.encode(battery, forKey: .battery)
            try container.encode(sdl, forKey: .sdl)
        }
        enum CodingKeys: String, CodingKey {
            case index, id, name, kind, bus, vendor, product, version, serial, portPath, driver, capabilities, nodes
            case battery, sdl
        }
    }

    static func json(_ value: some Encodable, pretty: Bool) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .withoutEscapingSlashes] : [.withoutEscapingSlashes]
        // Encoding these plain values cannot fail.
        let data = (try? encoder.encode(value)) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
