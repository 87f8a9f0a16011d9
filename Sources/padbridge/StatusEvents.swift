import ArgumentParser
import FoundationEssentials
import Logging
import Synchronization

/// How the commands say what happens on standard error (`--events`): sentences for people, or one JSON object per
/// line for programs (a service supervisor, a test, a front end), each naming its event. docs/diagnostics.md lists
/// the events.
enum EventFormat: String, CaseIterable, ExpressibleByArgument, Sendable {
    case text, json

    // Spelled out, as for VirtualPadKind: the defaults are slow to build at every start.
    static var allValueStrings: [String] { allCases.map(\.rawValue) }
    static var allValueDescriptions: [String: String] { [:] }
    var defaultValueDescription: String { rawValue }
}

/// A value in an event's JSON object. Objects keep their keys in the order given, so the text form of a ready
/// object reads as it always has.
indirect enum EventValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral
{
    case string(String)
    case integer(Int)
    case bool(Bool)
    case null
    case array([EventValue])
    case object([Field])

    struct Field: Sendable, Equatable {
        let key: String
        let value: EventValue
        init(_ key: String, _ value: EventValue) {
            self.key = key
            self.value = value
        }
    }

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .integer(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A string, or null for none.
    init(_ value: String?) { self = value.map(EventValue.string) ?? .null }
    init(_ value: some BinaryInteger) { self = .integer(Int(value)) }
    init(strings: [String]) { self = .array(strings.map(EventValue.string)) }

    /// The compact JSON text. Strings are escaped by Foundation's encoder (the one place JSON escaping is done).
    var json: String {
        switch self {
        case let .string(text): Self.quoted(text)
        case let .integer(number): String(number)
        case let .bool(flag): flag ? "true" : "false"
        case .null: "null"
        case let .array(items): "[" + items.map(\.json).joined(separator: ",") + "]"
        case let .object(fields): "{" + fields.map { Self.quoted($0.key) + ":" + $0.value.json }.joined(separator: ",") + "}"
        }
    }

    private static func quoted(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Encoding a String cannot fail (it is not a float); the fallback is never reached.
        guard let bytes = try? encoder.encode(text) else { return "\"\"" }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// One thing a command says on standard error: its name (stable: programs match it), the sentence for people, and
/// the facts in it as fields.
struct StatusEvent: Sendable {
    let name: StatusEventName
    let message: String
    let fields: [EventValue.Field]

    init(_ name: StatusEventName, _ message: String, _ fields: KeyValuePairs<String, EventValue> = [:]) {
        self.name = name
        self.message = message
        self.fields = fields.map { EventValue.Field($0.key, $0.value) }
    }

    init(_ name: StatusEventName, _ message: String, fields: [EventValue.Field]) {
        self.name = name
        self.message = message
        self.fields = fields
    }

    /// The line in `format`: "padbridge: SENTENCE", or {"event":NAME,"message":SENTENCE,FIELDS...}.
    func line(_ format: EventFormat) -> String {
        switch format {
        case .text: "padbridge: " + message
        case .json:
            EventValue.object([.init("event", .string(name.rawValue)), .init("message", .string(message))] + fields).json
        }
    }
}

/// Standard error as the commands' status channel, in the format the command line chose.
///
/// The format is process-wide, as swift-log's logging system is: `GlobalOptions.makeLogger` sets both once, before the
/// command starts threads; commands without the global options stay in text.
enum StatusOutput {
    private static let json = Atomic<Bool>(false)

    static var format: EventFormat {
        get { json.load(ordering: .relaxed) ? .json : .text }
        set { json.store(newValue == .json, ordering: .relaxed) }
    }

    /// Writes the event; false when standard error is gone (see `LineOutput.write`).
    @discardableResult
    static func say(_ event: StatusEvent) -> Bool {
        LineOutput.standardError.write(event.line(format))
    }

    @discardableResult
    static func say(_ name: StatusEventName, _ message: String, _ fields: KeyValuePairs<String, EventValue> = [:]) -> Bool {
        say(StatusEvent(name, message, fields))
    }
}

/// swift-log's records on standard error in the chosen format. Text: swift-log's own `StreamLogHandler`, without the
/// `event` metadata. JSON: one object per record, {"event": its `event` metadata or "log",
/// "level", "label", "message", its other metadata}.
struct EventLogHandler: LogHandler {
    private var text: StreamLogHandler
    private let format: EventFormat
    private let label: String

    init(label: String, format: EventFormat) {
        self.text = StreamLogHandler.standardError(label: label)
        self.format = format
        self.label = label
    }

    var logLevel: Logger.Level {
        get { text.logLevel }
        set { text.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { text.metadata }
        set { text.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { text[metadataKey: key] }
        set { text[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        switch format {
        case .text:
            // The name is for programs; people read the sentence (and the metadata, as swift-log shows them).
            var shown = event
            shown.metadata?["event"] = nil
            text.log(event: shown)
        case .json:
            var all = text.metadata.merging(event.metadata ?? [:]) { $1 }
            let name = all.removeValue(forKey: "event").map { "\($0)" } ?? "log"
            let fields: [EventValue.Field] =
                [
                    .init("event", .string(name)), .init("level", .string(event.level.rawValue)),
                    .init("label", .string(label)), .init("message", .string("\(event.message)")),
                ] + all.sorted { $0.key < $1.key }.map { .init($0.key, Self.value($0.value)) }
            LineOutput.standardError.write(EventValue.object(fields).json)
        }
    }

    private static func value(_ metadata: Logger.Metadata.Value) -> EventValue {
        switch metadata {
        case let .string(text): .string(text)
        case let .stringConvertible(value): .string(value.description)
        case let .array(items): .array(items.map(value))
        case let .dictionary(entries): .object(entries.sorted { $0.key < $1.key }.map { .init($0.key, value($0.value)) })
        }
    }
}

/// The names of the commands' events, the `event` of `--events json` (stable: programs match them; the sentences may
/// be reworded). Events the libraries log carry their name as `event` metadata instead (docs/diagnostics.md).
enum StatusEventName: String, Sendable, CaseIterable {
    // Every command.
    case failed, outputClosed, lineIgnored, statistics
    // virtual, remap, replay: a virtual pad exists (the ready object's keys are the fields).
    case ready, notReady, padFailed
    // remap.
    case noPadYet, padAdded, cannotBridge, profileChosen, noProfile, profileBroken, profileReloaded, profileKept, virtualPadKept
    // Hiding (remap, connect) and the hiding service.
    case hidden, hidingRefused, hidingServiceGone, notHidden, hidingServiceListening
    // record, replay, --record.
    case recording, recorded, recordingEnded, notRecording, hidrawNotRecorded, wrote, replaying, replayFinished
    // monitor, list, hosts.
    case monitoring, padUnplugged, noPads, watching, watchingHosts, noHosts
    // serve.
    case ipv6Unavailable, listening, virtualDeviceUnusable, pairingWindowOpen, pairingWindowClosed, pairingCode
    case announced, announcedRenamed, notAnnounced, controlSocketListening
    case unanswered, pairingNotStored, paired, wrongCode, pairingUnderLoad
    case clientConnected, padAttached, padDetached, linkLost, resumed, clientGone, padDestroyed, padNotForwarded
    case revoked, takenOver, handshakeRefused, pairedClientsUnreadable, dropped, underLoad
    // connect (also padDetached, padAdded, padNotForwarded, linkLost, revoked, takenOver above).
    case hostChosen, connecting, connected, reconnecting, padBack, tooManyPads, noAnswer
    case hostFound, hostNotRemembered, keyDiffers, cannotLookForHost, tryingHost
    // pair, pairing-window, clients, revoke, console.
    case hostAnnounced, pairingNotDoneYet, keyReplaced, announcedKeyDiffers, pairingWindowAsked, noServe
    case notOnlyLoopback, consoleStopped
    // dsu (also noPadYet, tooManyPads, cannotBridge above).
    case dsuListening, dsuPad, dsuPadAway, dsuClientSubscribed, dsuClientExpired, dsuClientRefused, dsuRequestsLimited
}
