import Logging
import PadCore
import PadLinux
import PadSDL

/// The connected controllers as padbridge's commands see them: udev's nodes grouped into controllers, their
/// batteries, and SDL2's view joined by path.
enum ControllerCatalog {
    static func discover(logger: Logger) throws -> [Controller] {
        let records = try UdevContext().padNodeRecords()
        var controllers = ControllerGrouping.controllers(from: records)
        for index in controllers.indices where controllers[index].capabilities.battery {
            controllers[index].battery = ControllerBattery.state(ofHIDDevice: controllers[index].groupSyspath)
        }
        let sdl: [SDLControllerInfo]
        do {
            sdl = try SDLControllerCatalog.current()
        } catch {
            logger.debug("no SDL2 view of the pads: \(error)")
            sdl = []
        }
        return SDLControllerJoin.joining(controllers, sdl: sdl, records: records)
    }
}

enum ControllerLayouts {
    /// The layout to read a controller's pad node with (see `SDLControllerJoin.layout`). Without absinfo: SDL 2.26
    /// (Debian 12's) numbers every hat as a hat, as `list` does from udev's records.
    static func layout(for controller: Controller, padNode: EvdevDeviceInfo?) -> EvdevLayout {
        SDLControllerJoin.layout(
            for: controller, padKeyCodes: padNode?.codes[EvdevCode.evKey] ?? [],
            padAbsoluteCodes: padNode?.codes[EvdevCode.evAbs] ?? [])
    }
}
