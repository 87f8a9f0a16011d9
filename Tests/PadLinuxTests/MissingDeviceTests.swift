import Logging
import PadCore
@testable import PadLinux
import Glibc
import Testing

/// Runs only where the node is absent (this project's build hosts): creating a pad must fail with an error that
/// says which module to load.
@Suite("Creating pads without the kernel modules")
struct MissingDeviceTests {
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    @Test(.enabled(if: !exists("/dev/uinput"), "/dev/uinput exists here"))
    func xboxPadWithoutUinput() throws {
        let loop = try DeviceEventLoop()
        let error = #expect(throws: DeviceAccessError.self) {
            _ = try VirtualXbox360Pad.create(
                name: nil, loop: loop, logger: Logger(label: "test"), onFeedback: { _ in }, onReady: { _ in })
        }
        #expect(error?.code == .missingDevice)
        #expect(error?.path == "/dev/uinput")
        #expect(error?.description.contains("sudo modprobe uinput") == true)
    }

    @Test(.enabled(if: !exists("/dev/uhid"), "/dev/uhid exists here"))
    func dualSenseWithoutUhid() throws {
        let loop = try DeviceEventLoop()
        let error = #expect(throws: DeviceAccessError.self) {
            _ = try VirtualDualSense.create(
                name: nil, seed: "test", loop: loop, logger: Logger(label: "test"), onFeedback: { _ in },
                onReady: { _ in })
        }
        #expect(error?.code == .missingDevice)
        #expect(error?.path == "/dev/uhid")
        #expect(error?.description.contains("sudo modprobe uhid") == true)
    }
}
