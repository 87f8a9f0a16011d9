/// Why a PAD argument selects no controller.
public enum PadSelectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No controller is connected at all.
    case noControllers
    /// An index past the end of `padbridge list`.
    case indexOutOfRange(Int, count: Int)
    /// A device path that belongs to no connected controller.
    case unknownPath(String)
    /// Text that is no index, no fingerprint or fingerprint prefix, and no device path of a controller.
    case noMatch(String)
    /// A fingerprint prefix shared by several controllers.
    case ambiguousPrefix(String, matches: [Fingerprint])

    public var description: String {
        switch self {
        case .noControllers:
            return "no controller is connected; connect a pad (USB or Bluetooth) and run `padbridge list`"
        case .indexOutOfRange(let index, let count):
            return "there is no pad \(index): `padbridge list` numbers the \(count) connected "
                + "pad\(count == 1 ? "" : "s") from 0 to \(count - 1)"
        case .unknownPath(let path):
            return "\(path) is not a node of any connected controller; `padbridge list` shows the pads and their nodes"
        case .noMatch(let text):
            return "\"\(text)\" matches no pad; give an index, a fingerprint (or its start) or a device node "
                + "as `padbridge list` shows them"
        case .ambiguousPrefix(let prefix, let matches):
            return "\"\(prefix)\" starts the fingerprints of \(matches.count) pads ("
                + matches.map(\.rawValue).joined(separator: ", ") + "); give more of the fingerprint"
        }
    }
}

/// Resolves a user's PAD argument against the connected controllers, in this order:
/// 1. a device path (`/dev/input/eventN`, `/dev/hidrawN`, anything starting with "/"): the controller that has
///    that node;
/// 2. a decimal index: the controller at that position of `padbridge list`, counting from 0 (the order of
///    `ControllerGrouping.controllers(from:)`);
/// 3. a fingerprint, or a prefix of one that no other controller's fingerprint starts with (case-insensitive).
///
/// A short all-digit text is taken as an index even when a fingerprint starts with it; a longer one (5 digits
/// or more, which no one has that many pads for) is taken as a fingerprint prefix.
public struct PadSelector: Sendable, Hashable {
    public var argument: String

    public init(_ argument: String) { self.argument = argument }

    public func resolve(in controllers: [Controller]) throws(PadSelectionError) -> Controller {
        guard !controllers.isEmpty else { throw .noControllers }
        let text = String(argument.trimmingWhitespace)

        if text.hasPrefix("/") {
            guard let match = controllers.first(where: { $0.nodes.allPaths.contains(text) }) else {
                throw .unknownPath(text)
            }
            return match
        }
        if !text.isEmpty, text.count <= 4, text.allSatisfy({ $0.isASCII && $0.isNumber }), let index = Int(text) {
            guard controllers.indices.contains(index) else {
                throw .indexOutOfRange(index, count: controllers.count)
            }
            return controllers[index]
        }
        let prefix = text.lowercased()
        guard !prefix.isEmpty else { throw .noMatch(text) }
        if let exact = controllers.first(where: { $0.fingerprint.rawValue == prefix }) { return exact }
        let matches = controllers.filter { $0.fingerprint.rawValue.hasPrefix(prefix) }
        switch matches.count {
        case 0: throw .noMatch(text)
        case 1: return matches[0]
        default: throw .ambiguousPrefix(text, matches: matches.map(\.fingerprint))
        }
    }
}
