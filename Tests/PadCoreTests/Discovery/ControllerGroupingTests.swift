import PadCore
import Testing

@Suite struct NodeRoleTests {
    struct RoleCase: Sendable, CustomStringConvertible {
        var name: String
        var record: UdevDeviceRecord
        var role: EvdevNodeRole
        var description: String { name }
    }

    static let cases: [RoleCase] = {
        let dualSense = UdevFixtures.bluetoothDualSense()
        return [
            RoleCase(name: "DualSense gamepad", record: dualSense[0], role: .pad),
            RoleCase(name: "DualSense motion sensors", record: dualSense[1], role: .motion),
            RoleCase(name: "DualSense touchpad", record: dualSense[2], role: .touchpad),
            RoleCase(name: "xpad Xbox 360", record: UdevFixtures.xpadXbox360()[0], role: .pad),
            RoleCase(
                name: "joystick-range HID pad",
                record: UdevFixtures.serialLessUSBGamepad(port: "1-3", hidInstance: 3, input: 40, event: 20, hidraw: 5)[0],
                role: .pad),
            RoleCase(name: "keyboard", record: UdevFixtures.keyboard()[0], role: .other),
            RoleCase(name: "laptop accelerometer", record: UdevFixtures.laptopAccelerometer()[0], role: .motion),
        ]
    }()

    @Test(arguments: cases)
    func roleFromTheInputDevicesBitmaps(sample: RoleCase) throws {
        let input = try #require(sample.record.ancestors.first)
        let capabilities = InputDeviceCapabilities(udevProperties: input.properties)
        #expect(EvdevNodeRole(capabilities: capabilities) == sample.role)
    }

    @Test func joystickRangeKeysNeedBothStickAxes() {
        let keysOnly = InputDeviceCapabilities(keys: InputCapabilityBitmap(codes: [0x120, 0x121]))
        #expect(EvdevNodeRole(capabilities: keysOnly) == .other)
        let withStick = InputDeviceCapabilities(
            keys: InputCapabilityBitmap(codes: [0x120]), absolutes: InputCapabilityBitmap(codes: [0, 1]))
        #expect(EvdevNodeRole(capabilities: withStick) == .pad)
        let triggerHappy = InputDeviceCapabilities(
            keys: InputCapabilityBitmap(codes: [0x2c0, 0x2c1]), absolutes: InputCapabilityBitmap(codes: [0, 1]))
        #expect(EvdevNodeRole(capabilities: triggerHappy) == .pad)
    }

    @Test func udevsClassificationCountsWhenTheBitmapsSayNothing() {
        let empty = InputDeviceCapabilities()
        #expect(EvdevNodeRole(capabilities: empty, udevProperties: ["ID_INPUT_JOYSTICK": "1"]) == .pad)
        #expect(EvdevNodeRole(capabilities: empty, udevProperties: ["ID_INPUT_TOUCHPAD": "1"]) == .touchpad)
        #expect(EvdevNodeRole(capabilities: empty, udevProperties: ["ID_INPUT_ACCELEROMETER": "1"]) == .motion)
        #expect(EvdevNodeRole(capabilities: empty, udevProperties: ["ID_INPUT_JOYSTICK": "0"]) == .other)
    }

    @Test func aJoystickWithMultitouchIsAPad() {
        let both = InputDeviceCapabilities(
            keys: InputCapabilityBitmap(codes: [0x130, 0x14a]), absolutes: InputCapabilityBitmap(codes: [0, 1, 0x35, 0x36]))
        #expect(EvdevNodeRole(capabilities: both) == .pad)
    }
}

@Suite struct ControllerGroupingTests {
    @Test func aBridgesOwnVirtualPadIsMarkedByItsPhys() throws {
        let output = try #require(ControllerGrouping.controllers(
            from: UdevFixtures.uinputXbox360(phys: VirtualPadKind.xbox360.bridgeOutputPhysicalPath)).first)
        #expect(output.isBridgeOutput)
        // A test stand-in or another program's uinput pad, and a real pad, are not.
        for records in [UdevFixtures.uinputXbox360(phys: "padbridge-test/stand-in"), UdevFixtures.uinputXbox360(),
                        UdevFixtures.xpadXbox360()] {
            let pad = try #require(ControllerGrouping.controllers(from: records).first)
            #expect(!pad.isBridgeOutput, "\(pad.groupSyspath)")
        }
    }

    /// A remap bridge's virtual keyboard and mouse are listed with its virtual pad (by phys), not as controllers;
    /// another bridge's stay out of it.
    @Test func aBridgesKeyboardAndMouseJoinItsVirtualPad() throws {
        let pad = "padbridge-output/xbox360/remap-b43f9de35e24"
        let records =
            UdevFixtures.uinputXbox360(input: 7, event: 7, phys: pad)
            + UdevFixtures.uinputDesktopDevice(input: 9, event: 9, phys: pad + "/mouse", mouse: true)
            + UdevFixtures.uinputDesktopDevice(input: 8, event: 8, phys: pad + "/keyboard", mouse: false)
            + UdevFixtures.uinputDesktopDevice(input: 10, event: 10, phys: "padbridge-output/none/remap-0123456789ab/mouse", mouse: true)
        let controllers = ControllerGrouping.controllers(from: records)
        #expect(controllers.count == 1)
        let output = try #require(controllers.first)
        #expect(output.isBridgeOutput && output.physicalPath == pad)
        #expect(output.nodes.desktop == ["/dev/input/event8", "/dev/input/event9"])
        #expect(output.nodes.allPaths == ["/dev/input/event7"], "never read, grabbed or hidden with the pad")
    }

    /// A source that went away is taken back by its fingerprint, never from a bridge's virtual pad listed with it.
    @Test func aReturningPadIsNeverABridgesVirtualPad() throws {
        var output = try #require(ControllerGrouping.controllers(
            from: UdevFixtures.uinputXbox360(phys: VirtualPadKind.xbox360.bridgeOutputPhysicalPath)).first)
        var source = try #require(ControllerGrouping.controllers(
            from: UdevFixtures.uinputXbox360(phys: "padbridge-test/stand-in")).first)
        output.fingerprint = source.fingerprint  // identical pads are numbered by order: the collision seen live
        #expect(Controller.returning(source.fingerprint, among: [output]) == nil)
        #expect(Controller.returning(source.fingerprint, among: [output, source]) == source)
        source.fingerprint = Fingerprint(rawValue: "000000000000")
        #expect(Controller.returning(output.fingerprint, among: [source]) == nil)
    }

    /// hid-playstation leaves its input devices' phys empty: a bridge's virtual DualSense (uhid) carries its mark in
    /// the HID device's HID_PHYS only. Without looking there, `remap --all` bridged its own virtual DualSense again.
    @Test func aBridgesOwnVirtualDualSenseIsMarkedByItsHIDPhys() throws {
        let output = try #require(ControllerGrouping.controllers(
            from: UdevFixtures.bluetoothDualSense(hidPhys: VirtualPadKind.dualSense.bridgeOutputPhysicalPath)).first)
        #expect(output.isBridgeOutput)
        // `padbridge virtual`'s DualSense (a test stand-in) and a real one are not.
        for hidPhys in ["padbridge/0e:ec:77:d9:19:e9", "", "00:1a:7d:da:71:13"] {
            let pad = try #require(ControllerGrouping.controllers(from: UdevFixtures.bluetoothDualSense(hidPhys: hidPhys)).first)
            #expect(!pad.isBridgeOutput, "HID_PHYS \(hidPhys)")
        }
    }

    @Test func bluetoothDualSenseIsOneControllerWithFourNodes() throws {
        let controllers = ControllerGrouping.controllers(from: UdevFixtures.bluetoothDualSense())
        try #require(controllers.count == 1)
        let pad = controllers[0]
        #expect(pad.kind == .dualSense)
        #expect(pad.bus == .bluetooth)
        #expect(pad.name == UdevFixtures.dualSenseName)
        #expect((pad.vendorID, pad.productID, pad.version) == (0x054c, 0x0ce6, 0x8100))
        #expect(pad.serial == "0e:ec:77:d9:19:e9")
        #expect(pad.driver == "playstation")
        #expect(pad.groupSyspath == "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0019")
        #expect(pad.portPath == "virtual/misc/uhid/0005:054C:0CE6")
        #expect(pad.nodes.evdev.map(\.path) == ["/dev/input/event3", "/dev/input/event4", "/dev/input/event5"])
        #expect(pad.nodes.evdev.map(\.role) == [.pad, .motion, .touchpad])
        #expect(pad.nodes.evdev[0].inputSyspath == "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0019/input/input12")
        #expect(pad.nodes.hidraw == "/dev/hidraw0")

        let capabilities = pad.capabilities
        let expectedButtons = ButtonSet(Button.allCases.filter { ![.misc1, .paddle1, .paddle2, .paddle3, .paddle4].contains($0) })
        #expect(capabilities.buttons == expectedButtons, "\(capabilities.buttons.pressed)")
        #expect(capabilities.axes == Axis.allCases)
        #expect(capabilities.touchpad && capabilities.motion && capabilities.rumble && capabilities.battery)
        #expect(capabilities.lightbar && capabilities.playerLeds && capabilities.adaptiveTriggers)
    }

    @Test func usbDualSenseGroupsUnderItsHIDDeviceAndDerivesItsPort() throws {
        let controllers = ControllerGrouping.controllers(from: UdevFixtures.usbDualSense())
        try #require(controllers.count == 1)
        let pad = controllers[0]
        #expect(pad.bus == .usb)
        #expect(pad.version == 0x8111)
        #expect(pad.serial == "a0:5a:5c:12:34:56")
        #expect(pad.groupSyspath == "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.3/0003:054C:0CE6.0007")
        #expect(pad.portPath == "pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.3/0003:054C:0CE6")
        #expect(pad.nodes.hidraw == "/dev/hidraw2")
    }

    @Test func udevsIDPathIsThePortWhenPresent() throws {
        var records = UdevFixtures.usbDualSense()
        records[0].properties["ID_PATH"] = "pci-0000:00:14.0-usb-0:2:1.3"
        let pad = try #require(ControllerGrouping.controllers(from: records).first)
        #expect(pad.portPath == "pci-0000:00:14.0-usb-0:2:1.3")
    }

    @Test func xpadPadGroupsUnderItsUSBInterface() throws {
        let controllers = ControllerGrouping.controllers(from: UdevFixtures.xpadXbox360())
        try #require(controllers.count == 1)
        let pad = controllers[0]
        #expect(pad.kind == .xbox360)
        #expect(pad.name == "Microsoft X-Box 360 pad")
        #expect(pad.driver == "xpad")
        #expect(pad.serial == "1B3C2F0")
        #expect(pad.groupSyspath == "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0")
        #expect(pad.nodes.evdev.map(\.path) == ["/dev/input/event15"])  // js0 is not an event node
        #expect(pad.nodes.hidraw == nil)
        let capabilities = pad.capabilities
        #expect(capabilities.rumble && !capabilities.lightbar && !capabilities.battery && !capabilities.touchpad)
        #expect(capabilities.buttons.contains(.x) && capabilities.buttons.contains(.y) && capabilities.buttons.contains(.dpup))
        #expect(!capabilities.buttons.contains(.touchpad))
        #expect(capabilities.axes == Axis.allCases)
    }

    @Test func aThirdPartyPadThatXpadDrivesIsAnXbox360Pad() throws {
        // The Logitech F310 in its XInput mode: ids padbridge's table does not know, xpad's name for it.
        let records = UdevFixtures.xpadXbox360(name: "Logitech Gamepad F310", product: "3/46d/c21d/305")
        let pad = try #require(ControllerGrouping.controllers(from: records).first)
        #expect(pad.kind == .xbox360)
        #expect((pad.vendorID, pad.productID) == (0x046d, 0xc21d))
        #expect(pad.name == "Logitech Gamepad F310")
        #expect(pad.driver == "xpad")
        #expect(pad.capabilities.rumble && !pad.capabilities.lightbar)
        #expect(pad.capabilities.playerLeds, "xpad's LED ring")
        #expect(pad.nodes.leds == ["/sys/class/leds/xpad0"], "the ring, under the USB device; not the keyboard's LED")
        #expect(!pad.nodes.allPaths.contains { $0.hasPrefix("/sys/") }, "LEDs are no device nodes (nothing to hide)")
        #expect([Button.a, .b, .x, .y, .guide, .leftshoulder, .dpup].allSatisfy { pad.capabilities.buttons.contains($0) })
        #expect(pad.capabilities.axes == Axis.allCases)
    }

    @Test func aPadThatXpadDrivesOverTheXboxOneProtocolIsAnXboxOnePad() throws {
        let records = UdevFixtures.xpadXbox360(
            name: "Generic X-Box pad", product: "3/1234/5678/100", interfaceClass: "255/71/208")
        let pad = try #require(ControllerGrouping.controllers(from: records).first)
        #expect(pad.kind == .xboxOne)
        #expect(!pad.capabilities.playerLeds, "xpad makes no LED class device for an Xbox One pad")
    }

    @Test func aSwitchProControllerIsOneControllerWithItsIMUAndPlayerLights() throws {
        let controllers = ControllerGrouping.controllers(from: UdevFixtures.bluetoothSwitchPro())
        try #require(controllers.count == 1)
        let pad = controllers[0]
        #expect(pad.kind == .switchPro && pad.bus == .bluetooth && pad.driver == "nintendo")
        #expect(pad.name == "Nintendo Switch Pro Controller")
        #expect(pad.nodes.evdev.map(\.path) == ["/dev/input/event4", "/dev/input/event3"], "the pad node first")
        #expect(pad.nodes.evdev.map(\.role) == [.pad, .motion])
        #expect(pad.nodes.hidraw == "/dev/hidraw0")
        #expect(pad.nodes.leds == ["blue:player-5", "green:player-1", "green:player-2", "green:player-3", "green:player-4"]
            .map { "/sys/class/leds/0005:057E:2009.0002:\($0)" }, "its LEDs, the home light too, in order")
        let capabilities = pad.capabilities
        #expect(capabilities.buttons.contains(.misc1), "capture (BTN_Z)")
        #expect(capabilities.axes == Axis.allCases, "ZL/ZR are the triggers")
        #expect(capabilities.motion && capabilities.rumble && capabilities.playerLeds)
        #expect(!capabilities.lightbar && !capabilities.touchpad && !capabilities.adaptiveTriggers)
    }

    @Test func theIDTableStillNamesXpadPadsItKnows() throws {
        // An Xbox One S pad by its ids, whatever udev says of the interface (older records carry no INTERFACE).
        var records = UdevFixtures.xpadXbox360(product: "3/45e/2ea/301", interfaceClass: "")
        #expect(ControllerGrouping.controllers(from: records).first?.kind == .xboxOne)
        records = UdevFixtures.xpadXbox360(interfaceClass: "")
        #expect(ControllerGrouping.controllers(from: records).first?.kind == .xbox360)
    }

    @Test func unknownIDsUnderAnotherDriverStayGeneric() throws {
        let records = UdevFixtures.serialLessUSBGamepad(port: "1-3", hidInstance: 4, input: 12, event: 6, hidraw: 1)
        #expect(ControllerGrouping.controllers(from: records).first?.kind == .generic)
        #expect(ControllerKind(usbInterfaceDriver: "usbhid", interfaceClass: "3/0/0") == nil)
        #expect(ControllerKind(usbInterfaceDriver: nil, interfaceClass: nil) == nil)
    }

    @Test func uinputPadGroupsByItsInputDevice() throws {
        let pad = try #require(ControllerGrouping.controllers(from: UdevFixtures.uinputXbox360()).first)
        #expect(pad.groupSyspath == "/sys/devices/virtual/input/input7")
        #expect(pad.portPath == "virtual/input/input")
        #expect(pad.driver == nil)
        #expect(pad.serial == nil)
        #expect(pad.kind == .xbox360 && !pad.capabilities.playerLeds, "an Xbox 360 pad xpad does not drive has no ring")
    }

    @Test func keyboardsAndAccelerometersAreNoControllers() {
        let records = UdevFixtures.keyboard() + UdevFixtures.laptopAccelerometer()
        #expect(ControllerGrouping.controllers(from: records).isEmpty)
    }

    @Test func controllersComeInPadNodeOrderAmongOtherDevices() {
        let records =
            UdevFixtures.keyboard() + UdevFixtures.usbDualSense(firstEvent: 10) + UdevFixtures.laptopAccelerometer()
            + UdevFixtures.xpadXbox360(event: 15) + UdevFixtures.bluetoothDualSense(firstEvent: 3)
            + UdevFixtures.uinputXbox360(event: 7)
        let controllers = ControllerGrouping.controllers(from: records)
        #expect(controllers.map { $0.nodes.evdev[0].path } == [
            "/dev/input/event3", "/dev/input/event7", "/dev/input/event10", "/dev/input/event15",
        ])
        #expect(controllers.map(\.kind) == [.dualSense, .xbox360, .dualSense, .xbox360])
    }

    @Test func genericPadGetsTheConventionsCapabilities() throws {
        let records = UdevFixtures.serialLessUSBGamepad(port: "1-3", hidInstance: 3, input: 40, event: 20, hidraw: 5)
        let pad = try #require(ControllerGrouping.controllers(from: records).first)
        #expect(pad.kind == .generic)
        #expect(pad.driver == "hid-generic")
        #expect(pad.serial == nil)
        // Joystick-range buttons mean nothing to the convention; sticks, ABS_Z/ABS_RZ and the hat do.
        #expect(pad.capabilities.buttons == ButtonSet([.dpup, .dpdown, .dpleft, .dpright]))
        #expect(pad.capabilities.axes == [.leftx, .lefty, .rightx, .lefttrigger, .righttrigger])
        #expect(!pad.capabilities.rumble)
    }

    @Test func identityFallsBackToTheHIDDevicesID() throws {
        var records = UdevFixtures.bluetoothDualSense()
        for index in 0..<3 { records[index].ancestors[0].properties["PRODUCT"] = nil }
        let pad = try #require(ControllerGrouping.controllers(from: records).first)
        #expect((pad.bus, pad.vendorID, pad.productID, pad.version) == (.bluetooth, 0x054c, 0x0ce6, 0))
        #expect(pad.kind == .dualSense)
    }

    @Test func identityFallsBackToTheInputDevicesAttributesAsSysfsWritesThem() throws {
        // Without PRODUCT, the `id/*` attributes: sysfs ends each value in a newline. A USB serial may be padded.
        var records = UdevFixtures.xpadXbox360(serial: "  1B3C2F0 \n")
        records[0].ancestors[0].properties["PRODUCT"] = nil
        records[0].ancestors[0].attributes = [
            "id/bustype": "0003\n", "id/vendor": " 045e\n", "id/product": "028e\n", "id/version": "0114\n",
        ]
        let pad = try #require(ControllerGrouping.controllers(from: records).first)
        #expect((pad.bus, pad.vendorID, pad.productID, pad.version) == (.usb, 0x045e, 0x028e, 0x0114))
        #expect(pad.serial == "1B3C2F0")
        #expect(pad.kind == .xbox360)
    }

    @Test func blankOrOversizedIDAttributesAreNoIdentity() throws {
        var records = UdevFixtures.xpadXbox360()
        records[0].ancestors[0].properties["PRODUCT"] = nil
        records[0].ancestors[0].attributes = ["id/bustype": " \n", "id/vendor": "045e", "id/product": "1028e0000"]
        let pad = try #require(ControllerGrouping.controllers(from: records).first)
        #expect((pad.vendorID, pad.productID) == (0, 0))
    }

    @Test(arguments: [
        ("/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0019", "virtual/misc/uhid/0005:054C:0CE6"),
        ("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.3/0003:054C:0CE6.0007",
         "pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.3/0003:054C:0CE6"),
        ("/sys/devices/virtual/input/input7", "virtual/input/input"),
        ("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-10/1-10:1.0/bluetooth/hci0/hci0:256/0005:054C:0CE6.001A",
         "pci0000:00/0000:00:14.0/usb1/1-10/1-10:1.0/bluetooth/hci0/hci0/0005:054C:0CE6"),
        ("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0", "pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0"),
    ])
    func derivedPortPathDropsPerConnectionNumbers(syspath: String, expected: String) {
        #expect(ControllerGrouping.derivedPortPath(fromSyspath: syspath) == expected)
    }
}
