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
