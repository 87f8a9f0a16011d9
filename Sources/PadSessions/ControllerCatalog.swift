public import Logging
public import PadCore
public import PadLinux
import PadSDL

/// The connected controllers as padbridge's commands see them: udev's nodes grouped into controllers, their
/// batteries, and SDL2's view joined by path.
public enum ControllerCatalog {
    /// When SDL2's view is joined in: starting SDL's game-controller subsystem takes a while (it opens and
    /// queries PlayStation pads' hidraw nodes), so commands that need it only for generic pads' layouts skip it
    /// when there are none.
    public enum SDLView {
        case always
        case forGenericPads
    }

    public static func discover(logger: Logger, sdlView: SDLView = .always) throws -> [Controller] {
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
            // Without SDL2 installed only generic pads lose something (their layout): say so, and how to fix it.
            if error.code == .libraryUnavailable && controllers.contains(where: { $0.kind == .generic }) {
                logger.warning("\(error)")
            } else {
                logger.debug("no SDL2 view of the pads: \(error)")
            }
            sdl = []
        }
        return SDLControllerJoin.joining(controllers, sdl: sdl, records: records)
    }
}

public enum ControllerLayouts {
    /// The layout to read a controller's pad node with (see `SDLControllerJoin.layout`). Without absinfo: SDL 2.26
    /// (Debian 12's) numbers every hat as a hat, as `list` does from udev's records.
    public static func layout(for controller: Controller, padNode: EvdevDeviceInfo?) -> EvdevLayout {
        SDLControllerJoin.layout(
            for: controller, padKeyCodes: padNode?.codes[EvdevCode.evKey] ?? [],
            padAbsoluteCodes: padNode?.codes[EvdevCode.evAbs] ?? [])
    }
}
