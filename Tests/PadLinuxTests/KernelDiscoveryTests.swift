import CPadLinux
import Glibc
import Logging
import PadCore
@testable import PadLinux
import PadLinuxTestSupport
import Testing

/// Virtual pads for the discovery and evdev kernel suites, made and waited for on one loop.
enum KernelPads {
    static var logger: Logger {
        var logger = Logger(label: "kernel-test")
        logger.logLevel = .info
        return logger
    }

    static func xbox360(on loop: DeviceEventLoop) throws -> (VirtualXbox360Pad, VirtualPadNodes) {
        var nodes: VirtualPadNodes?
        let pad = try VirtualXbox360Pad.create(
            name: nil, loop: loop, logger: logger, onFeedback: { _ in },
            onReady: { ready in
                nodes = ready
                loop.stop()
            })
        #expect(try loop.run(forAtMost: 10), "the uinput pad's node never appeared")
        return (pad, try #require(nodes))
    }

    static func dualSense(on loop: DeviceEventLoop) throws -> (VirtualDualSense, VirtualPadNodes) {
        var nodes: VirtualPadNodes?
        let pad = try VirtualDualSense.create(
            name: nil, seed: "discovery-\(getpid())-\(UInt64.random(in: 0...UInt64.max))", loop: loop, logger: logger,
            onFeedback: { _ in },
            onReady: { ready in
                nodes = ready
                loop.stop()
            })
        #expect(try loop.run(forAtMost: 30), "hid-playstation did not bind the virtual DualSense")
        return (pad, try #require(nodes))
    }
}

/// libudev enumeration, the hotplug monitor and the battery reader against real kernel devices (the VM: no udevd,
/// so properties are the kernel's uevent variables and the monitor listens to the kernel itself).
@Suite("Udev discovery on a real kernel", .serialized, .tags(.kernel),
       .enabled(if: KernelAvailability.hasUinput && KernelAvailability.hasUhid, "needs writable /dev/uinput and /dev/uhid"))
final class KernelDiscoveryTests {
    let loop: DeviceEventLoop
    let udev: UdevContext

    init() throws {
        loop = try DeviceEventLoop()
        udev = try UdevContext()
    }

    @Test func xbox360PadIsEnumeratedWithItsInputDevice() throws {
        let (pad, nodes) = try KernelPads.xbox360(on: loop)
        defer { pad.close() }
        let node = try #require(nodes.eventNodes.first)
        let records = try udev.padNodeRecords()
        #expect(
            records.allSatisfy { $0.subsystem == "hidraw" || $0.subsystem == "leds" || $0.sysname.hasPrefix("event") },
            "only eventN and hidraw nodes, and LED class devices")
        let record = try #require(records.first { $0.devnode == node }, "\(node) not among \(records.map(\.devnode))")
        #expect(record.subsystem == "input")
        #expect(record.sysname == String(node.dropFirst("/dev/input/".count)))
        #expect(record.syspath.hasPrefix(nodes.sysfsPath + "/"))
        #expect(record.properties["DEVNAME"] == node, "libudev spells DEVNAME out as the full path")
        #expect(record.properties["SUBSYSTEM"] == "input")
        let input = try #require(record.ancestors.first)
        #expect(input.subsystem == "input")
        #expect(input.syspath == nodes.sysfsPath)
        #expect(input.sysname.hasPrefix("input"))
        #expect(input.attributes["name"] == "Microsoft X-Box 360 pad")
        #expect(input.attributes["id/bustype"] == "0003")
        #expect(input.attributes["id/vendor"] == "045e")
        #expect(input.attributes["id/product"] == "028e")
        #expect(input.attributes["id/version"] == "0114")
        #expect(input.properties["PRODUCT"] == "3/45e/28e/114")
        #expect(input.properties["NAME"] == "\"Microsoft X-Box 360 pad\"")
        // A uinput device sits in /sys/devices/virtual/input: nothing above its input device is a device.
        #expect(record.ancestors.count == 1)
    }

    @Test func dualSenseNodesShareOneHIDAncestor() throws {
        let (pad, nodes) = try KernelPads.dualSense(on: loop)
        defer { pad.close() }
        let hidraw = try #require(nodes.hidrawNode)
        let records = try udev.padNodeRecords()
        let all = records.filter { record in record.ancestors.contains { $0.syspath == nodes.sysfsPath } }
        let leds = all.filter { $0.subsystem == "leds" }
        // hid-playstation's LED class devices: the lightbar and five player LEDs, right below the HID device.
        #expect(leds.count == 6 && leds.allSatisfy { $0.ancestors.first?.syspath == nodes.sysfsPath && $0.devnode == nil })
        #expect(leds.filter { $0.sysname.hasSuffix(":rgb:indicator") }.count == 1, "\(leds.map(\.sysname))")
        let mine = all.filter { $0.subsystem != "leds" }
        #expect(Set(mine.compactMap(\.devnode)) == Set(nodes.eventNodes + [hidraw]))
        #expect(mine.filter { $0.subsystem == "input" }.count == 3, "gamepad, motion sensors, touchpad")
        for record in mine {
            let hidIndex = try #require(record.ancestors.firstIndex { $0.subsystem == "hid" })
            let hid = record.ancestors[hidIndex]
            #expect(hid.syspath == nodes.sysfsPath)
            #expect(hid.driver == "playstation")
            #expect(hid.properties["HID_ID"] == "0005:0000054C:00000CE6")
            #expect(hid.properties["HID_UNIQ"] == pad.macAddress)
            if record.subsystem == "hidraw" {
                #expect(hidIndex == 0, "a hidraw node hangs right below its HID device")
            } else {
                #expect(hidIndex == 1, "an event node hangs below its inputN device, below the HID device")
                #expect(record.ancestors[0].subsystem == "input")
                #expect(record.ancestors[0].attributes["uniq"] == pad.macAddress)
                #expect(record.ancestors[0].attributes["id/vendor"] == "054c")
            }
            // Above the HID device: uhid's misc device.
            #expect(record.ancestors[hidIndex + 1].subsystem == "misc")
            #expect(record.ancestors[hidIndex + 1].sysname == "uhid")
        }
        let names = mine.filter { $0.subsystem == "input" }.compactMap { $0.ancestors.first?.attributes["name"] }
        #expect(names.contains { $0.hasSuffix("Motion Sensors") } && names.contains { $0.hasSuffix("Touchpad") })
    }

    @Test func dualSenseBatteryIsRead() throws {
        let (pad, nodes) = try KernelPads.dualSense(on: loop)
        defer { pad.close() }
        // hid-playstation: level 8 charging → capacity min(8·10+5, 100) = 85, status Charging; a report it parses
        // updates the supply at once.
        try pad.apply(PadSnapshot(battery: BatteryState(percent: 80, charging: true)))
        #expect(ControllerBattery.state(ofHIDDevice: nodes.sysfsPath) == BatteryState(percent: 85, charging: true))
        try pad.apply(PadSnapshot(battery: BatteryState(percent: 50, charging: false)))
        #expect(ControllerBattery.state(ofHIDDevice: nodes.sysfsPath) == BatteryState(percent: 55, charging: false))
        // A uinput pad has no HID device and no battery.
        let (xbox, xboxNodes) = try KernelPads.xbox360(on: loop)
        defer { xbox.close() }
        #expect(ControllerBattery.state(ofHIDDevice: xboxNodes.sysfsPath) == nil)
    }

    @Test func monitorReportsAnXbox360PadComingAndGoing() throws {
        let monitor = try UdevMonitor(context: udev)
        #expect(monitor.source == (access("/run/udev/control", F_OK) == 0 ? .udev : .kernel))
        var changes: [UdevDeviceChange] = []
        var until: (UdevDeviceChange) -> Bool = { _ in false }
        let watch = try loop.watch(monitor) { [loop] change in
            changes.append(change)
            if until(change) { loop.stop() }
        }
        defer { watch.cancel() }
        let (pad, nodes) = try KernelPads.xbox360(on: loop)
        let node = try #require(nodes.eventNodes.first)
        // Both adds, the event node's and its inputN device's, in whatever order udevd broadcasts them.
        let added: (UdevDeviceChange) -> Bool = { $0.action == .add && $0.subsystem == "input" && $0.devnode == node }
        let inputAdded: (UdevDeviceChange) -> Bool = { $0.action == .add && $0.syspath == nodes.sysfsPath }
        let bothSeen = { changes.contains(where: added) && changes.contains(where: inputAdded) }
        if !bothSeen() {
            until = { _ in bothSeen() }
            #expect(try loop.run(forAtMost: 10), "no add of \(node) and its input device within 10 s; saw \(changes)")
        }
        #expect(changes.contains(where: inputAdded), "the inputN device's add")
        pad.close()
        let removed: (UdevDeviceChange) -> Bool = { $0.action == .remove && $0.subsystem == "input" && $0.devnode == node }
        until = removed
        #expect(try loop.run(forAtMost: 10), "no remove of \(node) within 10 s; saw \(changes)")
        #expect(changes.contains(where: removed))
    }

    @Test func monitorReportsHIDBindAndHidrawOfADualSense() throws {
        let monitor = try UdevMonitor(context: udev)
        var changes: [UdevDeviceChange] = []
        var until: ([UdevDeviceChange]) -> Bool = { _ in false }
        let watch = try loop.watch(monitor) { [loop] change in
            changes.append(change)
            if until(changes) { loop.stop() }
        }
        defer { watch.cancel() }
        let (pad, nodes) = try KernelPads.dualSense(on: loop)
        let hidraw = try #require(nodes.hidrawNode)
        let complete: ([UdevDeviceChange]) -> Bool = { changes in
            changes.contains { $0.action == .bind && $0.subsystem == "hid" && $0.syspath == nodes.sysfsPath }
                && changes.contains { $0.action == .add && $0.subsystem == "hidraw" && $0.devnode == hidraw }
                && Set(nodes.eventNodes).isSubset(of: changes.filter { $0.action == .add }.compactMap(\.devnode))
        }
        if !complete(changes) {
            until = complete
            #expect(try loop.run(forAtMost: 30), "no bind of \(nodes.sysfsPath) and its nodes' adds; saw \(changes)")
        }
        // (Other suites make pads at the same time: look only at this pad's changes.)
        let bind = try #require(changes.first { $0.action == .bind && $0.syspath == nodes.sysfsPath })
        #expect(bind.subsystem == "hid")
        #expect(bind.driver == "playstation")
        // `bind` is sent after the driver's probe made its nodes: a consumer that waits for it finds them all.
        let bindIndex = try #require(changes.firstIndex(of: bind))
        let nodesBeforeBind = Set(changes.prefix(bindIndex).filter { $0.action == .add }.compactMap(\.devnode))
        #expect(nodesBeforeBind.isSuperset(of: nodes.eventNodes + [hidraw]))
        pad.close()
        until = { changes in changes.contains { $0.action == .remove && $0.syspath == nodes.sysfsPath } }
        if !until(changes) { #expect(try loop.run(forAtMost: 10), "no remove of the HID device; saw \(changes)") }
    }
}
