import PadCore

/// udev property sets of real device kinds, written as the kernel's uevents print them (bitmaps, quoted NAME and
/// UNIQ, PRODUCT in hex), with the numbers that change per connection as parameters so a test can replug a pad.
/// Bitmaps: hid-playstation's gamepad node sets BTN_SOUTH/EAST/NORTH/WEST, TL/TR, TL2/TR2, SELECT/START/MODE,
/// THUMBL/R (`7fdb000000000000` in the fifth word), ABS_X...ABS_RZ and the hat (`3003f`), and memless force
/// feedback (FF_RUMBLE, FF_PERIODIC, FF_SQUARE/TRIANGLE/SINE, FF_GAIN: `107030000 0`); xpad's Xbox 360 node has
/// no TL2/TR2 (`7cdb000000000000`).
enum UdevFixtures {
    static let dualSenseName = "Sony Interactive Entertainment DualSense Wireless Controller"
    static let dualSensePadKeys = "7fdb000000000000 0 0 0 0"
    static let padAbsolutes = "3003f"
    static let memlessRumble = "107030000 0"
    /// BTN_LEFT; BTN_TOOL_FINGER, BTN_TOUCH, BTN_TOOL_DOUBLETAP/TRIPLETAP/QUADTAP.
    static let touchpadKeys = "e420 10000 0 0 0 0"
    /// ABS_X, ABS_Y, ABS_MT_SLOT, ABS_MT_POSITION_X/Y, ABS_MT_TRACKING_ID.
    static let touchpadAbsolutes = "260800000000003"

    static func ancestor(
        _ subsystem: String?, _ syspath: String, devtype: String? = nil, driver: String? = nil,
        properties: [String: String] = [:], attributes: [String: String] = [:]
    ) -> UdevAncestorRecord {
        UdevAncestorRecord(
            subsystem: subsystem, devtype: devtype, sysname: String(syspath.split(separator: "/").last ?? ""),
            syspath: syspath, driver: driver, properties: properties, attributes: attributes)
    }

    static func eventNode(_ number: Int, input: UdevAncestorRecord, above: [UdevAncestorRecord], properties: [String: String] = [:]) -> UdevDeviceRecord {
        UdevDeviceRecord(
            subsystem: "input", sysname: "event\(number)", syspath: input.syspath + "/event\(number)",
            devnode: "/dev/input/event\(number)", properties: properties, ancestors: [input] + above)
    }

    static func hidrawNode(_ number: Int, hid: UdevAncestorRecord, above: [UdevAncestorRecord]) -> UdevDeviceRecord {
        UdevDeviceRecord(
            subsystem: "hidraw", sysname: "hidraw\(number)", syspath: hid.syspath + "/hidraw/hidraw\(number)",
            devnode: "/dev/hidraw\(number)", properties: [:], ancestors: [hid] + above)
    }

    /// A LED class device (`.../leds/NAME`) of the device `parent`: no device node.
    static func led(_ name: String, parent: UdevAncestorRecord, above: [UdevAncestorRecord]) -> UdevDeviceRecord {
        UdevDeviceRecord(
            subsystem: "leds", sysname: name, syspath: parent.syspath + "/leds/" + name, devnode: nil, properties: [:],
            ancestors: [parent] + above)
    }

    /// hid-playstation's three input devices (gamepad, motion sensors, touchpad) and the hidraw node of one
    /// DualSense under `hidParent` (uhid for Bluetooth, a USB interface for USB).
    static func dualSense(
        hidParent: [UdevAncestorRecord], bus: UInt16, hidInstance: Int, firstInput: Int, firstEvent: Int,
        hidraw: Int, mac: String, version: String = "8100", product: String = "ce6", hidPhys: String = ""
    ) -> [UdevDeviceRecord] {
        let busHex = hex(bus, width: 4)
        let hidName = "\(busHex):054C:0\(product.uppercased()).\(hex(hidInstance, width: 4).uppercased())"
        let hidPath = (hidParent.first?.syspath ?? "/sys/devices/virtual/misc/uhid") + "/" + hidName
        let hid = ancestor(
            "hid", hidPath, driver: "playstation",
            properties: [
                "HID_ID": "\(busHex):0000054C:00000\(product.uppercased())", "HID_NAME": dualSenseName,
                "HID_UNIQ": bus == 5 ? mac : "", "MODALIAS": "hid:b\(busHex)g0000v0000054Cp00000\(product.uppercased())",
                "HID_PHYS": hidPhys,
            ])
        func input(_ offset: Int, name: String, _ bitmaps: [String: String]) -> UdevAncestorRecord {
            ancestor(
                "input", "\(hidPath)/input/input\(firstInput + offset)",
                properties: bitmaps.merging([
                    "NAME": "\"\(name)\"", "UNIQ": "\"\(mac)\"", "PRODUCT": "\(bus)/54c/\(product)/\(version)",
                    "PHYS": "\"\"",
                ]) { first, _ in first })
        }
        let pad = input(0, name: dualSenseName, [
            "EV": "20000b", "KEY": dualSensePadKeys, "ABS": padAbsolutes, "FF": memlessRumble, "PROP": "0",
        ])
        let motion = input(1, name: dualSenseName + " Motion Sensors", ["EV": "19", "ABS": "3f", "MSC": "20", "PROP": "40"])
        let touchpad = input(2, name: dualSenseName + " Touchpad", [
            "EV": "b", "KEY": touchpadKeys, "ABS": touchpadAbsolutes, "PROP": "5",
        ])
        let above = [hid] + hidParent
        return [
            eventNode(firstEvent, input: pad, above: above),
            eventNode(firstEvent + 1, input: motion, above: above),
            eventNode(firstEvent + 2, input: touchpad, above: above),
            hidrawNode(hidraw, hid: hid, above: hidParent),
        ]
    }

    static let uhid = [ancestor("misc", "/sys/devices/virtual/misc/uhid")]

    /// A Switch Pro Controller over Bluetooth as hid-nintendo presents it: a gamepad node (the buttons of the gamepad
    /// convention and BTN_Z for capture, ABS_X/Y, ABS_RX/RY and the hat, memless rumble), an IMU node, a hidraw node;
    /// the driver sets bit 15 of the version (`8200` for the pad's 0x0200).
    static func bluetoothSwitchPro(hidInstance: Int = 2, firstInput: Int = 6, firstEvent: Int = 3, hidraw: Int = 0,
                                   mac: String = "98:B6:E9:D9:AE:4D") -> [UdevDeviceRecord] {
        let name = "Nintendo Switch Pro Controller"
        let hidPath = "/sys/devices/virtual/misc/uhid/0005:057E:2009.\(hex(hidInstance, width: 4))"
        let hid = ancestor(
            "hid", hidPath, driver: "nintendo",
            properties: ["HID_ID": "0005:0000057E:00002009", "HID_NAME": name, "HID_UNIQ": mac.lowercased()])
        func input(_ offset: Int, name: String, _ bitmaps: [String: String]) -> UdevAncestorRecord {
            ancestor(
                "input", "\(hidPath)/input/input\(firstInput + offset)",
                properties: bitmaps.merging(["NAME": "\"\(name)\"", "UNIQ": "\"\(mac)\"", "PRODUCT": "5/57e/2009/8200"]) {
                    first, _ in first
                })
        }
        let pad = input(0, name: name, [
            "EV": "20000b", "KEY": "7ffb000000000000 0 0 0 0", "ABS": "3001b", "FF": memlessRumble, "PROP": "0",
        ])
        let imu = input(1, name: name + " IMU", ["EV": "19", "ABS": "3f", "MSC": "20", "PROP": "40"])
        let above = [hid] + uhid
        let hidName = String(hidPath.split(separator: "/").last ?? "")
        let lights = ["blue:player-5"] + (1...4).map { "green:player-\($0)" }
        return lights.map { led("\(hidName):\($0)", parent: hid, above: uhid) } + [
            eventNode(firstEvent, input: imu, above: above),
            eventNode(firstEvent + 1, input: pad, above: above),
            hidrawNode(hidraw, hid: hid, above: uhid),
        ]
    }


    /// A DualSense over Bluetooth as the kernel sees it through uhid (the virtual DualSense, or BlueZ's input
    /// plugin): `/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0019/input/input12/event3` and siblings.
    static func bluetoothDualSense(
        hidInstance: Int = 0x19, firstInput: Int = 12, firstEvent: Int = 3, hidraw: Int = 0,
        mac: String = "0E:EC:77:D9:19:E9", hidPhys: String = ""
    ) -> [UdevDeviceRecord] {
        dualSense(
            hidParent: uhid, bus: 5, hidInstance: hidInstance, firstInput: firstInput, firstEvent: firstEvent,
            hidraw: hidraw, mac: mac, hidPhys: hidPhys)
    }

    static func usbChain(port: String) -> [UdevAncestorRecord] {
        let usbDevice = "/sys/devices/pci0000:00/0000:00:14.0/usb1/\(port)"
        return [
            ancestor("usb", "\(usbDevice)/\(port):1.3", devtype: "usb_interface", driver: "usbhid"),
            ancestor("usb", usbDevice, devtype: "usb_device", driver: "usb"),
            ancestor("usb", "/sys/devices/pci0000:00/0000:00:14.0/usb1", devtype: "usb_device", driver: "usb"),
            ancestor("pci", "/sys/devices/pci0000:00/0000:00:14.0", driver: "xhci_hcd"),
        ]
    }

    /// A DualSense on USB port 1-2 (interface 3 is its HID interface):
    /// `/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.3/0003:054C:0CE6.0007/input/input20/event10`.
    static func usbDualSense(
        port: String = "1-2", hidInstance: Int = 7, firstInput: Int = 20, firstEvent: Int = 10, hidraw: Int = 2,
        mac: String = "a0:5a:5c:12:34:56"
    ) -> [UdevDeviceRecord] {
        dualSense(
            hidParent: usbChain(port: port), bus: 3, hidInstance: hidInstance, firstInput: firstInput,
            firstEvent: firstEvent, hidraw: hidraw, mac: mac, version: "8111")
    }

    static let xbox360Bitmaps = [
        "EV": "20000b", "KEY": "7cdb000000000000 0 0 0 0", "ABS": padAbsolutes, "FF": memlessRumble,
        "NAME": "\"Microsoft X-Box 360 pad\"", "PRODUCT": "3/45e/28e/114", "UNIQ": "\"\"", "PROP": "0",
    ]

    /// A wired Xbox 360 pad bound by xpad on USB port 1-5: no HID device above it; its joystick node js0 comes too.
    /// `name`, `product` (the input device's PRODUCT) and `interfaceClass` (the interface's INTERFACE) make it
    /// another pad xpad drives: `xpadXbox360(name: "Logitech Gamepad F310", product: "3/46d/c21d/305")`.
    static func xpadXbox360(
        input: Int = 30, event: Int = 15, serial: String = "1B3C2F0", name: String = "Microsoft X-Box 360 pad",
        product: String = "3/45e/28e/114", interfaceClass: String = "255/93/1"
    ) -> [UdevDeviceRecord] {
        let usbDevice = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-5"
        let interface = ancestor(
            "usb", "\(usbDevice)/1-5:1.0", devtype: "usb_interface", driver: "xpad",
            properties: ["INTERFACE": interfaceClass, "DRIVER": "xpad"])
        let chain = [
            interface,
            ancestor("usb", usbDevice, devtype: "usb_device", driver: "usb", attributes: ["serial": serial]),
            ancestor("pci", "/sys/devices/pci0000:00/0000:00:14.0", driver: "xhci_hcd"),
        ]
        var properties = xbox360Bitmaps
        properties["NAME"] = "\"\(name)\""
        properties["PRODUCT"] = product
        let inputDevice = ancestor("input", "\(interface.syspath)/input/input\(input)", properties: properties)
        let joystick = UdevDeviceRecord(
            subsystem: "input", sysname: "js0", syspath: inputDevice.syspath + "/js0", devnode: "/dev/input/js0",
            properties: [:], ancestors: [inputDevice] + chain)
        // xpad's LED ring hangs off the USB device, not the interface; a keyboard's LED is nobody's pad's.
        let ring = led("xpad0", parent: chain[1], above: Array(chain.dropFirst(2)))
        let keyboard = ancestor("input", "/sys/devices/platform/i8042/serio0/input/input3")
        return [eventNode(event, input: inputDevice, above: chain), joystick, ring,
                led("input3::capslock", parent: keyboard, above: [])]
    }

    /// An Xbox 360 pad made through uinput (padbridge's own virtual pad): `/sys/devices/virtual/input/input7/event7`,
    /// nothing above the input device.
    static func uinputXbox360(input: Int = 7, event: Int = 7, phys: String? = nil) -> [UdevDeviceRecord] {
        var properties = xbox360Bitmaps
        if let phys { properties["PHYS"] = "\"\(phys)\"" }
        let inputDevice = ancestor("input", "/sys/devices/virtual/input/input\(input)", properties: properties)
        return [eventNode(event, input: inputDevice, above: [])]
    }

    /// A uinput keyboard (`mouse: false`) or mouse, as a remap bridge's virtual keyboard and mouse are made.
    static func uinputDesktopDevice(input: Int, event: Int, phys: String, mouse: Bool) -> [UdevDeviceRecord] {
        let properties =
            mouse
            ? ["EV": "7", "KEY": "1f0000 0 0 0 0", "REL": "1943", "NAME": "\"padbridge virtual mouse\"", "PHYS": "\"\(phys)\""]
            : ["EV": "3", "KEY": "ffffffff 0 0 0 0 0 ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff",
               "NAME": "\"padbridge virtual keyboard\"", "PHYS": "\"\(phys)\""]
        let inputDevice = ancestor("input", "/sys/devices/virtual/input/input\(input)", properties: properties)
        return [eventNode(event, input: inputDevice, above: [])]
    }

    /// A cheap USB HID gamepad (DragonRise 0079:0006, hid-generic) without a serial: joystick-range buttons
    /// BTN_TRIGGER...BTN_BASE6, ABS_X/Y/Z/RX/RZ and a hat.
    static func serialLessUSBGamepad(port: String, hidInstance: Int, input: Int, event: Int, hidraw: Int) -> [UdevDeviceRecord] {
        let chain = usbChain(port: port)
        let hidPath = "\(chain[0].syspath)/0003:0079:0006.\(hex(hidInstance, width: 4).uppercased())"
        let hid = ancestor(
            "hid", hidPath, driver: "hid-generic",
            properties: ["HID_ID": "0003:00000079:00000006", "HID_NAME": "DragonRise Inc.   Generic   USB  Joystick  ", "HID_UNIQ": ""])
        let inputDevice = ancestor(
            "input", "\(hidPath)/input/input\(input)",
            properties: [
                "EV": "1b", "KEY": "fff00000000 0 0 0 0", "ABS": "3002f", "MSC": "10",
                "NAME": "\"DragonRise Inc.   Generic   USB  Joystick  \"", "PRODUCT": "3/79/6/110", "UNIQ": "\"\"",
            ])
        return [eventNode(event, input: inputDevice, above: [hid] + chain), hidrawNode(hidraw, hid: hid, above: chain)]
    }

    /// A USB keyboard (Logitech K120): a HID device with a keyboard event node and a hidraw node; no pad.
    static func keyboard() -> [UdevDeviceRecord] {
        let chain = usbChain(port: "1-1")
        let hidPath = "\(chain[0].syspath)/0003:046D:C31C.0001"
        let hid = ancestor(
            "hid", hidPath, driver: "hid-generic",
            properties: ["HID_ID": "0003:0000046D:0000C31C", "HID_NAME": "Logitech USB Keyboard", "HID_UNIQ": ""])
        let inputDevice = ancestor(
            "input", "\(hidPath)/input/input2",
            properties: [
                "EV": "120013", "KEY": "1000000000007 ff9f207ac14057ff febeffdfffefffff fffffffffffffffe",
                "MSC": "10", "LED": "7", "NAME": "\"Logitech USB Keyboard\"", "PRODUCT": "3/46d/c31c/110",
            ])
        return [eventNode(0, input: inputDevice, above: [hid] + chain), hidrawNode(1, hid: hid, above: chain)]
    }

    /// A laptop's accelerometer (lis3lv02d): ABS_X/Y/Z with INPUT_PROP_ACCELEROMETER; no pad.
    static func laptopAccelerometer() -> [UdevDeviceRecord] {
        let platform = ancestor("platform", "/sys/devices/platform/lis3lv02d", driver: "lis3lv02d")
        let inputDevice = ancestor(
            "input", "/sys/devices/platform/lis3lv02d/input/input5",
            properties: ["EV": "9", "ABS": "7", "PROP": "40", "NAME": "\"ST LIS3LV02DL Accelerometer\"", "PRODUCT": "19/0/0/0"])
        return [eventNode(5, input: inputDevice, above: [platform])]
    }

    private static func hex(_ value: some BinaryInteger, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
