import ArgumentParser
import FoundationEssentials
import Glibc
import PadCore
import PadLinux
import PadNet
import PadNetLinux

/// How `status`, `clients`, `revoke` and `pairing-window` find the serve to talk to.
struct ControlSocketOptions: ParsableArguments {
    /// The serve's config directory (as that serve was given it); its socket is found from it.
    @OptionGroup var config: ConfigDirectoryOptions
    var configDirectory: String? { config.configDirectory }

    @Flag(name: .long, help: "The system service (config directory /var/lib/padbridge, socket under /run/padbridge-serve); as root.")
    var system = false

    @Option(name: .long, help: ArgumentHelp("The serve's control socket, named directly.", valueName: "path"))
    var socket: String?

    static let systemConfigDirectory = "/var/lib/padbridge"

    func validate() throws {
        if system && configDirectory != nil {
            throw ValidationError("--system is the service's config directory (\(Self.systemConfigDirectory)): give one of them.")
        }
    }

    /// The config directory meant (for the trust files when no serve runs).
    func store() throws -> TrustStore {
        system ? TrustStore(directory: Self.systemConfigDirectory) : try config.store()
    }

    /// The socket's path, and words for the serve it belongs to.
    func target() throws -> (path: String, whose: String) {
        if let socket { return (socket, "the socket \(socket)") }
        let directory = try store().directory
        let runtime = system ? nil : getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
        let whose = system ? "the system service (\(directory))" : "config directory \(directory)"
        return (HostControlSocketPath.path(configDirectory: directory, runtimeDirectory: runtime), whose)
    }

    /// Connects to the serve's control socket.
    func connect() throws -> ControlSocketClient {
        let (path, whose) = try target()
        return try ControlSocketClient(path: path, whose: whose)
    }
}

/// Sends one request and returns the payload under `key`, or throws the host's error.
func ask<T: Decodable>(_ client: inout ControlSocketClient, _ request: HostControlRequest, _ key: String, as type: T.Type) throws -> T {
    let line = try client.request(request.line(id: 1))
    switch HostControlReply.payload(line, key, as: type) {
    case let .success(value): return value
    case let .failure(error): throw CommandFailure("the host refused: \(error)")
    }
}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "What the running host (serve) is doing: its key, pairing window, devices, clients and their pads.",
        discussion: """
            Asks the serve running with the same config directory, through its control socket. --json prints the \
            host's answer as it is (the fields: docs/forwarding.md). For the system service: sudo padbridge status \
            --system.
            """)

    @Flag(name: .long, help: "The host's answer as JSON.")
    var json = false

    @OptionGroup var control: ControlSocketOptions

    func run() throws {
        var client = try control.connect()
        let status = try ask(&client, .status, "status", as: HostStatus.self)
        let output = LineOutput.standardOutput
        if json {
            output.write(HostControlReply.encoded(status))
            return
        }
        for line in HostStatusText.lines(status) { output.write(line) }
    }
}

struct ClientsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "The clients paired with the running host, connected or not, with their pads.",
        discussion: "As `status`, the clients only. Without a running serve, the paired clients file is read instead.")

    @Flag(name: .long, help: "As JSON.")
    var json = false

    @OptionGroup var control: ControlSocketOptions

    func run() throws {
        let output = LineOutput.standardOutput
        let clients: [HostClientStatus]
        do {
            var client = try control.connect()
            clients = try ask(&client, .clients, "clients", as: [HostClientStatus].self)
        } catch let error as ControlSocketClientError where error.noServe {
            // No serve: what the file says (nobody is connected).
            clients = try control.store().pairedClients().map {
                HostClientStatus(
                    name: $0.name, key: $0.key.fingerprint, connected: false, address: nil, lastHeardMillisecondsAgo: nil,
                    roundTripMicroseconds: nil, receivedDatagrams: 0, sentDatagrams: 0, pads: [],
                    pairedSinceEpochSeconds: $0.pairedSinceEpochSeconds)
            }
            StatusOutput.say(.noServe, "\(error); the paired clients as the file lists them:")
        }
        if json {
            output.write(HostControlReply.encoded(clients))
            return
        }
        if clients.isEmpty { output.write("no client is paired (padbridge serve --pair, or padbridge pairing-window)") }
        for line in clients.flatMap(HostStatusText.client) { output.write(line) }
    }
}

struct RevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Unpair a client: its line leaves paired-clients and its session ends at once.",
        discussion: """
            CLIENT is its name or its key's fingerprint (SHA256:..., or enough of its first digits to be unique). With \
            a serve running, through its control socket: its virtual pads go neutral, then go, and it is refused from \
            then on. Without one, paired-clients is rewritten (atomically) and the next serve refuses it.
            """)

    @Argument(help: "The client's name or key fingerprint.")
    var client: String

    @OptionGroup var control: ControlSocketOptions

    func run() throws {
        do {
            var connection = try control.connect()
            let revoked = try ask(&connection, .revoke(client: client), "revoked", as: [String: String].self)
            StatusOutput.say(
                .revoked, "revoked \"\(revoked["name"] ?? client)\" (\(revoked["key"] ?? "?")): its session ended, its pads are gone",
                ["client": .string(revoked["name"] ?? client)])
        } catch let error as ControlSocketClientError where error.noServe {
            let revoked = try control.store().revoke(client)
            StatusOutput.say(
                .revoked,
                "revoked \"\(revoked.name)\" (\(revoked.key.fingerprint)) in \(try control.store().pairedClientsPath) "
                    + "(no serve is running: the next one refuses it)",
                ["client": .string(revoked.name)])
        }
    }
}

/// `status` and `clients` in words.
enum HostStatusText {
    static func lines(_ status: HostStatus) -> [String] {
        var lines = [
            "host \"\(status.name)\" key \(status.key), listening on \(status.listening), \(status.announcement), up \(duration(status.uptimeSeconds))",
            status.pairing.open
                ? "pairing window open: code \(status.pairing.code ?? "?"), \(duration(UInt64(status.pairing.secondsLeft ?? 0))) left"
                : "pairing window closed (padbridge pairing-window opens one)",
        ]
        for device in status.devices {
            lines.append("\(device.path): \(device.finding)" + (device.usable ? "" : " (fix: \(device.fix ?? "see padbridge doctor"))"))
        }
        lines.append(status.clients.isEmpty ? "no client is paired" : "clients:")
        lines += status.clients.flatMap(client)
        return lines
    }

    static func client(_ client: HostClientStatus) -> [String] {
        var line = "  \"\(client.name)\" \(client.key): "
        if client.connected {
            line += "connected from \(client.address ?? "?")"
        } else if let address = client.address {
            line += "not connected (last from \(address))"
        } else {
            line += "not connected"
        }
        line += client.pairedSinceEpochSeconds.map { ", paired \(UTCDateText.readable(epochSeconds: $0))" } ?? ", paired (date not recorded)"
        if let heard = client.lastHeardMillisecondsAgo { line += ", heard \(heard) ms ago" }
        if let rtt = client.roundTripMicroseconds { line += ", round trip \(rtt / 1000) ms" }
        if client.address != nil { line += ", datagrams in \(client.receivedDatagrams) out \(client.sentDatagrams)" }
        if client.lossToHostPercent != nil || client.lossToClientPercent != nil {
            line += ", loss to host \(percent(client.lossToHostPercent)) to client \(percent(client.lossToClientPercent))"
        }
        return [line] + client.pads.map { pad in
            var text = "    pad [\(pad.id)] \"\(pad.name)\" (\(pad.kind)) \(pad.state.rawValue)"
            if let slot = pad.slot { text += ", slot \(slot)" }
            if let kind = pad.virtualKind { text += ", virtual \(kind) " + ([pad.hidraw].compactMap { $0 } + pad.eventNodes).joined(separator: " ") }
            if let problem = pad.problem { text += ": \(problem)" }
            return text
        }
    }

    /// `0.4 %` (one decimal), `-` when unknown.
    static func percent(_ value: Double?) -> String {
        guard let value else { return "-" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) %"
    }

    static func duration(_ seconds: UInt64) -> String {
        seconds < 60 ? "\(seconds) s" : seconds < 3600 ? "\(seconds / 60) min \(seconds % 60) s" : "\(seconds / 3600) h \(seconds / 60 % 60) min"
    }
}
