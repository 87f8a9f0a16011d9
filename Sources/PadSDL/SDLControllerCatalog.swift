internal import CSDL2
public import PadCore

/// SDL2's view of the connected pads: which it lists, through which node, with which GUID and game-controller
/// mapping. Joined with udev's view by path (`ControllerCatalogJoin`), it gives generic pads their standard layout.
///
/// SDL's state is global and not thread-safe: call this on one thread only (the command's main thread).
public enum SDLControllerCatalog {
    /// Initialises SDL's game-controller subsystem, lists what it sees, and shuts it down again.
    /// SDL's HIDAPI drivers read feature reports from PlayStation pads while listing them; they send nothing.
    public static func current() throws(SDLCatalogError) -> [SDLControllerInfo] {
        // Keep SDL from installing signal handlers of its own; padbridge owns SIGINT/SIGTERM.
        SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
        guard SDL_InitSubSystem(SDL_INIT_GAMECONTROLLER) == 0 else {
            throw SDLCatalogError(reason: String(cString: SDL_GetError()))
        }
        defer { SDL_QuitSubSystem(SDL_INIT_GAMECONTROLLER) }
        SDL_JoystickUpdate()

        var found: [SDLControllerInfo] = []
        for index in 0..<SDL_NumJoysticks() {
            guard let path = SDL_JoystickPathForIndex(index).map({ String(cString: $0) }), !path.isEmpty else { continue }
            found.append(
                SDLControllerInfo(
                    guid: guidString(SDL_JoystickGetDeviceGUID(index)),
                    mappingName: SDL_IsGameController(index) == SDL_TRUE
                        ? SDL_GameControllerNameForIndex(index).map { String(cString: $0) } : nil,
                    mapping: mapping(forDeviceIndex: index),
                    path: path))
        }
        return found
    }

    private static func mapping(forDeviceIndex index: Int32) -> String? {
        guard let raw = SDL_GameControllerMappingForDeviceIndex(index) else { return nil }
        defer { SDL_free(raw) }
        return String(cString: raw)
    }

    private static func guidString(_ guid: SDL_JoystickGUID) -> String {
        var buffer = [CChar](repeating: 0, count: 33)
        buffer.withUnsafeMutableBufferPointer { SDL_JoystickGetGUIDString(guid, $0.baseAddress, 33) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// SDL could not start its game-controller subsystem; discovery goes on without SDL's view.
public struct SDLCatalogError: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { "SDL2's game-controller subsystem did not start: \(reason)" }
}
