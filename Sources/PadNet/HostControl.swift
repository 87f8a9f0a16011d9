import FoundationEssentials
import Crypto
import Glibc
public import PadCore

/// The control socket's protocol (`padbridge serve` ↔ `status`, `clients`, `revoke`, `pairing-window`, `console`):
/// JSON lines over a Unix stream socket. A request is one object, `{"id": 1, "request": "status"}`; its answer one
/// object with the same `id` and `"ok": true` and the request's payload, or `"ok": false` and `"error"`. After
/// `subscribe`, the host also sends `{"event": "status", "status": {...}}` whenever what `status` shows changes (at
/// most 10 a second), and, when asked for with `"events": ["status", "live"]`, `{"event": "live", "live": {...}}`
/// (`HostLiveState`: each forwarded pad's state and feedback, and each client's link figures) whenever a pad changed,
/// at most 60 a second, and at least once a second while a client is connected.
/// A line that is not a request is answered with an error and the connection is closed (serve is not affected).
///
/// Requests: `status`; `clients`; `revoke` with `"client": NAME or key fingerprint`; `open-pairing`;
/// `close-pairing`; `subscribe` (to `status` events, or to those named in `"events"`).
public enum HostControlRequest: Sendable, Hashable {
    case status
    case clients
    case revoke(client: String)
    case openPairing
    case closePairing
    case subscribe(Set<HostControlEvent>)

    /// The request names, as error messages list them.
    public static let names = ["status", "clients", "revoke", "open-pairing", "close-pairing", "subscribe"]

    private struct Wire: Decodable {
        var id: Int?
        var request: String
        var client: String?
        var events: [String]?
    }

    /// Reads one request line: the request and its id, or what is wrong with the line (and the id, if it had one).
    public static func parse(_ line: Substring) -> (id: Int?, request: Result<HostControlRequest, HostControlError>) {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(line.utf8))
        } catch {
            return (nil, .failure(HostControlError(
                "not a request: one JSON object a line is expected, such as {\"id\":1,\"request\":\"status\"}")))
        }
        switch wire.request {
        case "status": return (wire.id, .success(.status))
        case "clients": return (wire.id, .success(.clients))
        case "open-pairing": return (wire.id, .success(.openPairing))
        case "close-pairing": return (wire.id, .success(.closePairing))
        case "subscribe":
            guard let names = wire.events else { return (wire.id, .success(.subscribe([.status]))) }
            var events = Set<HostControlEvent>()
            for name in names {
                guard let event = HostControlEvent(rawValue: name) else {
                    let known = HostControlEvent.allCases.map(\.rawValue).joined(separator: ", ")
                    return (wire.id, .failure(HostControlError("unknown event \"\(name)\"; known: \(known)")))
                }
                events.insert(event)
            }
            return (wire.id, .success(.subscribe(events)))
        case "revoke":
            guard let client = wire.client, !client.isEmpty else {
                return (wire.id, .failure(HostControlError("revoke needs \"client\": the client's name or key fingerprint")))
            }
            return (wire.id, .success(.revoke(client: client)))
        default:
            return (wire.id, .failure(HostControlError(
                "unknown request \"\(wire.request)\"; known: \(names.joined(separator: ", "))")))
        }
    }

    /// The request as a line (what the commands send).
    public func line(id: Int) -> String {
        switch self {
        case .status: #"{"id":\#(id),"request":"status"}"#
        case .clients: #"{"id":\#(id),"request":"clients"}"#
        case .openPairing: #"{"id":\#(id),"request":"open-pairing"}"#
        case .closePairing: #"{"id":\#(id),"request":"close-pairing"}"#
        case let .subscribe(events):
            #"{"id":\#(id),"request":"subscribe","events":["#
                + events.sorted { $0.rawValue < $1.rawValue }.map { #"""# + $0.rawValue + #"""# }.joined(separator: ",") + "]}"
        case let .revoke(client): #"{"id":\#(id),"request":"revoke","client":"# + HostControlReply.json(client) + "}"
        }
    }
}

/// What a subscriber may ask to be sent.
public enum HostControlEvent: String, Sendable, Hashable, CaseIterable {
    /// What `status` shows, when it changed.
    case status
    /// Forwarded pads' state and feedback, and the clients' link figures (`HostLiveState`).
    case live
}

/// A request the host refuses, in words.
public struct HostControlError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// What the host says about itself (`status`).
public struct HostStatus: Sendable, Hashable, Codable {
    public var name: String
    /// The host key's fingerprint.
    public var key: String
    public var listening: String
    public var port: Int
    /// "announced as NAME", or why not.
    public var announcement: String
    public var uptimeSeconds: UInt64
    public var pairing: PairingWindowStatus
    /// What it can create for clients' pads (`/dev/uinput`, `/dev/uhid`): each with `doctor`'s words.
    public var devices: [DeviceAccessStatus]
    public var clients: [HostClientStatus]

    public init(
        name: String, key: String, listening: String, port: Int, announcement: String, uptimeSeconds: UInt64,
        pairing: PairingWindowStatus, devices: [DeviceAccessStatus], clients: [HostClientStatus]
    ) {
        self.name = name
        self.key = key
        self.listening = listening
        self.port = port
        self.announcement = announcement
        self.uptimeSeconds = uptimeSeconds
        self.pairing = pairing
        self.devices = devices
        self.clients = clients
    }
}

public struct PairingWindowStatus: Sendable, Hashable, Codable {
    public var open: Bool
    /// The one-time code while open (only the control socket's users, who may open a window themselves, see it).
    public var code: String?
    public var secondsLeft: Int?

    public init(open: Bool, code: String? = nil, secondsLeft: Int? = nil) {
        self.open = open
        self.code = code
        self.secondsLeft = secondsLeft
    }
}

/// Whether the host can use a device node it needs, in `doctor`'s words.
public struct DeviceAccessStatus: Sendable, Hashable, Codable {
    public var path: String
    public var usable: Bool
    public var finding: String
    public var fix: String?

    public init(path: String, usable: Bool, finding: String, fix: String?) {
        self.path = path
        self.usable = usable
        self.finding = finding
        self.fix = fix
    }
}

/// The host's answer lines.
public enum HostControlReply {
    /// `{"id":ID,"ok":true,"KEY":VALUE}`.
    public static func success(id: Int?, _ key: String, _ value: some Encodable) -> String {
        "{" + idField(id) + #""ok":true,"# + json(key) + ":" + encoded(value) + "}"
    }

    /// `{"id":ID,"ok":false,"error":"..."}`.
    public static func failure(id: Int?, _ error: HostControlError) -> String {
        "{" + idField(id) + #""ok":false,"error":"# + json(error.description) + "}"
    }

    /// `{"event":"KIND","KIND":VALUE}`.
    public static func event(_ kind: String, _ value: some Encodable) -> String {
        #"{"event":"# + json(kind) + "," + json(kind) + ":" + encoded(value) + "}"
    }

    /// A JSON string literal.
    public static func json(_ text: String) -> String { encoded(text) }

    public static func encoded(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    private static func idField(_ id: Int?) -> String { id.map { #""id":\#($0),"# } ?? "" }

    /// A parsed answer: ok with its payload object, or the host's error.
    public static func parse(_ line: Substring) -> Result<[String: JSONValue], HostControlError> {
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(line.utf8)) else {
            return .failure(HostControlError("the host answered something that is not JSON: \(line.prefix(200))"))
        }
        if case .bool(true) = object["ok"] { return .success(object) }
        if case let .string(error) = object["error"] { return .failure(HostControlError(error)) }
        return .success(object)
    }
}

extension HostControlReply {
    /// The payload under `key` of an answer line, as `T`; the host's error, or what is wrong with the line.
    public static func payload<T: Decodable>(_ line: String, _ key: String, as type: T.Type) -> Result<T, HostControlError> {
        switch parse(Substring(line)) {
        case let .failure(error): return .failure(error)
        case let .success(object):
            guard let value = object[key], let data = try? JSONEncoder().encode(value),
                let decoded = try? JSONDecoder().decode(T.self, from: data)
            else { return .failure(HostControlError("the host's answer has no \(key) this padbridge understands: \(line.prefix(200))")) }
            return .success(decoded)
        }
    }
}

/// Any JSON value (to read answers generically).
public enum JSONValue: Sendable, Hashable, Codable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(value): try container.encode(value)
        case let .number(value): try container.encode(value)
        case let .string(value): try container.encode(value)
        case let .array(value): try container.encode(value)
        case let .object(value): try container.encode(value)
        }
    }
}

/// Where a serve's control socket is: one per config directory, so two serves on one machine never collide.
public enum HostControlSocketPath {
    /// `$XDG_RUNTIME_DIR/padbridge/control-HASH.socket` for a user's serve; without `XDG_RUNTIME_DIR` (the system
    /// service, whose unit makes the directory) `/run/padbridge-serve/control-HASH.socket` (not /run/padbridge, which
    /// belongs to the hiding service's socket). HASH: the first 12 hex digits of SHA-256 of the config directory's
    /// path.
    public static func path(configDirectory: String, runtimeDirectory: String?) -> String {
        let digest = SHA256.hash(data: Array(canonical(configDirectory).utf8))
        let hash = HexBytes.encode(digest.prefix(6))
        guard let runtime = runtimeDirectory, !runtime.isEmpty else { return "/run/padbridge-serve/control-\(hash).socket" }
        return "\(runtime)/padbridge/control-\(hash).socket"
    }

    /// The directory's canonical path (realpath(3): absolute, no symlinks, `..` or trailing slash), so `serve
    /// --config-dir cfg` and `status --config-dir ./cfg/` from another working directory find one socket; the
    /// text as given when it does not exist (yet).
    static func canonical(_ directory: String) -> String {
        guard let resolved = realpath(directory, nil) else { return directory }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// One forwarded pad as it is now (the control socket's `live` event): what `monitor --view` draws, and what games
/// asked of it.
public struct HostLivePad: Sendable, Hashable, Codable {
    /// The client's name and the pad's ID on it.
    public var client: String
    public var id: String
    public var name: String
    /// Its kind on the client (`dualsense`, `xbox360`, ...).
    public var kind: String
    /// Held buttons, in SDL's GameController names.
    public var buttons: [String]
    /// Sticks -32768...32767 (up negative), triggers 0...32767, by SDL's axis names.
    public var axes: [String: Int]
    /// Touch contacts on the touchpad, 0...1 from the top left.
    public var touches: [HostLiveTouch]
    /// What games asked of its motors, 0...1 each; nil while never set.
    public var rumble: HostLiveRumble?
    /// The lightbar colour games set, `#rrggbb`; nil while never set.
    public var lightbar: String?
    public var lingering: Bool

    public init(client: String, id: String, name: String, kind: String, snapshot: PadSnapshot, feedback: Feedback, lingering: Bool) {
        self.client = client
        self.id = id
        self.name = name
        self.kind = kind
        buttons = snapshot.buttons.pressed.map(\.rawValue)
        axes = Dictionary(uniqueKeysWithValues: Axis.allCases.map { ($0.rawValue, Int(snapshot[$0])) })
        touches = (0..<TouchContacts.count).compactMap { index in
            let contact = snapshot.touches[index]
            return contact.active ? HostLiveTouch(x: contact.x, y: contact.y) : nil
        }
        rumble = feedback.rumble.map { HostLiveRumble(strong: $0.strong, weak: $0.weak) }
        lightbar = feedback.lightbar.map { color in
            "#" + HexBytes.encode([color.red, color.green, color.blue])
        }
        self.lingering = lingering
    }
}

public struct HostLiveTouch: Sendable, Hashable, Codable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

public struct HostLiveRumble: Sendable, Hashable, Codable {
    public var strong: Double
    public var weak: Double

    public init(strong: Double, weak: Double) {
        self.strong = strong
        self.weak = weak
    }
}

/// The control socket's `live` event: each forwarded pad as it is now, and each client's link figures.
public struct HostLiveState: Sendable, Hashable, Codable {
    public var pads: [HostLivePad]
    public var clients: [HostClientStatus]

    public init(pads: [HostLivePad], clients: [HostClientStatus]) {
        self.pads = pads
        self.clients = clients
    }
}
