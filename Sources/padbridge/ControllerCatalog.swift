import Logging
import PadCore
import PadLinux
import PadSDL

/// The connected controllers as padbridge's commands see them: udev's nodes grouped into controllers, their
/// batteries, and SDL2's view joined by path.
enum ControllerCatalog {
    /// When SDL2's view is joined in: starting SDL's game-controller subsystem takes a while (it opens and
    /// queries PlayStation pads' hidraw nodes), so commands that need it only for generic pads' layouts skip it
    /// when there are none.
    enum SDLView {
        case always
        case forGenericPads
    }

    static func discover(logger: Logger, sdlView: SDLView = .always) throws -> [Controller] {
        let records = try UdevContext().padNodeRecords()
        var controllers = ControllerGrouping.controllers(from: records)
        for index in controllers.indices where controllers[index].capabilities.battery {
            controllers[index].battery = ControllerBattery.state(ofHIDDevice: controllers[index].groupSyspath)
        }
        if sdlView == .forGenericPads && !controllers.contains(where: { $0.kind == .generic }) {
            return controllers
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
