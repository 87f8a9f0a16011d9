import ArgumentParser
import Glibc
import Logging
import PadCore
import PadLinux
import PadNet
import PadNetLinux
import PadProfiles
import PadSessions

struct ConnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Forward pads to a paired host (`padbridge serve` there), feedback coming back.",
        discussion: """
            Every frame a pad sends goes to the host at once, encrypted; the host shows the pad as a virtual one \
            (--as asks for a kind; the host's own --as wins). Rumble, lightbar, LEDs and trigger effects games send \
            there come back to the pad here. The pads are grabbed, and with padbridge's hiding service running \
            (padbridge-hide.socket) hidden from this machine's SDL, Steam and games while forwarded (docs/hiding.md); \
            --no-grab leaves them to local programs too. \
            --profile remaps here, before sending. When the link is lost the pad stops rumbling and padbridge \
            reconnects by itself; the host keeps the virtual pads meanwhile. Pair first: padbridge pair HOST CODE.
            --record FILE records the pad (its events as read here, its hidraw reports), the feedback the host relays \
            for it (`f ... virtual`: what a game sent the virtual pad there) and what of it reached the pad \
            (`f ... physical`), in padbridge's recording format; `padbridge replay FILE` brings the pad back.
            --all also forwards every pad plugged in later, and starts (and stays, quietly) with no pad plugged in.
            A paired host that does not answer at its stored address (a new DHCP lease) is looked for on the LAN by \
            its key: where avahi-daemon runs on both, the addresses announced with the paired key's fingerprint are \
            tried, and once the handshake with the paired key succeeds at one, paired-hosts holds it. An \
            announcement under its name with another key is never connected to.
            Ends on SIGINT or SIGTERM (standard input is not read).
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The host: its name as `padbridge hosts` lists it (or a unique start of it, or its index), or HOST, "
                + "HOST:PORT or [IPV6]:PORT as given to `padbridge pair`. None (or a pad's device path first): the one paired host announced on the LAN.",
            valueName: "host"))
    var host: String?

    @Argument(help: "The pads: index, ID or ID prefix, or device path (see `padbridge list`). None: the only pad.")
    var pads: [String] = []

    @Flag(name: .long, help: "Forward every connected pad, and every pad plugged in later.")
    var all = false

    @Option(name: .customLong("as"), help: ArgumentHelp("The virtual pad to ask the host for: xbox360, dualsense, dualsense-edge, dualshock4, xbox-one, switch-pro or steam-deck (default: the pad's own kind where the host can build it, else xbox360).", valueName: "kind"))
    var virtualKind: VirtualPadKind?

    @Option(
        name: .long, help: ArgumentHelp("A TOML remap profile run here before sending (see docs/remapping.md).", valueName: "file"),
        completion: .file(extensions: ["toml"]))
    var profile: String?

    @Flag(inversion: .prefixedNo, help: "Grab the pads so local programs do not see them too.")
    var grab = true

    @Flag(name: .long, help: "Print a line per second: frames sent, loss both ways, round trip.")
    var stats = false

    @Option(name: .long, help: ArgumentHelp("Record the pad and the feedback the host relays for it to this file (one PAD).", valueName: "file"))
    var record: String?

    @OptionGroup var configDirectory: ConfigDirectoryOptions

    @OptionGroup var global: GlobalOptions

    /// A first argument that is a device path ("/dev/input/event3") is a pad, not a host: `connect /dev/input/event3`
    /// forwards that pad to the one paired host announced on the LAN.
    var hostArgument: String? { host.flatMap { $0.hasPrefix("/") ? nil : $0 } }
    var padArguments: [String] { (host.flatMap { $0.hasPrefix("/") ? [$0] : nil } ?? []) + pads }

    func validate() throws {
        if all && !padArguments.isEmpty { throw ValidationError("--all forwards every pad: give no PAD with it.") }
        if record != nil && (all || padArguments.count > 1) {
            throw ValidationError("--record records one forwarded pad: name one PAD (no --all).")
        }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.connect")
        signal(SIGPIPE, SIG_IGN)
        let loop = try DeviceEventLoop()
        var shutdown: (() -> Void)?
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in if let shutdown { shutdown() } else { loop.stop() } }

        // Nothing is opened before the pairing is known: an unpaired host is an error with the fix in it.
        let store = try configDirectory.store()
        let target = try ConnectTarget.resolve(hostArgument, store: store, loop: loop, logger: logger)
        let paired = target.paired
        let identity = try store.identity()
        let profileValue: RemapProfile
        if let profile {
            let text = try TextFile.contents(atPath: profile)
            do {
                // Without --as the host builds each pad's own kind: the profile may target what any kind has.
                profileValue = try RemapProfileFile.parse(text, for: virtualKind?.capabilities ?? .anyVirtualPad)
            } catch {
                throw ValidationError("\(profile): \(error)")
            }
            if profileValue.needsVirtualKeyboard || profileValue.needsVirtualMouse {
                throw ValidationError(
                    "\(profile): key:, mouse: and scroll: targets, [mouse], [flick] and [gyro] output = \"mouse\" drive this "
                        + "machine's keyboard and mouse, which connect does not make (it forwards pads); use them with "
                        + "`padbridge remap`, or remove them from the profile")
            }
        } else {
            profileValue = .identity
        }
        let destination = try target.first.resolved()

        let monitor = try UdevMonitor(context: UdevContext())
        let controllers = try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads, sdlSource: .padbridgeHelper)
        let chosen: [Controller] =
            all
            ? controllers.filter { !$0.isBridgeOutput }.sorted { $0.fingerprint < $1.fingerprint }
            : padArguments.isEmpty
                ? [try MonitorCommand.choose(nil, from: controllers)]
                : try padArguments.map { try MonitorCommand.choose($0, from: controllers) }
        // --all waits for pads (the connect unit runs with none plugged in); named pads must be there.
        if chosen.isEmpty && !all { throw ValidationError(PadSelectionError.noControllers.description) }

        // The pads forwarded are grabbed, and hidden from this machine's other programs (SDL's HIDAPI drivers and
        // Steam read the hidraw node and list the grabbed event node) while forwarded: docs/hiding.md. --no-grab
        // leaves them to local programs too.
        let hiding = grab ? BridgeHiding(loop: loop, logger: logger, command: .connect) : nil
        defer { hiding?.releaseAll() }
        // Looks for the host by its key on the LAN while it does not answer (made just after the service).
        var finder: PairedHostFinder?
        /// Where the client sends now ("192.0.2.2:48100"): the stored address, or where the host was found.
        func hostText() -> String { finder?.paired.address ?? target.first.canonical }
        let service = try ClientService(
            configuration: ClientService.Configuration(
                controllers: chosen, forwardsNewPads: all, host: destination, hostKey: paired.key,
                forwarding: .init(virtualKind: virtualKind, grab: grab, profile: profileValue),
                statisticsEveryMilliseconds: stats ? 1000 : nil),
            identity: identity, monitor: monitor, sdlSource: .padbridgeHelper, hiding: hiding, loop: loop, logger: logger
        ) { event in
            switch event {
            case let .forwarding(event, hostAddress):
                switch event {
                case .connected: finder?.connected()
                case .linkLost: finder?.linkLost()
                default: break
                }
                StatusOutput.say(
                    ConnectStatus.event(
                        event, hostAddress: hostAddress, hostText: hostText(), paired: paired, store: store,
                        hostArgument: hostArgument, destinationPort: destination.port, padCount: chosen.count))
            case let .statistics(now, previous):
                StatusOutput.say(.statistics, ConnectStatus.statisticsLine(now, previous: previous))
            }
        }
        defer { service.close() }
        finder = try PairedHostFinder(
            paired: paired, first: target.first.canonical, client: service.client, store: store, loop: loop,
            logger: logger)
        defer { finder?.close() }
        let recording = try record.map(BridgeRecording.init(path:))
        defer { recording?.finish() }  // before the client closes the pad
        if let recording, let controller = chosen.first,
            let session = service.physicalPad(controller.fingerprint)
        {
            recording.start(controller: controller, virtualNodes: [], loop: loop, logger: logger)
            session.onEvents = recording.physicalEvents
            session.onFeedbackWritten = recording.reachedPad
            service.client.onFeedbackReceived = { _, feedback in feedback.events.forEach(recording.gameFeedback) }
        }
        service.hideForwardedPads()
        if let note = target.note { StatusOutput.say(.hostChosen, "connecting to \(note)", ["note": .string(note)]) }
        StatusOutput.say(
            .connecting,
            "connecting to \(paired.name) at \(target.first.canonical) (\(destination)), host key \(paired.key.fingerprint)",
            [
                "host": .string(paired.name), "address": .string(target.first.canonical),
                "hostKey": .string("\(paired.key.fingerprint)"),
            ])
        shutdown = { loop.stop() }
        // Standard input is not read (connect takes no input): /dev/null there, or a background job, keeps it running.
        try loop.run()
        if service.endedByHost { throw ExitCode(1) }
    }
}

/// `connect`'s status, one event each.
enum ConnectStatus {
    static func event(
        _ event: ForwardingClient.Event, hostAddress: SocketAddress, hostText: String, paired: PairedHost,
        store: TrustStore, hostArgument: String?, destinationPort: UInt16, padCount: Int
    ) -> StatusEvent {
        let host: EventValue = .string(paired.name)
        switch event {
        case .connected:
            return StatusEvent(
                .connected, "connected to \(hostAddress) (\(paired.name)), forwarding \(padCount) pad(s)",
                ["address": .string("\(hostAddress)"), "host": host, "pads": EventValue(padCount)])
        case .linkLost:
            return StatusEvent(
                .linkLost, "link to \(hostText) (\(paired.name)) lost; the pads stop rumbling",
                ["host": host, "address": .string(hostText)])
        case let .reconnecting(milliseconds):
            return StatusEvent(.reconnecting, "reconnecting in \(milliseconds) ms", ["milliseconds": EventValue(milliseconds)])
        case let .padDetached(id):
            return StatusEvent(.padDetached, "pad \(id) unplugged; the host shows it neutral", ["pad": .string("\(id)")])
        case let .padBack(id): return StatusEvent(.padBack, "pad \(id) is back", ["pad": .string("\(id)")])
        case let .padAdded(id, name):
            return StatusEvent(
                .padAdded, "forwarding \(name) [\(id)] too (plugged in)", ["pad": .string("\(id)"), "name": .string(name)])
        case let .tooManyPads(name):
            return StatusEvent(
                .tooManyPads, "not forwarding \(name): one connect forwards at most \(LinkClientMessage.maximumPads) pads",
                ["name": .string(name)])
        case let .padNotForwarded(id, reason):
            return StatusEvent(
                .padNotForwarded, "\(paired.name) gives pad \(id) no virtual pad: \(reason)",
                ["host": host, "pad": .string("\(id)"), "reason": .string(reason)])
        case .revoked:
            return StatusEvent(
                .revoked,
                "\(paired.name) no longer trusts this client (revoked) and ended its session; pair again "
                    + "with `padbridge pair \(hostArgument ?? paired.name) CODE` (a code from `padbridge pairing-window` "
                    + "there)",
                ["host": host])
        case .takenOver:
            return StatusEvent(
                .takenOver,
                "another `padbridge connect` with this machine's identity (\(store.identityPath)) connected "
                    + "to \(hostText) and the host ended this one's session; stopping. Forward every pad from one "
                    + "connect (give them all, or --all)",
                ["host": host])
        case .noAnswer:
            return StatusEvent(
                .noAnswer,
                "no answer from \(paired.name) at \(hostAddress) yet; "
                    + "still trying. Is `padbridge serve` running there, and UDP port \(destinationPort) open in its "
                    + "firewall? If the host was reinstalled, its key changed and it cannot read this machine's "
                    + "handshake: delete its line in \(store.pairedHostsPath) and pair again (`padbridge pair "
                    + "\(hostArgument ?? paired.name) CODE`). Both machines also need versions of padbridge that "
                    + "speak the same link (`padbridge --version` on each)",
                ["host": host, "address": .string("\(hostAddress)")])
        }
    }

    /// --stats: a line per second.
    static func statisticsLine(_ now: ForwardingClient.Statistics, previous: ForwardingClient.Statistics) -> String {
        func loss(_ arrived: UInt32, of sent: UInt32) -> String {
            guard sent > 0, arrived <= sent else { return "-" }
            return String(format3: 100 * Double(sent - arrived) / Double(sent)) + " %"
        }
        let roundTrip = now.roundTripMicroseconds.map { String(format3: Double($0) / 1000) + " ms" } ?? "-"
        let oneWay = now.roundTripMicroseconds.map { String(format3: Double($0) / 2000) + " ms" } ?? "-"
        return "\(now.framesSent - previous.framesSent) frames/s, \(now.datagramsSent &- previous.datagramsSent) "
            + "datagrams/s out, \(now.datagramsReceived &- previous.datagramsReceived) in; loss to host "
            + "\(loss(now.hostReceived, of: now.sentWhenHostCounted)), from host "
            + "\(loss(now.receivedWhenHostCounted, of: now.hostSent)); round trip \(roundTrip), one way ~\(oneWay)"
    }
}

extension String {
    /// Three decimals, without Foundation.
    fileprivate init(format3 value: Double) {
        let scaled = Int((value * 1000).rounded())
        let fraction = String(abs(scaled) % 1000)
        self = "\(scaled / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}

extension BridgeHiding: PadHiding {}
