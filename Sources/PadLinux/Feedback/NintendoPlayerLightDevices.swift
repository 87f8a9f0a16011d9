import PadCore
import SystemPackage

/// Owns the `brightness` attributes of the four player lights hid-nintendo makes for a Switch pad (LED class devices
/// `<hid device>:green:player-1` ... `player-4` under the pad's HID device), through which the lights are set: each
/// write is one player-lights subcommand to the pad (the driver sends all four lights' states with it).
struct NintendoPlayerLightDevices: ~Copyable {
    /// The HID device's `leds` directory, for messages.
    let path: String
    private let brightness: [FileDescriptor]

    init(ledsDirectory: String, names: [String]) throws(DeviceAccessError) {
        var opened: [FileDescriptor] = []
        for name in names {
            let attribute = "\(ledsDirectory)/\(name)/brightness"
            do {
                opened.append(try FileDescriptor.open(FilePath(attribute), .readWrite, options: [.closeOnExec]))
            } catch {
                for descriptor in opened { try? descriptor.close() }
                throw .opening(attribute, error as? Errno ?? .ioError)
            }
        }
        brightness = opened
        path = ledsDirectory
    }

    /// What each light shows now, as the driver last set it (nil for a light whose attribute cannot be read).
    var lit: [Bool?] {
        brightness.map { descriptor in
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = try? buffer.withUnsafeMutableBytes { try descriptor.read(fromAbsoluteOffset: 0, into: $0) }
            guard let count, count > 0 else { return nil }
            return Int(String(decoding: buffer[..<count], as: UTF8.self).trimmingWhitespace).map { $0 != 0 }
        }
    }

    /// Sets the lights (first to fourth), writing only those that differ from what the driver shows now (each
    /// write costs the pad a subcommand; another program may have set them meanwhile).
    func show(_ lights: [Bool]) throws(DeviceAccessError) {
        let now = lit
        for index in brightness.indices where index < lights.count && now[index] != lights[index] {
            let text = Array((lights[index] ? "1\n" : "0\n").utf8)
            do {
                _ = try text.withUnsafeBytes { try brightness[index].writeAll(toAbsoluteOffset: 0, $0) }
            } catch {
                throw .writing("\(path)/…player-\(index + 1)/brightness", error as? Errno ?? .ioError)
            }
        }
    }

    consuming func close() {
        for descriptor in brightness { try? descriptor.close() }
    }

    /// The `leds` directory and the four lights' names for the pad whose event node is `eventNode`, nil when its
    /// HID device has no such LED class devices (another driver).
    static func lights(forEventNode eventNode: String, sysfsRoot: String = "/sys") -> (directory: String, names: [String])? {
        let node = eventNode.split(separator: "/").last.map(String.init) ?? eventNode
        guard let input = SysfsInputDevices.resolvedPath("\(sysfsRoot)/class/input/\(node)/device"),
            let hid = SysfsInputDevices.hidDevice(ofInputDevice: input)
        else { return nil }
        let directory = hid + "/leds"
        let entries = SysfsInputDevices.directoryEntries(directory)
        let names = (1...NintendoPlayerLights.count).compactMap { number in
            entries.first { $0.hasSuffix(":green:player-\(number)") }
        }
        return names.count == NintendoPlayerLights.count ? (directory, names) : nil
    }
}
