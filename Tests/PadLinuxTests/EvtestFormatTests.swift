import CLibEvdev
import Glibc
import PadCore
@testable import PadLinux
import Testing

@Suite("evtest-format text")
struct EvtestFormatTests {
    @Test(arguments: [
        (EvdevEvent(seconds: 1_700_000_000, microseconds: 123_456, type: 1, code: 304, value: 1),
         "Event: time 1700000000.123456, type 1 (EV_KEY), code 304 (BTN_SOUTH), value 1"),
        (EvdevEvent(seconds: 5, microseconds: 42, type: 3, code: 0, value: -32768),
         "Event: time 5.000042, type 3 (EV_ABS), code 0 (ABS_X), value -32768"),
        (EvdevEvent(seconds: 5, microseconds: 0, type: 0, code: 0, value: 0),
         "Event: time 5.000000, -------------- SYN_REPORT ------------"),
        (EvdevEvent(seconds: 5, microseconds: 1, type: 0, code: 2, value: 0),
         "Event: time 5.000001, ++++++++++++++ SYN_MT_REPORT ++++++++++++"),
        (EvdevEvent(seconds: 5, microseconds: 1, type: 0, code: 3, value: 0),
         "Event: time 5.000001, >>>>>>>>>>>>>> SYN_DROPPED <<<<<<<<<<<<"),
        // MSC_SCAN and MSC_RAW in hex, "%02x" of an int.
        (EvdevEvent(seconds: 7, microseconds: 999_999, type: 4, code: 4, value: 0x90001),
         "Event: time 7.999999, type 4 (EV_MSC), code 4 (MSC_SCAN), value 90001"),
        (EvdevEvent(seconds: 7, microseconds: 0, type: 4, code: 4, value: 5),
         "Event: time 7.000000, type 4 (EV_MSC), code 4 (MSC_SCAN), value 05"),
        (EvdevEvent(seconds: 7, microseconds: 0, type: 4, code: 3, value: -1),
         "Event: time 7.000000, type 4 (EV_MSC), code 3 (MSC_RAW), value ffffffff"),
        // MSC_TIMESTAMP stays decimal.
        (EvdevEvent(seconds: 7, microseconds: 0, type: 4, code: 5, value: 255),
         "Event: time 7.000000, type 4 (EV_MSC), code 5 (MSC_TIMESTAMP), value 255"),
        // Codes libevdev has no name for print "?", as evtest does.
        (EvdevEvent(seconds: 1, microseconds: 0, type: 3, code: 0x3e, value: 1),
         "Event: time 1.000000, type 3 (EV_ABS), code 62 (?), value 1"),
    ])
    func eventLines(event: EvdevEvent, line: String) {
        #expect(EvtestFormat.eventLine(event) == line)
    }

    @Test func headerOfAPadWithAxesSwitchesRepeatAndProperties() {
        let info = EvdevDeviceInfo(
            driverVersion: 0x010001, bus: 0x05, vendor: 0x054C, product: 0x0CE6, version: 0x8001,
            name: "Sony Interactive Entertainment DualSense Wireless Controller Motion Sensors",
            eventTypes: [0, 1, 3, 5, 20],
            codes: [1: [304], 3: [0, 3], 5: [0, 1]],
            absoluteInfo: [
                0: EvdevAbsoluteInfo(value: -3, minimum: -32768, maximum: 32767, fuzz: 16, flat: 0, resolution: 8192),
                3: EvdevAbsoluteInfo(value: 0, minimum: 0, maximum: 255),
            ],
            states: [5: [0: 1, 1: 0]],
            keyRepeat: .init(delay: 250, period: 33),
            properties: [6])
        #expect(EvtestFormat.headerLines(info) == [
            "Input driver version is 1.0.1",
            "Input device ID: bus 0x5 vendor 0x54c product 0xce6 version 0x8001",
            "Input device name: \"Sony Interactive Entertainment DualSense Wireless Controller Motion Sensors\"",
            "Supported events:",
            "  Event type 0 (EV_SYN)",
            "  Event type 1 (EV_KEY)",
            "    Event code 304 (BTN_SOUTH)",
            "  Event type 3 (EV_ABS)",
            "    Event code 0 (ABS_X)",
            "      Value     -3",
            "      Min   -32768",
            "      Max    32767",
            "      Fuzz      16",
            "      Resolution    8192",
            "    Event code 3 (ABS_RX)",
            "      Value      0",
            "      Min        0",
            "      Max      255",
            "  Event type 5 (EV_SW)",
            "    Event code 0 (SW_LID) state 1",
            "    Event code 1 (SW_TABLET_MODE) state 0",
            "Key repeat handling:",
            "  Repeat type 20 (EV_REP)",
            "    Repeat code 0 (REP_DELAY)",
            "      Value    250",
            "    Repeat code 1 (REP_PERIOD)",
            "      Value     33",
            "Properties:",
            "  Property type 6 (INPUT_PROP_ACCELEROMETER)",
        ])
    }
}

@Suite("Pad discovery helpers")
struct DiscoveryHelperTests {
    @Test(arguments: [
        ("85", "Charging", BatteryState(percent: 85, charging: true)),
        ("100\n", "Full\n", BatteryState(percent: 100, charging: true)),
        ("55", "Discharging", BatteryState(percent: 55, charging: false)),
        ("40", "Not charging", BatteryState(percent: 40, charging: false)),
        ("5", nil, BatteryState(percent: 5, charging: false)),
        ("120", "Unknown", BatteryState(percent: 100, charging: false)),
    ] as [(String?, String?, BatteryState)])
    func powerSupplyText(capacity: String?, status: String?, expected: BatteryState) {
        #expect(ControllerBattery.state(capacity: capacity, status: status) == expected)
    }

    @Test(arguments: [nil, "", "full", "-1"] as [String?])
    func noBatteryWithoutACapacity(capacity: String?) {
        #expect(ControllerBattery.state(capacity: capacity, status: "Charging") == nil)
    }

    @Test func batteryBelowAHIDDevice() throws {
        let root = "/tmp/padbridge-battery-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let hid = "\(root)/0005:054C:0CE6.0019"
        let supply = "\(hid)/power_supply/ps-controller-battery-c6:2f:00:00:00:01"
        #expect(system("mkdir -p '\(supply)' && printf '65\\n' > '\(supply)/capacity' && printf 'Charging\\n' > '\(supply)/status'") == 0)
        defer { _ = system("rm -rf '\(root)'") }
        #expect(ControllerBattery.state(ofHIDDevice: hid) == BatteryState(percent: 65, charging: true))
        #expect(ControllerBattery.state(ofHIDDevice: "\(root)/absent") == nil)
    }

    @Test func monitorSourceFollowsUdevd() {
        #expect(UdevMonitor.Source.choosing(udevdRunning: true) == .udev)
        #expect(UdevMonitor.Source.choosing(udevdRunning: false) == .kernel)
        #expect(UdevMonitor.Source.automatic() == (access("/run/udev/control", F_OK) == 0 ? .udev : .kernel))
    }

    @Test func holdersAreNamed() {
        typealias Holder = DeviceNodeHolders.Holder
        #expect(DeviceNodeHolders.describe([]) == nil)
        #expect(DeviceNodeHolders.describe([Holder(pid: 812, command: "evtest")]) == "evtest (pid 812)")
        #expect(DeviceNodeHolders.describe([Holder(pid: 812, command: "evtest"), Holder(pid: 977, command: "steam")])
            == "one of evtest (pid 812), steam (pid 977)")
    }

    /// Another process with the node open is found through /proc, as fuser finds it.
    @Test func holdersOfAnOpenFileAreFound() throws {
        let path = "/tmp/padbridge-holder-\(getpid())"
        #expect(system("touch '\(path)'") == 0)
        defer { unlink(path) }
        #expect(DeviceNodeHolders.processes(holding: path).isEmpty)
        // A child that opens the file on fd 3, says so, and keeps it open until terminated.
        let child = try ChildProcess(["/bin/sh", "-c", "exec 3<'\(path)'; echo ready; exec sleep 30"])
        child.awaitFirstByte()
        let holders = DeviceNodeHolders.processes(holding: path)
        #expect(holders.map(\.pid) == [child.pid])
        #expect(holders.first?.command.isEmpty == false)
        child.terminate()
    }

    @Test func busyWithoutAKnownHolderSaysHowToFindIt() {
        var error = DeviceAccessError.ioctl("EVIOCGRAB", path: "/dev/input/event7", .resourceBusy)
        error.remedy = .closeOtherProgram(nil)
        #expect(error.description.contains("fuser -v /dev/input/event7"))
        error.remedy = .closeOtherProgram("evtest (pid 812)")
        #expect(error.description.contains("evtest (pid 812) holds it exclusively"))
    }

    @Test func enumerationWorksWhereverSysfsIs() throws {
        // On a machine without input devices (this project's build hosts) the list is simply empty.
        let records = try UdevContext().padNodeRecords()
        for record in records {
            #expect(["input", "hidraw", "leds"].contains(record.subsystem))
            #expect(record.devnode != nil || record.subsystem == "leds", "a node has a device node; a LED has none")
            #expect(!record.ancestors.isEmpty)
        }
    }
}
