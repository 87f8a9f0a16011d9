import Foundation
import PadCore
import Testing

/// Grouping and fingerprints from udev records captured on a real kernel (Debian 6.1 in the test VM, udevd
/// running) with `padbridge list --udev-records`, next to what `padbridge list --json` said there and then:
/// a virtual DualSense on Bluetooth and one on USB (both bound by hid-playstation), a virtual Xbox 360 pad
/// (uinput) and a generic "Logitech Dual Action" made with python-evdev, plus the VM's own keyboard, mouse and
/// buttons. Re-record with Tests/PadCoreTests/Discovery/Recorded/record.sh.
@Suite struct RecordedUdevTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recorded")

    struct ListedController: Decodable {
        struct Nodes: Decodable {
            struct Node: Decodable {
                var path: String
                var role: String
            }
            var evdev: [Node]
            var hidraw: String?
        }
        var id: String
        var kind: String
        var serial: String?
        var nodes: Nodes
    }

    static func records() throws -> [UdevDeviceRecord] {
        try JSONDecoder().decode(
            [UdevDeviceRecord].self, from: Data(contentsOf: directory.appendingPathComponent("records.json")))
    }

    static func listed() throws -> [ListedController] {
        try JSONDecoder().decode(
            [ListedController].self, from: Data(contentsOf: directory.appendingPathComponent("list.json")))
    }

    @Test func groupingTheRecordsGivesWhatListSaidOnTheKernel() throws {
        let controllers = ControllerGrouping.controllers(from: try Self.records())
        let listed = try Self.listed()
        #expect(controllers.count == listed.count)
        #expect(controllers.count == 4, "two DualSenses, an Xbox 360 pad and a generic pad; nothing else")
        for (controller, expected) in zip(controllers, listed) {
            #expect(controller.fingerprint.rawValue == expected.id)
            #expect(controller.serial == expected.serial)
            #expect(controller.nodes.hidraw == expected.nodes.hidraw)
            #expect(controller.nodes.evdev.map(\.path) == expected.nodes.evdev.map(\.path))
            #expect(controller.nodes.evdev.map(\.role.rawValue) == expected.nodes.evdev.map(\.role))
        }
    }

    @Test func eachRecordedPadIsOneControllerOfItsKind() throws {
        let controllers = ControllerGrouping.controllers(from: try Self.records())
        let dualSenses = controllers.filter { $0.kind == .dualSense }
        #expect(dualSenses.map(\.bus).sorted(by: { $0.rawValue < $1.rawValue }) == [.bluetooth, .usb])
        for pad in dualSenses {
            #expect(pad.nodes.evdev.map(\.role) == [.pad, .motion, .touchpad])
            #expect(pad.nodes.hidraw != nil)
            #expect(pad.serial?.split(separator: ":").count == 6, "the MAC hid-playstation reports as uniq")
            #expect(pad.capabilities.touchpad && pad.capabilities.motion && pad.capabilities.adaptiveTriggers)
        }
        let xbox = try #require(controllers.first { $0.kind == .xbox360 })
        #expect(xbox.nodes.hidraw == nil)
        #expect(xbox.capabilities.rumble)
        let generic = try #require(controllers.first { $0.kind == .generic })
        #expect(generic.vendorID == 0x046d && generic.productID == 0xc216)
    }

    @Test func renumberedNodesKeepTheirFingerprints() throws {
        // The same pads after a re-plug: every event, hidraw, input and HID instance number changes.
        func renumbered(_ text: String) -> String {
            var result = ""
            var digits = ""
            func flush() {
                if let value = Int(digits) { result += String(value + 7) } else { result += digits }
                digits = ""
            }
            for character in text {
                if character.isNumber { digits.append(character) } else { flush(); result.append(character) }
            }
            flush()
            return result
        }
        let records = try Self.records()
        let moved = records.map { record in
            var copy = record
            for prefix in ["/dev/input/event", "/dev/hidraw"] where copy.devnode?.hasPrefix(prefix) == true {
                copy.devnode = prefix + renumbered(String(copy.devnode!.dropFirst(prefix.count)))
            }
            copy.sysname = renumbered(copy.sysname)
            copy.syspath = copy.syspath.replacingOccurrences(of: "/input/input", with: "/input/input1")
                .replacingOccurrences(of: ".00", with: ".01")
            copy.ancestors = copy.ancestors.map { ancestor in
                var moved = ancestor
                moved.syspath = moved.syspath.replacingOccurrences(of: "/input/input", with: "/input/input1")
                    .replacingOccurrences(of: ".00", with: ".01")
                return moved
            }
            return copy
        }
        let before = ControllerGrouping.controllers(from: records).map(\.fingerprint).sorted()
        let after = ControllerGrouping.controllers(from: moved).map(\.fingerprint).sorted()
        #expect(before == after)
    }
}
