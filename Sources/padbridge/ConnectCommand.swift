import ArgumentParser
import Glibc
import Logging
import PadCore
import PadLinux
import PadNet
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

    @Option(name: .customLong("as"), help: ArgumentHelp("The virtual pad to ask the host for: xbox360 or dualsense.", valueName: "kind"))
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
                profileValue = try RemapProfileFile.parse(text, for: (virtualKind ?? .dualSense).capabilities)
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

        let anyLocal = try SocketAddress.resolve(destination.isIPv6 ? "[::]:0" : "0.0.0.0:0", defaultPort: 0, passive: true)[0]
        let socket = try UDPSocket(bindingTo: anyLocal, loop: loop)
        defer { socket.close() }
        let output = LineOutput.standardError
        /// Ended by the host (taken over by another connect, or revoked): the exit status says so.
        var endedByHost = false
        // The pads forwarded are grabbed, and hidden from this machine's other programs (SDL's HIDAPI drivers and
        // Steam read the hidraw node and list the grabbed event node) while forwarded: docs/hiding.md. --no-grab
        // leaves them to local programs too.
        let hiding = grab ? BridgeHiding(loop: loop, logger: logger, command: .connect) : nil
        defer { hiding?.releaseAll() }
        /// The pads of the latest listing: where a pad that came back, or joined, is found with its nodes.
        var listed = chosen
        func hide(_ fingerprint: Fingerprint) {
            if let hiding, let controller = listed.first(where: { $0.fingerprint == fingerprint }) { hiding.hide(controller) }
        }
        // Looks for the host by its key on the LAN while it does not answer (made just after the client).
        var finder: PairedHostFinder?
        var client: ForwardingClient!
        /// Where the client sends now ("192.0.2.2:48100"): the stored address, or where the host was found.
        func hostText() -> String { finder?.paired.address ?? target.first.canonical }
        client = try ForwardingClient(
            controllers: chosen, host: destination, hostKey: paired.key, identity: identity, socket: socket,
            options: .init(virtualKind: virtualKind, grab: grab, profile: profileValue), loop: loop, logger: logger
        ) { event in
            switch event {
            case .connected:
                finder?.connected()
                output.write(
                    "padbridge: connected to \(client.map { "\($0.hostAddress)" } ?? hostText()) (\(paired.name)), forwarding \(chosen.count) pad(s)")
            case .linkLost:
                finder?.linkLost()
                output.write("padbridge: link to \(hostText()) (\(paired.name)) lost; the pads stop rumbling")
            case let .reconnecting(milliseconds): output.write("padbridge: reconnecting in \(milliseconds) ms")
            case let .padDetached(id):
                hiding?.release(id)
                output.write("padbridge: pad \(id) unplugged; the host shows it neutral")
            case let .padBack(id):
                output.write("padbridge: pad \(id) is back")
                hide(id)
            case let .padAdded(id, name):
                output.write("padbridge: forwarding \(name) [\(id)] too (plugged in)")
                hide(id)
            case let .tooManyPads(name):
                output.write(
                    "padbridge: not forwarding \(name): one connect forwards at most \(LinkClientMessage.maximumPads) pads")
            case let .padNotForwarded(id, reason):
                output.write("padbridge: \(paired.name) gives pad \(id) no virtual pad: \(reason)")
            case .revoked:
                endedByHost = true
                output.write(
                    "padbridge: \(paired.name) no longer trusts this client (revoked) and ended its session; pair again "
                        + "with `padbridge pair \(hostArgument ?? paired.name) CODE` (a code from `padbridge pairing-window` "
                        + "there)")
                loop.stop()
            case .takenOver:
                endedByHost = true
                output.write(
                    "padbridge: another `padbridge connect` with this machine's identity (\(store.identityPath)) connected "
                        + "to \(hostText()) and the host ended this one's session; stopping. Forward every pad from one "
                        + "connect (give them all, or --all)")
                loop.stop()
            case .noAnswer:
                output.write(
                    "padbridge: no answer from \(paired.name) at \(client.map { "\($0.hostAddress)" } ?? hostText()) yet; "
                        + "still trying. Is `padbridge serve` running there, and UDP port \(destination.port) open in its "
                        + "firewall? If the host was reinstalled, its key changed and it cannot read this machine's "
                        + "handshake: delete its line in \(store.pairedHostsPath) and pair again (`padbridge pair "
                        + "\(hostArgument ?? paired.name) CODE`). Both machines also need versions of padbridge that "
                        + "speak the same link (`padbridge --version` on each)")
            }
        }
        defer { client.close() }
        finder = try PairedHostFinder(
            paired: paired, first: target.first.canonical, client: client, store: store, loop: loop, logger: logger,
            output: output)
        defer { finder?.close() }
        let recording = try record.map(BridgeRecording.init(path:))
        defer { recording?.finish() }  // before the client closes the pad
        if let recording, let controller = chosen.first,
            let session = client.source(for: controller.fingerprint) as? PhysicalPadSession
        {
            recording.start(controller: controller, virtualNodes: [], loop: loop, logger: logger)
            session.onEvents = recording.physicalEvents
            session.onFeedbackWritten = recording.reachedPad
            client.onFeedbackReceived = { _, feedback in feedback.events.forEach(recording.gameFeedback) }
        }
        for controller in chosen { hide(controller.fingerprint) }
        if let note = target.note { output.write("padbridge: connecting to \(note)") }
        output.write(
            "padbridge: connecting to \(paired.name) at \(target.first.canonical) (\(destination)), host key \(paired.key.fingerprint)")

        // After each hotplug burst: pads that were unplugged and are back resume; with --all, new pads join.
        let relisting = try HotplugRelisting(
            monitor: monitor, sdlSource: .padbridgeHelper, loop: loop, logger: logger, isWanted: { [all] in all || client.isWaitingForAPad }
        ) { [all] present in
            listed = present
            client.resume(from: present)
            if all { client.addNewPads(from: present) }
            return nil
        }
        defer { relisting.cancel() }

        var statisticsTimer: LoopDeadline?
        if stats {
            var previous = client.statistics
            statisticsTimer = try loop.repeating(everyMilliseconds: 1000) {
                let now = client.statistics
                func loss(_ arrived: UInt32, of sent: UInt32) -> String {
                    guard sent > 0, arrived <= sent else { return "-" }
                    return String(format3: 100 * Double(sent - arrived) / Double(sent)) + " %"
                }
                let roundTrip = now.roundTripMicroseconds.map { String(format3: Double($0) / 1000) + " ms" } ?? "-"
                let oneWay = now.roundTripMicroseconds.map { String(format3: Double($0) / 2000) + " ms" } ?? "-"
                output.write(
                    "padbridge: \(now.framesSent - previous.framesSent) frames/s, \(now.datagramsSent &- previous.datagramsSent) "
                        + "datagrams/s out, \(now.datagramsReceived &- previous.datagramsReceived) in; loss to host "
                        + "\(loss(now.hostReceived, of: now.sentWhenHostCounted)), from host "
                        + "\(loss(now.receivedWhenHostCounted, of: now.hostSent)); round trip \(roundTrip), one way ~\(oneWay)")
                previous = now
            }
        }
        defer { statisticsTimer?.cancel() }
        shutdown = { loop.stop() }
        // Standard input is not read (connect takes no input): /dev/null there, or a background job, keeps it running.
        try loop.run()
        if endedByHost { throw ExitCode(1) }
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
