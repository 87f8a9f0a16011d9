internal import FoundationEssentials
import Logging
public import PadCore
import PadLinux
public import PadSDL

/// SDL2's view of the pads asked for in a helper process: the reply the helper prints (one JSON object on
/// standard output) and the parent's reading of it.
public enum SDLProbe {
    /// The helper's answer: SDL's controllers, or why SDL could not list them.
    struct Reply: Codable {
        var controllers: [SDLControllerInfo]?
        var error: ReplyError?
    }

    struct ReplyError: Codable {
        var code: String
        var reason: String
    }

    /// How long SDL's subsystem may take to start and list the pads before the helper is killed.
    public static let deadline = Duration.seconds(10)

    /// What the helper prints: SDL's view of the pads, listed in this process, as one JSON line.
    public static func replyLine() -> String {
        let reply: Reply
        do {
            reply = Reply(controllers: try SDLControllerCatalog.current(), error: nil)
        } catch {
            reply = Reply(controllers: nil, error: ReplyError(code: error.code.rawValue, reason: error.reason))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings and optionals cannot fail.
        return String(decoding: (try? encoder.encode(reply)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// Reads a helper's reply; any bytes in, SDL's view or a typed error out.
    public static func decodeReply(_ bytes: [UInt8]) throws(SDLCatalogError) -> [SDLControllerInfo] {
        guard let reply = try? JSONDecoder().decode(Reply.self, from: Data(bytes)) else {
            throw SDLCatalogError(code: .helperFailed, reason: "its reply is not an SDL probe reply")
        }
        if let controllers = reply.controllers { return controllers }
        let error = reply.error ?? ReplyError(code: "", reason: "its reply holds neither pads nor an error")
        throw SDLCatalogError(code: SDLCatalogError.Code(rawValue: error.code) ?? .helperFailed, reason: error.reason)
    }

    /// SDL's view from `source`. A helper that crashes is asked once more: the crash this guards against is a
    /// race with a device going away, over by the second scan.
    static func controllers(from source: ControllerCatalog.SDLSource, logger: Logger) throws(SDLCatalogError)
        -> [SDLControllerInfo]
    {
        switch source {
        case .inProcess:
            return try SDLControllerCatalog.current()
        case .helperProcess(let executable, let arguments):
            do {
                return try ask(executable, arguments)
            } catch where error.code == .helperFailed {
                logger.debug("SDL2's view, first try: \(error); asking again")
                return try ask(executable, arguments)
            }
        }
    }

    private static func ask(_ executable: String, _ arguments: [String]) throws(SDLCatalogError) -> [SDLControllerInfo] {
        let outcome: HelperProcess.Outcome
        do {
            outcome = try HelperProcess.run(executable: executable, arguments: arguments, timeout: deadline)
        } catch {
            throw SDLCatalogError(code: .helperFailed, reason: "\(executable) could not be started (\(error))")
        }
        return try reading(.success(outcome), executable: executable).get()
    }

    /// SDL's view from a helper's outcome (or why there is none).
    static func reading(
        _ outcome: Result<HelperProcess.Outcome, any Error>, executable: String
    ) -> Result<[SDLControllerInfo], SDLCatalogError> {
        switch outcome {
        case .failure(let error):
            return .failure(SDLCatalogError(code: .helperFailed, reason: "\(executable) could not be run (\(error))"))
        case .success(let outcome):
            guard outcome.termination == .exited(code: 0) else {
                return .failure(SDLCatalogError(code: .helperFailed, reason: "the SDL helper \(outcome.termination)"))
            }
            do throws(SDLCatalogError) {
                return .success(try decodeReply(outcome.standardOutput))
            } catch {
                return .failure(error)
            }
        }
    }
}
