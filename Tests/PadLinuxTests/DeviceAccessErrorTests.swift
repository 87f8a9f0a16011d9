@testable import PadLinux
import SystemPackage
import Testing

@Suite("DeviceAccessError messages")
struct DeviceAccessErrorTests {
    static let installCommand =
        "sudo install -m644 udev/70-padbridge.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger"

    @Test(arguments: ["/dev/uinput", "/dev/hidraw3"], [Errno.permissionDenied, .notPermitted])
    func permissionDeniedNamesTheUdevRule(path: String, errno: Errno) {
        let error = DeviceAccessError.opening(path, errno)
        #expect(error.code == .permissionDenied)
        #expect(error.path == path)
        #expect(error.cause == errno)
        #expect(error.remedy == .installUdevRule(file: "udev/70-padbridge.rules"))
        #expect(error.description.contains(path))
        #expect(error.description.contains(Self.installCommand))
        #expect(error.description.contains("73-seat-late.rules"))
    }

    /// uhid is the padbridge group's, an opt-in (docs/hiding.md): the fix is joining it, not the uaccess rule.
    @Test(arguments: [Errno.permissionDenied, .notPermitted])
    func uhidRefusedNamesThePadbridgeGroup(errno: Errno) {
        let error = DeviceAccessError.opening("/dev/uhid", errno)
        #expect(error.code == .permissionDenied)
        #expect(error.remedy == .joinUhidGroup)
        #expect(error.description.contains("sudo usermod -aG padbridge $USER"))
        #expect(error.description.contains("udev/71-padbridge-service.rules"))
        #expect(error.description.contains("docs/install.md") || error.description.contains("docs/hiding.md"))
        #expect(!error.description.contains(Self.installCommand))
    }

    /// xpad's LED ring is a sysfs attribute: no uaccess ACL reaches it; the rule gives it to the group input.
    @Test func anXpadLedRingRefusedNamesTheInputGroup() {
        let path = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/leds/xpad0/brightness"
        let error = DeviceAccessError.opening(path, .permissionDenied)
        #expect(error.remedy == .joinInputGroupForLedRing)
        #expect(error.description.contains("sudo usermod -aG input $USER"))
        #expect(error.description.contains("udev/70-padbridge.rules"))
        let switchLight = "/sys/devices/virtual/misc/uhid/0003:057E:2009.0001/leds/0003:057E:2009.0001:green:player-2/brightness"
        #expect(DeviceAccessError.opening(switchLight, .permissionDenied).remedy == .joinInputGroupForLedRing)
        // another LED class device's attribute (a keyboard's) gets no such advice
        let other = DeviceAccessError.opening("/sys/class/leds/input3::capslock/brightness", .permissionDenied)
        #expect(other.remedy == nil)
    }

    @Test(arguments: [("/dev/uinput", "uinput"), ("/dev/uhid", "uhid")])
    func missingNodeNamesModprobe(path: String, module: String) {
        let error = DeviceAccessError.opening(path, .noSuchFileOrDirectory)
        #expect(error.code == .missingDevice)
        #expect(error.remedy == .loadKernelModule(module))
        #expect(error.description.contains(path))
        #expect(error.description.contains("sudo modprobe \(module)"))
        #expect(error.description.contains("udev/padbridge-modules.conf"))
        #expect(error.description.contains("/etc/modules-load.d/"))
    }

    @Test(arguments: ["/dev/hidraw7", "/dev/input/event12"])
    func missingPadNodeSaysToConnectThePad(path: String) {
        let error = DeviceAccessError.opening(path, .noSuchFileOrDirectory)
        #expect(error.code == .missingDevice)
        #expect(error.remedy == .connectPad)
        #expect(error.description.contains(path))
        #expect(error.description.contains("connected"))
        #expect(!error.description.contains("modprobe"))
    }

    @Test func busyNamesTheOtherProgram() {
        let error = DeviceAccessError.ioctl("EVIOCGRAB", path: "/dev/input/event5", .resourceBusy)
        #expect(error.code == .busy)
        #expect(error.description.contains("/dev/input/event5"))
        #expect(error.description.contains("ioctl(EVIOCGRAB)"))
        #expect(error.description.contains("close that program"))
    }

    @Test func goneIsALifecycleEvent() {
        let error = DeviceAccessError.reading("/dev/hidraw2", .operationNotSupportedByDevice)
        #expect(error.code == .gone)
        #expect(error.remedy == nil)
        #expect(error.description.contains("/dev/hidraw2"))
    }

    @Test func otherFailuresKeepTheErrno() {
        let error = DeviceAccessError.ioctl("UI_DEV_CREATE", path: "/dev/uinput", .invalidArgument)
        #expect(error.code == .invalidArgument)
        #expect(error.cause == .invalidArgument)
        #expect(error.description.hasPrefix("ioctl(UI_DEV_CREATE) /dev/uinput:"))
    }
}
