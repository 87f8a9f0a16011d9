import PadCore
import SystemPackage

/// Owns the `brightness` attribute of the LED class device xpad makes for an Xbox 360 pad (`xpadN`, under the pad's
/// USB device), through which a command for the pad's ring of lights goes out (`XboxLedRing`).
struct XpadLedRingDevice: ~Copyable {
    /// The LED class device's directory (`/sys/devices/.../usb1/1-1/leds/xpad0`), for messages.
    let path: String
    private let brightness: FileDescriptor

    init(ledDirectory: String) throws(DeviceAccessError) {
        let attribute = ledDirectory + "/brightness"
        do {
            brightness = try FileDescriptor.open(FilePath(attribute), .writeOnly, options: [.closeOnExec])
        } catch {
            throw .opening(attribute, error as? Errno ?? .ioError)
        }
        path = ledDirectory
    }

    /// Sends `command` (0...15) to the ring: xpad writes it to the pad as it comes, one packet per write.
    func send(_ command: UInt8) throws(DeviceAccessError) {
        let text = Array("\(command)\n".utf8)
        do {
            _ = try text.withUnsafeBytes { try brightness.writeAll(toAbsoluteOffset: 0, $0) }
        } catch {
            throw .writing(path + "/brightness", error as? Errno ?? .ioError)
        }
    }

    consuming func close() {
        try? brightness.close()
    }

    /// The LED class device xpad made for the pad whose event node is `eventNode` (`/dev/input/eventN`), nil when
    /// there is none (another driver, an Xbox One pad, a kernel built without xpad's LED support). xpad registers it
    /// under the pad's USB device: the event node's input device sits under the USB interface, which sits under it.
    static func ledDirectory(forEventNode eventNode: String, sysfsRoot: String = "/sys") -> String? {
        let name = eventNode.split(separator: "/").last.map(String.init) ?? eventNode
        guard let inputDevice = SysfsInputDevices.resolvedPath("\(sysfsRoot)/class/input/\(name)/device") else {
            return nil
        }
        // .../1-1/1-1:1.0/input/input7 -> .../1-1
        let components = inputDevice.split(separator: "/", omittingEmptySubsequences: false)
        guard components.count > 4, components[components.count - 2] == "input" else { return nil }
        let usbDevice = components.dropLast(3).joined(separator: "/")
        return SysfsInputDevices.directoryEntries(usbDevice + "/leds").filter { $0.hasPrefix("xpad") }.sorted().first
            .map { "\(usbDevice)/leds/\($0)" }
    }
}
