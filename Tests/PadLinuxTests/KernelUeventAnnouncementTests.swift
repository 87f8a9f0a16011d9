import Testing

@testable import PadLinux

/// The header of the kernel's uevent messages, as hid-core's bind announcement spells it (what a virtual DualSense
/// waits for before it is ready).
@Suite struct KernelUeventAnnouncementTests {
    @Test func aBindAnnouncementNamesTheDeviceAndItsSysfsPath() throws {
        let message = Array(
            "bind@/devices/virtual/misc/uhid/0005:054C:0CE6.0003\0ACTION=bind\0DEVPATH=/devices/virtual/misc/uhid/0005:054C:0CE6.0003\0SUBSYSTEM=hid\0DRIVER=playstation\0"
                .utf8)
        let announcement = try #require(KernelUeventMonitor.Announcement(message: message))
        #expect(announcement.action == "bind")
        #expect(announcement.sysfsPath == "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0003")
    }

    @Test(arguments: [
        "", "\0", "ACTION=add\0", "add@\0", "@/devices/x\0", "add@devices/x\0", "libudev\0\u{FE}\u{ED}\u{CA}\u{FE}",
    ])
    func anythingElseIsNoAnnouncement(_ text: String) {
        #expect(KernelUeventMonitor.Announcement(message: Array(text.utf8)) == nil)
    }

    @Test func aHeaderWithoutTerminatorIsStillRead() throws {
        let announcement = try #require(KernelUeventMonitor.Announcement(message: Array("remove@/devices/a/b".utf8)))
        #expect(announcement == KernelUeventMonitor.Announcement(message: Array("remove@/devices/a/b\0".utf8)))
        #expect(announcement.action == "remove")
    }
}
