import ArgumentParser
import Glibc
import Logging
import PadCore
import PadDNSSD
import PadLinux
import PadNet
import PadNetLinux
import PadSessions

/// What `serve` and `pair` share: the default port and the config directory option.
enum LinkCommandDefaults {
    static let port = LinkEndpointDefaults.port
}

struct PairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair this machine (the client) with a host that shows a pairing code.",
        discussion: """
            On the host, `padbridge serve --pair` shows a one-time code ("ZW0AM-N8J6H-B7H6N"), valid for 5 minutes. \
            Give it here; case and dashes do not matter. Both machines then store the other's public key: this one \
            in paired-hosts, the host in paired-clients (both in the config directory; deleting a line revokes). \
            Exits 0 once both sides have stored it.
            HOST may be the name a host announces on the LAN (`padbridge hosts` lists them, where avahi-daemon runs): \
            the pairing then goes to the address it announces. The code is what proves the host; the announcement \
            only says where it is.
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The host: its name as `padbridge hosts` lists it (or a unique start of it, or its index), or HOST, "
                + "HOST:PORT or [IPV6]:PORT (default port \(LinkCommandDefaults.port)).", valueName: "host"))
    var host: String

    @Argument(help: "The pairing code the host shows.")
    var code: String

    @Option(name: .long, help: "The name the host will know this machine by (default: its host name).")
    var name: String?

    @OptionGroup var configDirectory: ConfigDirectoryOptions

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if PairingCode(typed: code) == nil {
            throw ValidationError(
                "\"\(code)\" is not a pairing code: it has 15 letters and digits, shown as three groups of five (ZW0AM-N8J6H-B7H6N).")
        }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.pair")
        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }
        let store = try configDirectory.store()
        let identity = try store.identity()
        var announced: AnnouncedHost?
        let address: LinkHostAddress
        if HostArgument.isPlainAddress(host) {
            address = try LinkHostAddress(host, defaultPort: LinkCommandDefaults.port)
        } else {
            switch HostArgument.browse(loop: loop, logger: logger) {
            case let .success(hosts):
                announced = try HostArgument.announced(host, among: hosts, paired: try store.pairedHosts(), command: "pair")
            case let .failure(problem):
                if AnnouncedHostChoice.index(host) != nil {
                    throw CommandFailure(
                        "\(host) would be an index of `padbridge hosts`, but hosts cannot be looked for on the LAN: \(problem)")
                }
                logger.debug("not looking for \(host) on the LAN: \(problem)")
            }
            if let announced {
                address = try HostArgument.endpoint(announced)
                StatusOutput.say(
                    .hostAnnounced,
                    "\"\(announced.name)\" is announced on the LAN at \(address.canonical)"
                        + (announced.fingerprint.map { ", host key \($0)" } ?? "")
                        + (announced.pairingOpen ? "" : " (its pairing window is closed, as it announces)"),
                    ["host": .string(announced.name), "address": .string(address.canonical)])
            } else {
                address = try LinkHostAddress(host, defaultPort: LinkCommandDefaults.port)
            }
        }
        let target: SocketAddress
        do {
            target = try address.resolved()
        } catch {
            throw CommandFailure(
                "\(error)" + (announced == nil && !HostArgument.isPlainAddress(host)
                    ? " (nor is a host of that name announced on the LAN: `padbridge hosts` lists those that are)" : ""))
        }
        let attempt = PairingAttempt(initiator: try PairingInitiator(
            code: PairingCode(typed: code)!, identity: identity, clientName: name ?? LinkEndpointDefaults.machineName()))
        let policy = PairingRetryPolicy()
        let pairing = try PairingClient(attempt: attempt, target: target, loop: loop, policy: policy) { event in
            switch event {
            case .answeredButNotDoneYet:
                StatusOutput.say(
                    .pairingNotDoneYet,
                    "\(address) answered but pairing is not done yet (the host is busy, or under a flood of "
                        + "datagrams); still trying, up to \(policy.answeredTimeoutMilliseconds / 1000) s in all")
            }
        }
        logger.info("pairing with \(address) (\(target))")
        switch try pairing.run() {
        case let .paired(key, hostName):
            let hosts = try store.pairedHosts()
            let known = hosts.first { $0.address == address.canonical }
            // The same host paired again from a new address: its line moves there.
            let moved = hosts.first { $0.key == key && $0.address != address.canonical }
            try store.remember(PairedHost(address: address.canonical, key: key, name: hostName), replacing: moved)
            if let known, known.key != key {
                StatusOutput.say(
                    .keyReplaced, "replaced the key stored for \(address.canonical) (was \(known.key.fingerprint))",
                    ["address": .string(address.canonical), "previousKey": .string("\(known.key.fingerprint)")])
            }
            if let announced, let announcedKey = announced.fingerprint, announcedKey != key.keyFingerprint {
                StatusOutput.say(
                    .announcedKeyDiffers,
                    "note: \"\(announced.name)\" announced host key \(announcedKey), but the host that took the "
                        + "code has \(key.fingerprint); the code proves the host, so that is the key paired with")
            }
            StatusOutput.say(
                .paired, "paired with \(address.canonical) (\(hostName)), host key \(key.fingerprint)",
                ["address": .string(address.canonical), "host": .string(hostName), "hostKey": .string("\(key.fingerprint)")])
        case let .refused(reason):
            throw CommandFailure("\(address): \(reason)")
        case .answeredButNotDone:
            throw CommandFailure(
                "\(address) (\(target)) answered, but pairing did not complete within "
                    + "\(policy.answeredTimeoutMilliseconds / 1000) s: the host is busy or under a flood of datagrams "
                    + "(its log says \"under load\"); try again")
        case .noAnswer:
            throw CommandFailure(
                "no answer from \(address) (\(target)) within \(policy.answerTimeoutMilliseconds / 1000) s: is "
                    + "`padbridge serve --pair` running there, and UDP port \(target.port) open in its firewall? Both "
                    + "machines also need versions of padbridge that pair the same way (`padbridge --version` on each)")
        }
    }
}

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "The host: virtual pads for the pads paired clients forward to it.",
        discussion: """
            Listens on UDP (default port \(LinkCommandDefaults.port); open it in the firewall). Each pad a paired client \
            forwards (`padbridge connect`) becomes a virtual pad: a DualSense for a DualSense, else an Xbox 360 pad \
            (--as overrides). When a client's link is lost its pads go neutral and stay --linger seconds (games keep \
            the player slot), then go. --pair opens a pairing window at start: a one-time code, valid 5 minutes, \
            three wrong tries from one address close it to that address (twelve in all, to everyone); `padbridge pair \
            HOST CODE` on the client uses it. Status lines go to standard \
            error. Ends on SIGINT or SIGTERM: inputs released, virtual pads destroyed.
            Where avahi-daemon runs, the host announces itself on the LAN (DNS-SD, `_padbridge._udp`) under --name, \
            with its port, its key's fingerprint and whether a pairing window is open: `padbridge hosts` lists it, \
            and `pair` and `connect` take its name. Without avahi-daemon it says once why it is not announced and \
            serves all the same. --no-announce keeps it off the LAN's lists.
            At start it says what it cannot create (no /dev/uinput or /dev/uhid, or no access: doctor's words and \
            fix). Its control socket ($XDG_RUNTIME_DIR/padbridge/control-HASH.socket, one per config directory; \
            /run/padbridge-serve/... for the system service; --socket PATH to choose) answers `padbridge status`, \
            `clients`, `revoke` and `pairing-window`, from root, serve's user and its group only.
            """
    )

    @Option(name: .long, help: "Address and port to listen on (default: every address, port \(LinkCommandDefaults.port)).")
    var listen: String?

    @Option(name: .long, help: ArgumentHelp("The control socket (default: one per config directory under $XDG_RUNTIME_DIR/padbridge, or /run/padbridge-serve).", valueName: "path"))
    var socket: String?

    @Flag(name: .long, help: "Open a pairing window at start and show its one-time code.")
    var pair = false

    @Option(name: .long, help: "The name clients will know this host by, and it is announced as (default: its host name).")
    var name: String?

    @Flag(name: .customLong("no-announce"), help: "Do not announce this host on the LAN (DNS-SD).")
    var noAnnounce = false

    @Option(name: .customLong("as"), help: ArgumentHelp("Every virtual pad of this kind, whatever clients ask: xbox360, dualsense, dualsense-edge, dualshock4, xbox-one, switch-pro or steam-deck.", valueName: "kind"))
    var virtualKind: VirtualPadKind?

    @OptionGroup var dsuOptions: DSUOptions

    @Option(name: .customLong("max-pads"), help: "At most this many virtual pads at once.")
    var maximumPads = 8

    @Option(name: .long, help: "Seconds a lost client's virtual pads stay (neutral) before they go.")
    var linger: UInt64 = 60

    @OptionGroup var configDirectory: ConfigDirectoryOptions

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.serve")
        let dsuAddress = try dsuOptions.address()
        signal(SIGPIPE, SIG_IGN)
        let loop = try DeviceEventLoop()
        var service: HostService?
        try loop.watchSignals([SIGINT, SIGTERM]) { signal in
            logger.info("received signal \(signal): releasing inputs and destroying the virtual pads")
            if let service { service.requestShutdown() } else { loop.stop() }
        }
        let configuration = HostService.Configuration(
            listen: listen, controlSocketPath: socket,
            runtimeDirectory: getenv("XDG_RUNTIME_DIR").map { String(cString: $0) },
            hostName: name ?? LinkEndpointDefaults.machineName(), announce: !noAnnounce, openPairingAtStart: pair,
            forwarding: .init(virtualKind: virtualKind, maximumPads: maximumPads, lingerMilliseconds: linger * 1000),
            dsuAddress: dsuAddress)
        do {
            service = try HostService(
                configuration: configuration, store: try configDirectory.store(), loop: loop, logger: logger,
                makeAnnouncer: { name, port, record, onChange in
                    ThreadAnnouncer(
                        try HostAnnouncementThread(name: name, port: port, record: record, loop: loop, logger: logger) { event in
                            switch event {
                            case let .announced(name): onChange(.announced(name: name))
                            case let .renamed(from, to): onChange(.renamed(from: from, to: to))
                            case let .notAnnounced(problem): onChange(.notAnnounced(problem: "\(problem)"))
                            }
                        })
                }
            ) { event in
                StatusOutput.say(ServeStatus.event(event))
                if case let .pairingWindowOpened(code, by: .start) = event { PairingWindowCommand.sayCode("\(code)") }
            }
        } catch let error as HostControlSocketUnavailable {
            // Not a warning: a serve without its socket leaves the path to whoever holds it, and `status`, `revoke`
            // and `pairing-window` would believe that program (a --socket in a shared directory can be squatted).
            throw CommandFailure(
                "cannot listen on the control socket \(error.path): \(error.cause). If another program holds that path, "
                    + "remove it or name a --socket in a directory only you can write (the default, under "
                    + "$XDG_RUNTIME_DIR, is)")
        }
        defer { service?.close() }
        try loop.run()
    }
}

/// PadDNSSD's announcement thread as `HostService`'s announcer.
private final class ThreadAnnouncer: HostAnnouncing {
    let thread: HostAnnouncementThread
    init(_ thread: HostAnnouncementThread) { self.thread = thread }
    func update(_ record: HostAnnouncementRecord) { thread.update(record) }
    func close() { thread.close() }
}

struct PairingWindowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pairing-window",
        abstract: "Open a pairing window on the host that is serving now (no restart) and show its code.",
        discussion: """
            Asks the serve running with the same config directory, through its control socket, to open a window (5 \
            minutes, one pairing; three wrong tries from one address close it to that address) and prints its code; \
            `padbridge pair HOST CODE` on the client \
            uses it. --close closes an open window. For the system service: sudo padbridge pairing-window --system. \
            Without a control socket (a serve of an earlier version), the code is left in the config directory for \
            the serve to take, as the user that runs serve (sudo -u padbridge ... --config-dir /var/lib/padbridge).
            """
    )

    @Flag(name: .long, help: "Close the window instead.")
    var close = false

    @OptionGroup var control: ControlSocketOptions

    func run() throws {
        do {
            var client = try control.connect()
            let window = try ask(&client, close ? .closePairing : .openPairing, "pairing", as: PairingWindowStatus.self)
            if close {
                StatusOutput.say(.pairingWindowClosed, "the host's pairing window is closed")
            } else {
                let minutes = ((window.secondsLeft ?? 0) + 59) / 60
                StatusOutput.say(
                    .pairingWindowOpen, "pairing window open for \(minutes) minutes",
                    ["by": "controlSocket", "minutes": EventValue(minutes)])
                Self.sayCode(window.code ?? "?")
            }
            return
        } catch let error as ControlSocketClientError where error.noServe && control.socket == nil && !close {
            // No control socket: the file way, which a serve of any version takes.
            let store = try control.store()
            let code = LinkEndpointDefaults.newPairingCode()
            try store.requestPairingWindow(code)
            StatusOutput.say(
                .pairingWindowAsked,
                "\(error); asked the host serving from \(store.directory) through its config directory to open "
                    + "a pairing window (5 minutes); its status shows \"pairing window open\" once it has")
            Self.sayCode("\(code)")
        }
    }

    /// The code a client types into `padbridge pair`.
    static func sayCode(_ code: String) {
        StatusOutput.say(.pairingCode, "pairing code \(code)", ["code": .string(code)])
    }
}

/// `serve`'s status, one event each.
enum ServeStatus {
    static func event(_ event: HostService.Event) -> StatusEvent {
        let minutes = Int(PairingWindow.lifetimeMicroseconds / 60_000_000)
        switch event {
        case .ipv6Unavailable: return StatusEvent(.ipv6Unavailable, "IPv6 is disabled on this machine; listening on IPv4 only")
        case let .dsuListening(address):
            return StatusEvent(
                .dsuListening,
                "serving the virtual pads over DSU (cemuhook protocol 1001) on \(address)"
                    + (address.isLoopback ? "" : ", open to that network"),
                ["address": .string(address.description), "loopback": .bool(address.isLoopback)])
        case let .dsuSlot(slot?, seed):
            return StatusEvent(.dsuPad, "DSU slot \(slot): the virtual pad \(seed)", ["slot": EventValue(slot), "seed": .string(seed)])
        case let .dsuSlot(nil, seed):
            return StatusEvent(
                .tooManyPads, "not serving the virtual pad \(seed) over DSU: its four slots are taken", ["seed": .string(seed)])
        case let .dsu(event):
            return DSUCommand.statusEvent(event)
        case let .listening(address, hostKey):
            return StatusEvent(
                .listening, "listening on \(address) (UDP port \(address.port)), host key \(hostKey.fingerprint)",
                ["address": .string("\(address)"), "port": EventValue(address.port), "hostKey": .string("\(hostKey.fingerprint)")])
        case let .virtualDeviceUnusable(finding):
            return StatusEvent(
                .virtualDeviceUnusable,
                "warning: \(finding.subject) \(finding.finding); clients' pads that need it get no virtual pad"
                    + (finding.fix.map { " (fix: \($0))" } ?? ""),
                ["subject": .string(finding.subject)])
        case let .pairingWindowOpened(_, opener):
            let (by, asked): (String, String) =
                switch opener {
                case .start: ("start", "")
                case .pairingWindowCommand: ("pairingWindowCommand", " (asked for by padbridge pairing-window)")
                case .controlSocket: ("controlSocket", " (asked for on the control socket)")
                }
            return StatusEvent(
                .pairingWindowOpen, "pairing window open for \(minutes) minutes" + asked,
                ["by": .string(by), "minutes": EventValue(minutes)])
        case .pairingWindowClosed: return StatusEvent(.pairingWindowClosed, "pairing window closed (asked for on the control socket)")
        case let .notAnnouncedBecause(reason):
            return StatusEvent(.notAnnounced, "not announced on the LAN: \(reason)", ["reason": .string(reason)])
        case let .announced(name, port):
            return StatusEvent(
                .announced,
                "announced on the LAN as \"\(name)\" (DNS-SD \(HostAnnouncementRecord.serviceType), port \(port)): "
                    + "`padbridge hosts` lists it",
                ["name": .string(name), "port": EventValue(port)])
        case let .announcedRenamed(from, to):
            return StatusEvent(
                .announcedRenamed, "another host on the LAN is announced as \"\(from)\"; this one is announced as \"\(to)\"",
                ["from": .string(from), "to": .string(to)])
        case let .notAnnounced(problem):
            return StatusEvent(
                .notAnnounced, "not announced on the LAN: \(problem); serving all the same (clients reach this host by its address)",
                ["reason": .string(problem)])
        case let .controlSocketListening(path):
            return StatusEvent(
                .controlSocketListening, "control socket \(path) (padbridge status, clients, revoke, pairing-window)",
                ["path": .string(path)])
        case let .forwarding(event): return Self.event(event)
        case let .pairing(event): return Self.event(event)
        }
    }

    static func event(_ event: HostPairing.Event) -> StatusEvent {
        switch event {
        case let .unanswered(count):
            StatusEvent(
                .unanswered,
                "dropped \(count) pairing datagram(s) unanswered (answers are never answered; a first message must be padded; "
                    + "junk is noise)",
                ["count": EventValue(count)])
        case let .notStored(from, problem):
            StatusEvent(
                .pairingNotStored, "could not store the client pairing from \(from) (it was told): \(problem)",
                ["from": .string("\(from)")])
        case let .paired(client, from):
            StatusEvent(
                .paired, "paired with client \"\(client.name)\" (\(client.key.fingerprint)) at \(from)",
                ["client": .string(client.name), "clientKey": .string("\(client.key.fingerprint)"), "from": .string("\(from)")])
        case let .wrongCode(from, left, closedToEveryone):
            StatusEvent(
                .wrongCode,
                "wrong pairing code from \(from); "
                    + (left > 0
                        ? "\(left) tries left"
                        : closedToEveryone
                            ? "pairing window closed (\(PairingWindow.wrongTriesAllowed) wrong codes in all)"
                            : "pairing window closed to this address (\(PairingWindow.wrongTriesPerSource) wrong codes "
                                + "from it); still open to other machines"),
                ["from": .string("\(from)"), "triesLeft": EventValue(left), "closedToEveryone": .bool(closedToEveryone)])
        case let .underLoad(count):
            StatusEvent(
                .pairingUnderLoad,
                "pairing under load: \(count) first message(s) asked to prove their address with a cookie before any "
                    + "public-key work (a flood of first messages? a person's `pair` does so by itself)",
                ["count": EventValue(count)])
        }
    }

    static func event(_ event: ForwardingHost.Event) -> StatusEvent {
        switch event {
        case let .clientConnected(name, address):
            StatusEvent(
                .clientConnected, "client \"\(name)\" connected from \(address)",
                ["client": .string(name), "address": .string("\(address)")])
        case let .padAttached(client, pad, kind, nodes, mac):
            {
                let virtualPad = ReadyLine.object(kind: kind, nodes: nodes, mac: mac, source: pad.fingerprint.rawValue)
                return StatusEvent(
                    .padAttached,
                    "pad attached: \"\(pad.name)\" [\(pad.fingerprint)] of \"\(client)\" as " + EventValue.object(virtualPad).json,
                    [
                        "client": .string(client), "pad": .string(pad.fingerprint.rawValue), "name": .string(pad.name),
                        "virtualPad": .object(virtualPad),
                    ])
            }()
        case let .padDetached(client, pad):
            StatusEvent(
                .padDetached, "pad detached: \"\(pad.name)\" [\(pad.fingerprint)] of \"\(client)\" (neutral until it is back)",
                ["client": .string(client), "pad": .string(pad.fingerprint.rawValue), "name": .string(pad.name)])
        case let .linkLost(client):
            StatusEvent(.linkLost, "link lost: \"\(client)\" (its pads neutral, kept for --linger)", ["client": .string(client)])
        case let .resumed(client): StatusEvent(.resumed, "resumed: \"\(client)\"", ["client": .string(client)])
        case let .clientGone(client): StatusEvent(.clientGone, "client gone: \"\(client)\"", ["client": .string(client)])
        case let .padDestroyed(client, fingerprint):
            StatusEvent(
                .padDestroyed, "pad destroyed: [\(fingerprint)] of \"\(client)\" (linger over)",
                ["client": .string(client), "pad": .string(fingerprint.rawValue)])
        case let .padNotForwarded(client, pad, reason):
            StatusEvent(
                .padNotForwarded, "pad not forwarded: \"\(pad.name)\" [\(pad.fingerprint)] of \"\(client)\": \(reason)",
                [
                    "client": .string(client), "pad": .string(pad.fingerprint.rawValue), "name": .string(pad.name),
                    "reason": .string(reason),
                ])
        case let .revoked(client):
            StatusEvent(
                .revoked, "revoked: \"\(client)\" (its line left paired-clients): session ended, its pads destroyed",
                ["client": .string(client)])
        case let .takenOver(client, previous, by):
            StatusEvent(
                .takenOver,
                "taken over: \"\(client)\" connected again from \(by) while its session from \(previous) was live (two "
                    + "`padbridge connect` with one identity?); the one at \(previous) was told to stop",
                ["client": .string(client), "previous": .string("\(previous)"), "by": .string("\(by)")])
        case let .handshakeRefused(client, reason):
            StatusEvent(
                .handshakeRefused, "handshake refused: \"\(client)\": \(reason)",
                ["client": .string(client), "reason": .string(reason)])
        case let .pairedClientsUnreadable(problem):
            StatusEvent(.pairedClientsUnreadable, "cannot read the paired clients: \(problem)", ["problem": .string(problem)])
        case let .dropped(count, reason):
            StatusEvent(
                .dropped, "dropped \(count) datagram(s): \(reason)",
                [
                    "count": EventValue(count), "reason": .string("\(reason)"), "cause": .string(reason.name),
                    "source": EventValue(reason.source.map { "\($0)" }),
                ])
        case let .underLoad(count):
            StatusEvent(
                .underLoad,
                "under load: \(count) handshake(s) asked to prove their address with a cookie before any public-key work "
                    + "(more handshakes than usual are coming: a flood? paired clients prove theirs by themselves)",
                ["count": EventValue(count)])
        }
    }
}
