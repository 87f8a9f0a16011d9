import PadCore
@testable import PadLinux
import Testing

/// A machine described in a few lines: which paths exist, which are writable, which files say what.
private struct DescribedMachine: SystemFacts {
    var files: [String: String] = [:]
    var nodes: Set<String> = []
    var writable: Set<String> = []
    var readable: Set<String> = []
    var directories: Set<String> = []
    var kernelRelease = "6.1.0-56-amd64"
    var isRoot = false
    var grabbed: [String: String] = [:]

    func exists(_ path: String) -> Bool { nodes.contains(path) || files[path] != nil || directories.contains(path) }
    func isWritable(_ path: String) -> Bool { writable.contains(path) }
    func isReadable(_ path: String) -> Bool { readable.contains(path) }
    func entries(of directory: String) -> [String] {
        files.keys.filter { $0.hasPrefix(directory + "/") }.map { String($0.dropFirst(directory.count + 1)) }.sorted()
    }
    func contents(of file: String) -> String? { files[file] }
    func grabHolder(of node: String) -> String? { grabbed[node] }

    /// A desktop where everything is set up.
    static var healthy: DescribedMachine {
        var machine = DescribedMachine()
        machine.nodes = ["/dev/uinput", "/dev/uhid"]
        machine.writable = machine.nodes
        machine.directories = ["/sys/module/hid_playstation", "/sys/module/uinput", "/sys/module/uhid"]
        machine.files["/etc/udev/rules.d/70-padbridge.rules"] =
            "# comment KERNEL==\"uinput\" uaccess\nKERNEL==\"uinput\", SUBSYSTEM==\"misc\", TAG+=\"uaccess\"\n"
        machine.files["/etc/modules-load.d/padbridge-modules.conf"] = "# boot\nuinput\nuhid\n"
        return machine
    }
}

private func controller(lightbar: Bool, hidraw: String? = "/dev/hidraw3") -> Controller {
    Controller(
        fingerprint: Fingerprint(rawValue: "0123456789ab"), name: "Test Pad", kind: lightbar ? .dualSense : .generic,
        bus: .usb, vendorID: 0x054c, productID: 0x0ce6, version: 0x8111, serial: nil, portPath: nil,
        capabilities: Capabilities(lightbar: lightbar),
        nodes: ControllerNodes(
            evdev: [EvdevNode(path: "/dev/input/event7", role: .pad, inputSyspath: "/sys/devices/x/input/input9")],
            hidraw: hidraw),
        groupSyspath: "/sys/devices/x", driver: "playstation")
}

@Suite struct SetupInspectionTests {
    @Test func aHealthyMachineHasNothingToFix() {
        let findings = SetupInspection(facts: DescribedMachine.healthy).findings(for: [])
        #expect(findings.allSatisfy { $0.severity == .ok }, "\(findings)")
        #expect(findings.map(\.subject).starts(with: ["/dev/uinput", "/dev/uhid", "hid-playstation", "udev rules"]))
    }

    @Test func aMissingUinputIsAProblemWhoseFixIsModprobe() {
        var machine = DescribedMachine.healthy
        machine.nodes.remove("/dev/uinput")
        machine.directories.remove("/sys/module/uinput")
        machine.files["/lib/modules/6.1.0-56-amd64/modules.dep"] =
            "kernel/drivers/input/misc/uinput.ko.xz:\nkernel/drivers/hid/uhid.ko.xz:\n"
        let finding = SetupInspection(facts: machine).virtualDeviceNodes()[0]
        #expect(finding.severity == .problem)
        #expect(finding.subject == "/dev/uinput")
        #expect(finding.fix?.hasPrefix("sudo modprobe uinput") == true)
    }

    @Test func withoutAModuleTreeTheAdviceIsStillModprobe() {
        var machine = DescribedMachine.healthy
        machine.nodes.remove("/dev/uinput")
        machine.directories.remove("/sys/module/uinput")
        let finding = SetupInspection(facts: machine).virtualDeviceNodes()[0]
        #expect(finding.severity == .problem)
        #expect(finding.fix?.hasPrefix("sudo modprobe uinput") == true)
        #expect(finding.fix?.contains("CONFIG_INPUT_UINPUT") == true)
    }

    @Test func aKernelWithoutTheModuleSaysSoInsteadOfModprobe() {
        var machine = DescribedMachine.healthy
        machine.nodes.remove("/dev/uhid")
        machine.directories.remove("/sys/module/uhid")
        machine.files["/lib/modules/6.1.0-56-amd64/modules.dep"] = "kernel/drivers/input/misc/uinput.ko.xz:\n"
        let finding = SetupInspection(facts: machine).virtualDeviceNodes()[1]
        #expect(finding.severity == .problem)
        #expect(finding.finding.contains("has no uhid module"))
        #expect(finding.fix?.contains("CONFIG_UHID") == true)
        #expect(finding.fix?.contains("modprobe") == false)
    }

    @Test func anUnwritableUinputNamesTheUdevRule() {
        var machine = DescribedMachine.healthy
        machine.writable.remove("/dev/uinput")
        let finding = SetupInspection(facts: machine).virtualDeviceNodes()[0]
        #expect(finding.severity == .problem)
        #expect(finding.fix?.contains("udev/70-padbridge.rules /etc/udev/rules.d/") == true)
    }

    @Test func anUnwritableUhidIsAdviceNamingThePadbridgeGroup() {
        var machine = DescribedMachine.healthy
        machine.writable.remove("/dev/uhid")
        let finding = SetupInspection(facts: machine).virtualDeviceNodes()[1]
        #expect(finding.severity == .advice)
        #expect(finding.fix?.contains("usermod -aG padbridge") == true)
    }

    @Test func aRuleSortedAfterSeatLateIsFlagged() {
        var machine = DescribedMachine.healthy
        let text = machine.files.removeValue(forKey: "/etc/udev/rules.d/70-padbridge.rules")
        machine.files["/etc/udev/rules.d/99-padbridge.rules"] = text
        let finding = SetupInspection(facts: machine).udevRules()[0]
        #expect(finding.severity == .advice)
        #expect(finding.finding.contains("73-seat-late.rules"))
    }

    @Test func aCommentedOutRuleDoesNotCount() {
        var machine = DescribedMachine.healthy
        machine.files["/etc/udev/rules.d/70-padbridge.rules"] = "# KERNEL==\"uinput\", TAG+=\"uaccess\"\n"
        let finding = SetupInspection(facts: machine).udevRules()[0]
        #expect(finding.severity == .advice)
        #expect(finding.fix?.contains("udevadm control --reload") == true)
    }

    @Test func rootNeedsNoRuleButStillHearsAboutModulesAtBoot() {
        var machine = DescribedMachine.healthy
        machine.isRoot = true
        machine.files = [:]
        let findings = SetupInspection(facts: machine).udevRules()
        #expect(findings.map(\.severity) == [.ok, .advice])
        #expect(findings[1].fix == "sudo install -m644 udev/padbridge-modules.conf /etc/modules-load.d/")
    }

    @Test func aGrabbedPadIsAProblemNamingWhoHasItOpen() {
        var machine = DescribedMachine.healthy
        machine.readable = ["/dev/input/event7"]
        machine.writable.insert("/dev/hidraw3")
        machine.grabbed["/dev/input/event7"] = "steam (pid 812)"
        let findings = SetupInspection(facts: machine).controllerAccess(controller(lightbar: true))
        #expect(findings.map(\.severity) == [.ok, .ok, .problem])
        #expect(findings[2].finding.contains("steam (pid 812)"))
    }

    @Test func unreadableAndUnwritableNodesAreAdvice() {
        let findings = SetupInspection(facts: DescribedMachine.healthy).controllerAccess(controller(lightbar: true))
        #expect(findings.map(\.severity) == [.advice, .advice])
        #expect(findings[0].finding.contains("/dev/input/event7"))
        #expect(findings[1].finding.contains("/dev/hidraw3"))
    }

    @Test func doctorSaysWhatEachPadCanDoAndWhatNot() {
        var machine = DescribedMachine.healthy
        machine.readable = ["/dev/input/event7"]
        var xbox = controller(lightbar: false, hidraw: nil)
        xbox.capabilities = Capabilities(buttons: ButtonSet([Button.a, .b]), axes: [.leftx], rumble: true, playerLeds: true)
        xbox.driver = "xpad"
        let findings = SetupInspection(facts: machine).findings(for: [xbox])
        let support = findings.filter { $0.subject == "Test Pad [0123456789ab]" }.map(\.finding)
        #expect(support.first == "padbridge can use its 2 buttons, 1 axis, rumble, player LEDs through xpad; it has "
            + "no lightbar, adaptive triggers, motion, touchpad, battery padbridge can reach")
        #expect(support.dropFirst() == ["event nodes readable"])
    }

    @Test func hidrawAccessMattersOnlyForPadsFedThroughIt() {
        var machine = DescribedMachine.healthy
        machine.readable = ["/dev/input/event7"]
        let findings = SetupInspection(facts: machine).controllerAccess(controller(lightbar: false))
        #expect(findings.map(\.severity) == [.ok])
    }
}
