internal import CSDL2Loader
public import PadCore

/// SDL2's view of the connected pads: which it lists, through which node, with which GUID and game-controller
/// mapping. Joined with udev's view by path (`ControllerCatalogJoin`), it gives generic pads their standard layout.
///
/// SDL2 is loaded at run time (`SDL2Library`), by the first call, once per process.
/// SDL's state is global and not thread-safe: call this on one thread only (the command's main thread).
public enum SDLControllerCatalog {
    /// Loads SDL2 if not loaded yet, initialises its game-controller subsystem, lists what it sees, and shuts the
    /// subsystem down again. SDL's HIDAPI drivers read feature reports from PlayStation pads while listing them;
    /// they send nothing.
    public static func current() throws(SDLCatalogError) -> [SDLControllerInfo] {
        let sdl = try SDL2Library.shared.get().functions
        // Keep SDL from installing signal handlers of its own; padbridge owns SIGINT/SIGTERM.
        _ = sdl.SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
        guard sdl.SDL_InitSubSystem(SDL_INIT_GAMECONTROLLER) == 0 else {
            let reason = sdl.SDL_GetError().map { String(cString: $0) } ?? "no error text"
            throw SDLCatalogError(code: .subsystemFailed, reason: reason)
        }
        defer { sdl.SDL_QuitSubSystem(SDL_INIT_GAMECONTROLLER) }
        sdl.SDL_JoystickUpdate()

        var found: [SDLControllerInfo] = []
        for index in 0..<sdl.SDL_NumJoysticks() {
            guard let path = sdl.SDL_JoystickPathForIndex(index).map({ String(cString: $0) }), !path.isEmpty
            else { continue }
            found.append(
                SDLControllerInfo(
                    guid: guidString(sdl.SDL_JoystickGetDeviceGUID(index), sdl),
                    mappingName: sdl.SDL_IsGameController(index) == SDL_TRUE
                        ? sdl.SDL_GameControllerNameForIndex(index).map { String(cString: $0) } : nil,
                    mapping: mapping(forDeviceIndex: index, sdl),
                    path: path))
        }
        return found
    }

    private static func mapping(forDeviceIndex index: Int32, _ sdl: CSDL2_Functions) -> String? {
        guard let raw = sdl.SDL_GameControllerMappingForDeviceIndex(index) else { return nil }
        defer { sdl.SDL_free(raw) }
        return String(cString: raw)
    }

    private static func guidString(_ guid: SDL_JoystickGUID, _ sdl: CSDL2_Functions) -> String {
        var buffer = [CChar](repeating: 0, count: 33)
        buffer.withUnsafeMutableBufferPointer { sdl.SDL_JoystickGetGUIDString(guid, $0.baseAddress, 33) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// SDL2 could not be loaded, or could not start its game-controller subsystem; discovery goes on without SDL's
/// view (generic pads then have no layout from SDL's database).
public struct SDLCatalogError: Error, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// libSDL2 is not installed, or lacks a function padbridge calls.
        case libraryUnavailable
        /// `SDL_InitSubSystem(SDL_INIT_GAMECONTROLLER)` failed.
        case subsystemFailed
        /// The helper process that asks SDL (`padbridge sdl-probe`) crashed, hung or answered nonsense.
        case helperFailed
    }

    public var code: Code
    /// What the dynamic loader (`dlerror()`) or SDL (`SDL_GetError()`) said.
    public var reason: String

    public init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// What to do about it, when there is something to do.
    public var remedy: String? {
        switch code {
        case .libraryUnavailable: "sudo apt-get install libsdl2-2.0-0"
        case .subsystemFailed, .helperFailed: nil
        }
    }

    public var description: String {
        switch code {
        case .libraryUnavailable:
            "SDL2 could not be loaded (\(reason)), so generic pads get no layout from SDL's controller database; "
                + "install it: \(remedy ?? "")"
        case .subsystemFailed: "SDL2's game-controller subsystem did not start: \(reason)"
        case .helperFailed:
            "SDL2's view of the pads is missing this time (\(reason)), so generic pads get no layout from SDL's "
                + "controller database"
        }
    }
}
