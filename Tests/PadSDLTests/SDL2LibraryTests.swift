import Testing

@testable import PadSDL

/// The run-time load of libSDL2 (`SDL2Library`): its failures and, on the host, which has libsdl2-2.0-0 installed
/// (scripts/deps), its success.
struct SDL2LibraryTests {
    @Test func aMissingLibraryIsReportedWithDlerrorsTextAndTheInstallCommand() {
        let name = "libpadbridge-no-such-library.so.0"
        #expect {
            _ = try SDL2Library.load(named: name)
        } throws: { error in
            guard let error = error as? SDLCatalogError else { return false }
            return error.code == .libraryUnavailable
                && error.reason.contains(name)  // dlerror(): "<name>: cannot open shared object file: ..."
                && error.reason.contains("cannot open shared object file")
                && error.description.contains(error.reason)
                && error.description.contains("apt-get install libsdl2-2.0-0")
        }
    }

    @Test func aLibraryWithoutSDLsFunctionsIsReportedWithTheMissingSymbol() {
        // libc loads (it is loaded already) but has none of SDL's functions: the first one looked up is missing.
        #expect {
            _ = try SDL2Library.load(named: "libc.so.6")
        } throws: { error in
            guard let error = error as? SDLCatalogError else { return false }
            return error.code == .libraryUnavailable
                && error.reason.contains("undefined symbol: SDL_SetHint")
                && error.description.contains("apt-get install libsdl2-2.0-0")
        }
    }

    @Test func theHostsSDL2LoadsWithEveryFunction() throws {
        let functions = try SDL2Library.shared.get().functions
        let resolved: [Bool] = [
            functions.SDL_SetHint != nil, functions.SDL_InitSubSystem != nil, functions.SDL_QuitSubSystem != nil,
            functions.SDL_GetError != nil, functions.SDL_JoystickUpdate != nil, functions.SDL_NumJoysticks != nil,
            functions.SDL_JoystickPathForIndex != nil, functions.SDL_JoystickGetDeviceGUID != nil,
            functions.SDL_JoystickGetGUIDString != nil, functions.SDL_IsGameController != nil,
            functions.SDL_GameControllerNameForIndex != nil,
            functions.SDL_GameControllerMappingForDeviceIndex != nil, functions.SDL_free != nil,
        ]
        #expect(resolved.allSatisfy { $0 })
    }

    /// SDL's game-controller subsystem starts on the host, where there may be no pad at all, without an error. The
    /// only test here that calls into SDL itself, since SDL's state is global and not thread-safe. That it lists a
    /// pad, with GUID and mapping, is checked in the VM (`KernelVirtualPadSessionTests.sdlListsTheVirtualPad`).
    @Test func theCatalogStartsSDLOnTheHost() {
        #expect(throws: Never.self) { try SDLControllerCatalog.current() }
    }
}
