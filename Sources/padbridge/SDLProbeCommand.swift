import ArgumentParser
import Glibc
import PadSessions

/// `padbridge sdl-probe`: SDL2's view of the pads as one JSON line, for padbridge's own commands, which ask it in
/// a child process (`ControllerCatalog.SDLSource.helperProcess`) so that SDL crashing on a pad unplugged
/// mid-scan does not end them. Not for people; hidden from help.
struct SDLProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sdl-probe", abstract: "SDL2's view of the pads as JSON (used by padbridge itself).",
        shouldDisplay: false)

    func run() throws {
        print(SDLProbe.replyLine())
    }
}

extension ControllerCatalog.SDLSource {
    /// This executable's own `sdl-probe`, found through /proc/self/exe (the file this process runs, however it
    /// was started); SDL in this process when that cannot be read.
    static var padbridgeHelper: Self {
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &path, path.count - 1)
        guard length > 0 else { return .inProcess }
        let executable = String(decoding: path.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return .helperProcess(executable: executable, arguments: ["sdl-probe"])
    }
}
