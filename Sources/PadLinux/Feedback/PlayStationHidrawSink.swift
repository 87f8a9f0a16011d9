import Glibc
public import PadCore

/// A DualSense or DualShock 4 written through its hidraw node with padbridge's own output reports, which carry only
/// the fields being changed (hid-playstation's own reports keep working alongside).
public final class PlayStationHidrawSink: PhysicalFeedbackSink {
    public enum Model: Sendable, Hashable {
        case dualSense(rumbleMethod: RumbleMethod)
        case dualShock4
    }

    public static let sonyVendor: UInt16 = 0x054C
    public static let dualSenseProducts: Set<UInt16> = [0x0CE6, 0x0DF2]
    public static let dualShock4Products: Set<UInt16> = [0x05C4, 0x09CC, 0x0BA0]

    public let model: Model
    public let transport: HIDTransport
    private var device: HidrawDevice?
    /// The Bluetooth kernel layout's 4-bit sequence number, advanced on every report.
    private var sequence: UInt8 = 0

    init(device: consuming HidrawDevice, model: Model, transport: HIDTransport) {
        self.device = consume device
        self.model = model
        self.transport = transport
    }

    /// Opens `path`, identifies the pad with HIDIOCGRAWINFO and reads its LED state from sysfs.
    static func open(path: String) throws(DeviceAccessError) -> OpenedFeedbackSink {
        let device = try HidrawDevice(path: path)
        let info = try device.rawInfo()
        let transport: HIDTransport
        switch info.bus {
        case HidrawInfo.busUSB: transport = .usb
        case HidrawInfo.busBluetooth: transport = .bluetooth
        default: throw unsupported(path, info, "bus 0x\(String(info.bus, radix: 16)) is neither USB nor Bluetooth")
        }
        guard info.vendor == sonyVendor else { throw unsupported(path, info, "not a Sony pad") }
        let model: Model
        let leds = PlayStationLedState(hidrawPath: path)
        var initial = Feedback()
        if dualSenseProducts.contains(info.product) {
            model = .dualSense(rumbleMethod: rumbleMethod(device, product: info.product))
            initial.lightbar = leds.lightbar
            initial.playerLeds = leds.playerLeds
        } else if dualShock4Products.contains(info.product) {
            model = .dualShock4
            initial.lightbar = leds.lightbar
        } else {
            throw unsupported(path, info, "not a DualSense or DualShock 4")
        }
        let sink = PlayStationHidrawSink(device: device, model: model, transport: transport)
        let name = if case .dualSense = model { "DualSense" } else { "DualShock 4" }
        return OpenedFeedbackSink(
            sink: sink, initialState: initial, summary: "\(name) over \(transport == .usb ? "USB" : "Bluetooth")")
    }

    public var supported: FeedbackParts {
        switch model {
        case .dualSense: .dualSense
        case .dualShock4: .dualShock4
        }
    }

    /// The report bytes for `feedback` (advances the Bluetooth sequence number).
    func report(for feedback: Feedback) -> [UInt8] {
        switch model {
        case let .dualSense(method):
            let layout: DualSenseOutputLayout = transport == .usb ? .usbKernel : .bluetoothKernel
            defer { sequence = (sequence &+ 1) & 0x0F }
            return DualSenseOutputReport.encoded(feedback, layout: layout, sequence: sequence, rumbleMethod: method)
        case .dualShock4:
            return DualShock4OutputReport.encoded(feedback, transport: transport)
        }
    }

    public func write(_ feedback: Feedback) throws(DeviceAccessError) {
        guard device != nil else { return }
        try device!.write(report(for: feedback))
    }

    public func close() {
        device.take()?.close()
    }

    /// Firmware `update_version` (feature 0x20, bytes 44-45) ≥ 0x0221, or the Edge: "compatible vibration 2", as
    /// hid-playstation decides. Anything unreadable falls back to the method every firmware accepts.
    static func rumbleMethod(_ device: borrowing HidrawDevice, product: UInt16) -> RumbleMethod {
        if product == 0x0DF2 { return .improved }
        guard let firmware = try? device.featureReport(0x20, length: 64), firmware.count >= 46 else {
            return .compatible
        }
        let updateVersion = UInt16(firmware[44]) | UInt16(firmware[45]) << 8
        return updateVersion >= 0x0221 ? .improved : .compatible
    }

    static func unsupported(_ path: String, _ info: HidrawInfo, _ why: String) -> DeviceAccessError {
        let id = "\(NumberText.hex4(info.vendor)):\(NumberText.hex4(info.product))"
        return DeviceAccessError(
            code: .unsupported, path: path,
            operation: "HIDIOCGRAWINFO (\(id): \(why); for rumble on other pads, name its /dev/input/eventN node)")
    }
}

/// The lightbar and player LEDs hid-playstation last set, read from its LED class devices under
/// `/sys/class/hidraw/hidrawN/device/leds/` (best effort: nil when absent or unreadable).
struct PlayStationLedState {
    var lightbar: LightbarColor?
    var playerLeds: UInt8?

    init(hidrawPath: String, sysfsRoot: String = "/sys/class/hidraw") {
        let node = hidrawPath.split(separator: "/").last.map(String.init) ?? hidrawPath
        let ledsDirectory = "\(sysfsRoot)/\(node)/device/leds"
        let names = Self.directoryEntries(ledsDirectory)
        // DualSense: "<input>:rgb:indicator" (multi_intensity "r g b" scaled by brightness / max_brightness).
        if let rgb = names.first(where: { $0.hasSuffix(":rgb:indicator") }) {
            let base = "\(ledsDirectory)/\(rgb)"
            let intensities = Self.read("\(base)/multi_intensity")?.split(separator: " ").compactMap { Int($0) }
            // All-zero intensities are what hid-playstation (6.1) leaves there until someone writes the LED: the
            // colour it set at probe (0,0,128) is not reflected, so that reads as unknown rather than black.
            if let intensities, intensities.count == 3, intensities.contains(where: { $0 != 0 }),
                let brightness = Self.readInt("\(base)/brightness")
            {
                let maximum = max(1, Self.readInt("\(base)/max_brightness") ?? 255)
                let scaled = intensities.map { UInt8(clamping: $0 * brightness / maximum) }
                lightbar = LightbarColor(red: scaled[0], green: scaled[1], blue: scaled[2])
            }
        } else if let red = names.first(where: { $0.hasSuffix(":red") }),
            let green = names.first(where: { $0.hasSuffix(":green") }),
            let blue = names.first(where: { $0.hasSuffix(":blue") }),
            let r = Self.readInt("\(ledsDirectory)/\(red)/brightness"),
            let g = Self.readInt("\(ledsDirectory)/\(green)/brightness"),
            let b = Self.readInt("\(ledsDirectory)/\(blue)/brightness")
        {
            // DualShock 4: one LED per channel, 0...255.
            lightbar = LightbarColor(red: UInt8(clamping: r), green: UInt8(clamping: g), blue: UInt8(clamping: b))
        }
        var mask: UInt8 = 0
        var found = 0
        for index in 1...5 {
            guard let name = names.first(where: { $0.hasSuffix(":white:player-\(index)") }),
                let value = Self.readInt("\(ledsDirectory)/\(name)/brightness")
            else { continue }
            found += 1
            if value != 0 { mask |= 1 << UInt8(index - 1) }
        }
        if found == 5 { playerLeds = mask }
    }

    static func directoryEntries(_ path: String) -> [String] {
        SysfsInputDevices.directoryEntries(path).sorted()
    }

    static func read(_ path: String) -> String? {
        SysfsInputDevices.readAttribute(path)
    }

    static func readInt(_ path: String) -> Int? { read(path).flatMap { Int($0) } }
}
