internal import CSDL2Loader

/// libSDL2, loaded at run time by `CSDL2Loader` rather than linked, so that only runs that need SDL's
/// game-controller database pay for loading it and the ~45 libraries it depends on.
struct SDL2Library: Sendable {
    /// Debian's libsdl2-2.0-0.
    static let soname = "libSDL2-2.0.so.0"

    /// The process's one load of `soname`: made by the first caller (a `static let` is initialised once,
    /// thread-safely), kept whether it succeeded or failed, never unloaded.
    static let shared: Result<SDL2Library, SDLCatalogError> = Result { () throws(SDLCatalogError) in
        try load(named: soname)
    }

    /// The resolved functions; every one is non-null.
    let functions: CSDL2_Functions

    /// Loads `name` and resolves the functions PadSDL calls. Each call loads anew: use `shared`, except to test.
    static func load(named name: String) throws(SDLCatalogError) -> SDL2Library {
        var functions = CSDL2_Functions()
        var message = [CChar](repeating: 0, count: 512)
        let status = message.withUnsafeMutableBufferPointer { buffer in
            CSDL2_load(name, &functions, buffer.baseAddress, buffer.count)
        }
        guard status == 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw SDLCatalogError(code: .libraryUnavailable, reason: reason)
        }
        return SDL2Library(functions: functions)
    }
}
