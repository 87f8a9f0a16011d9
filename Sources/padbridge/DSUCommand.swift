import ArgumentParser
import Glibc
import Logging
import PadCore
import PadLinux
import PadNet
import PadNetLinux
import PadSessions

struct DSUCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dsu",
        abstract: "Serve pads' motion, buttons and sticks to emulators over DSU (cemuhook), as DS4Windows does.",
        discussion: """
            Emulators (Cemu, Dolphin, Citra's and Yuzu's successors, RPCS3) read motion over the DSU ("cemuhook") \
            protocol, version 1001, from a server on 127.0.0.1:26760: point the emulator's DSU or "cemuhook" \
            client at it (docs/dsu.md says where each keeps the setting). Up to four pads, one per slot: without \
            PAD every connected pad, in the order of their IDs (the same pads get the same slots every run), and \
            every pad plugged in later while a slot is free; or the pads named (index, ID or ID prefix, or device \
            path, as `padbridge list` prints them), in that order. The pads are read, not grabbed: games and other \
            programs still see them. A pad that goes away keeps its slot (shown as not connected) until it comes \
            back.
            Motion goes out in DSU's units and axes (g, degrees per second; pitch, yaw, roll as DS4Windows sends a \
            DualShock 4's), stamped with the pad's own sensor clock. A client's subscription ends 5 s after it last \
            renewed it; at most --max-clients clients at once; a source sending more than 20 requests a second has \
            the rest dropped, so a flood cannot stall the pads.
            --listen ADDRESS:PORT listens elsewhere. DSU has no password and no encryption: on any address but a \
            loopback one every served pad's motion and buttons are open to that network, which padbridge says \
            loudly when it starts.
            With --events json, dsuListening, dsuPad, dsuPadAway, dsuClientSubscribed, dsuClientExpired, \
            dsuClientRefused and dsuRequestsLimited say what happens. Ends on SIGINT or SIGTERM.
            """
    )

    @Argument(help: "Up to four pads: index, ID or ID prefix, or device path (see `padbridge list`). Default: every pad.")
    var pads: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The address and port to listen on (default 127.0.0.1:26760, where emulators look). Any other address "
                + "opens the pads' motion to that network.", valueName: "address:port"))
    var listen = "127.0.0.1:\(DSUProtocol.defaultPort)"

    @Option(name: .long, help: ArgumentHelp("Clients served at once (1-64).", valueName: "count"))
    var maxClients = 16

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if pads.count > DSUProtocol.slotCount {
            throw ValidationError("DSU has four slots: name at most four pads (\(pads.count) given).")
        }
        if !(1...64).contains(maxClients) { throw ValidationError("--max-clients takes 1 to 64.") }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.dsu")
        signal(SIGPIPE, SIG_IGN)
        let address = try Self.address(listen, option: "--listen")

        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }
        // Receiving hotplug events starts before the listing, so a pad that comes in between is not missed.
        let monitor = try UdevMonitor(context: UdevContext())
        let controllers = try ControllerCatalog.discover(logger: logger, sdlView: .forGenericPads, sdlSource: .padbridgeHelper)
        let chosen: [Controller]
        if pads.isEmpty {
            chosen = controllers.filter { !$0.isBridgeOutput }.sorted { $0.fingerprint < $1.fingerprint }
        } else {
            chosen = try pads.map { argument in
                do { return try PadSelector(argument).resolve(in: controllers) } catch { throw ValidationError("\(error)") }
            }
        }

        let server: DSUServer
        do {
            server = try DSUServer(listeningOn: address, maximumClients: maxClients, loop: loop, logger: logger) { event in
                StatusOutput.say(Self.statusEvent(event))
            }
        } catch {
            throw ValidationError(error.description)
        }
        defer { server.close() }
        let slots = try DSUPadSlots(
            server: server, followsNewPads: pads.isEmpty, monitor: monitor, loop: loop, logger: logger)
        defer { slots.close() }
        StatusOutput.say(
            .dsuListening,
            "serving DSU (cemuhook protocol 1001) on \(server.localAddress)"
                + (server.localAddress.isLoopback ? "" : ", open to that network")
                + "; point the emulator's DSU client at it; SIGINT or SIGTERM ends",
            ["address": .string(server.localAddress.description), "loopback": .bool(server.localAddress.isLoopback)])
        if chosen.isEmpty { StatusOutput.say(.noPadYet, "no pad yet; each one plugged in gets a free slot") }
        for controller in chosen { slots.serve(controller) }
        try loop.run()
    }

    /// The address `text` names (nil: 127.0.0.1:26760), for `option`'s error.
    static func address(_ text: String?, option: String) throws -> SocketAddress {
        let text = text ?? "127.0.0.1:\(DSUProtocol.defaultPort)"
        do {
            guard let first = try SocketAddress.resolve(text, defaultPort: DSUProtocol.defaultPort, passive: true).first
            else { throw ValidationError("\(option) \(text): no address") }
            return first
        } catch let error as LinkSocketError {
            throw ValidationError("\(option): \(error)")
        }
    }

    static func statusEvent(_ event: DSUServer.Event) -> StatusEvent {
        switch event {
        case let .clientSubscribed(path, clientID, slots):
            let list = slots.map(String.init).joined(separator: ", ")
            return StatusEvent(
                .dsuClientSubscribed, "DSU client \(path.remote) (id \(clientID)) reads slot\(slots.rawValue.nonzeroBitCount == 1 ? "" : "s") \(list)",
                ["client": .string(path.remote.description), "clientID": EventValue(clientID), "slots": .array(slots.map { EventValue($0) })])
        case let .clientExpired(path, clientID):
            return StatusEvent(
                .dsuClientExpired, "DSU client \(path.remote) (id \(clientID)) stopped asking: no more data for it",
                ["client": .string(path.remote.description), "clientID": EventValue(clientID)])
        case let .clientRefused(path, clientID, maximum):
            return StatusEvent(
                .dsuClientRefused,
                "DSU client \(path.remote) (id \(clientID)) refused: \(maximum) clients are served already (--max-clients)",
                ["client": .string(path.remote.description), "clientID": EventValue(clientID), "maximumClients": EventValue(maximum)])
        case let .requestsLimited(source, dropped):
            return StatusEvent(
                .dsuRequestsLimited,
                "dropped \(dropped) DSU request\(dropped == 1 ? "" : "s") over the limit (the last from \(source)): a client asking far more often than emulators do",
                ["source": .string(source.description), "dropped": EventValue(dropped)])
        }
    }
}

/// `dsu`'s four slots: a pad read (not grabbed) by a `PhysicalPadSession` in each, its frames fed to the server; a pad
/// that goes away keeps its slot until it comes back; with `followsNewPads`, a pad plugged in later takes a free slot
/// (one never used, else one whose pad is away). Loop-confined.
final class DSUPadSlots {
    private struct Served {
        let session: PhysicalPadSession
        var description: DSUPadState
    }

    private let server: DSUServer
    private let followsNewPads: Bool
    private let loop: DeviceEventLoop
    private let logger: Logger
    private var served: [Served?] = Array(repeating: nil, count: DSUProtocol.slotCount)
    private var relisting: HotplugRelisting?
    private var saidFull = false

    init(server: DSUServer, followsNewPads: Bool, monitor: UdevMonitor, loop: DeviceEventLoop, logger: Logger) throws {
        self.server = server
        self.followsNewPads = followsNewPads
        self.loop = loop
        self.logger = logger
        relisting = try HotplugRelisting(
            monitor: monitor, sdlSource: .padbridgeHelper, loop: loop, logger: logger,
            isWanted: { [weak self] in
                guard let self else { return false }
                return self.followsNewPads || self.served.contains { $0.map { !$0.session.isAttached } ?? false }
            },
            onListing: { [weak self] present in
                self?.listed(present)
                return nil
            })
    }

    /// Serves `controller` in the first free slot; says so, or why not.
    func serve(_ controller: Controller) {
        guard let slot = freeSlot() else {
            if !saidFull {
                saidFull = true
                StatusOutput.say(
                    .tooManyPads, "not serving \(controller.name) [\(controller.fingerprint)]: DSU has four slots, all taken",
                    ["pad": .string(controller.fingerprint.rawValue)])
            }
            return
        }
        served[slot]?.session.close()
        served[slot] = nil
        var description = DSUPadState(describing: controller)
        do {
            let server = self.server
            let session = try PhysicalPadSession(
                controller: controller, profile: .identity, target: .everything, grab: false, loop: loop, logger: logger
            ) { snapshot in
                description.snapshot = snapshot
                server.update(slot: slot, pad: description)
            }
            served[slot] = Served(session: session, description: description)
            session.onDetached = { [weak self] in self?.detached(slot: slot) }
            session.onReattached = { [weak self] in self?.reattached(slot: slot) }
            StatusOutput.say(
                .dsuPad,
                "slot \(slot): \(controller.name) [\(controller.fingerprint)], MAC \(description.mac)"
                    + (description.motion == .none ? ", no motion sensors" : ""),
                [
                    "slot": EventValue(slot), "pad": .string(controller.fingerprint.rawValue), "name": .string(controller.name),
                    "mac": .string(description.mac.description), "motion": .bool(description.motion != .none),
                ])
        } catch {
            server.clear(slot: slot)
            StatusOutput.say(
                .cannotBridge, "cannot read \(controller.name) [\(controller.fingerprint)]: \(error)",
                ["pad": .string(controller.fingerprint.rawValue)])
        }
    }

    func close() {
        relisting?.cancel()
        relisting = nil
        for slot in served.indices {
            served[slot]?.session.close()
            served[slot] = nil
        }
    }

    /// The slot a new pad takes: one never used, else one whose pad is away; nil when all four hold pads.
    private func freeSlot() -> Int? {
        served.firstIndex { $0 == nil } ?? served.firstIndex { $0.map { !$0.session.isAttached } ?? false }
    }

    private func listed(_ present: [Controller]) {
        for slot in served.indices {
            guard let entry = served[slot], !entry.session.isAttached else { continue }
            entry.session.resume(from: present)
        }
        guard followsNewPads else { return }
        let servedPads = Set(served.compactMap { $0?.session.fingerprint })
        for controller in present.sorted(by: { $0.fingerprint < $1.fingerprint })
        where !controller.isBridgeOutput && !servedPads.contains(controller.fingerprint) {
            serve(controller)
        }
    }

    private func detached(slot: Int) {
        guard var entry = served[slot] else { return }
        entry.description.snapshot = entry.description.snapshot.released
        entry.description.connected = false
        served[slot] = entry
        server.update(slot: slot, pad: entry.description)
        StatusOutput.say(
            .dsuPadAway, "slot \(slot): \(entry.session.controller.name) went away; the slot waits for it",
            ["slot": EventValue(slot), "pad": .string(entry.session.fingerprint.rawValue)])
    }

    private func reattached(slot: Int) {
        guard let entry = served[slot] else { return }
        StatusOutput.say(
            .dsuPad, "slot \(slot): \(entry.session.controller.name) [\(entry.session.fingerprint)] is back",
            ["slot": EventValue(slot), "pad": .string(entry.session.fingerprint.rawValue)])
    }
}

/// `remap --dsu`'s server: each bridge's virtual pad, as games see it (the profile applied), in the first free of
/// DSU's four slots, kept by its pad while the bridge lives (a pad unplugged and back keeps its slot). Loop-confined.
final class DSUBridgeSlots {
    private let server: DSUServer
    private var slots: [Fingerprint] = []
    private var saidFull = false

    /// Listens on `listen` (default 127.0.0.1:26760) and says where, as `dsu` does.
    init(listen: String?, loop: DeviceEventLoop, logger: Logger) throws {
        let address = try DSUCommand.address(listen, option: "--dsu-listen")
        do {
            server = try DSUServer(listeningOn: address, maximumClients: 16, loop: loop, logger: logger) { event in
                StatusOutput.say(DSUCommand.statusEvent(event))
            }
        } catch {
            var named = error
            named.listenOption = "--dsu-listen"
            throw ValidationError(named.description)
        }
        StatusOutput.say(
            .dsuListening,
            "serving the remapped pads over DSU (cemuhook protocol 1001) on \(server.localAddress)"
                + (server.localAddress.isLoopback ? "" : ", open to that network"),
            ["address": .string(server.localAddress.description), "loopback": .bool(server.localAddress.isLoopback)])
    }

    /// Serves `bridge`'s frames in its pad's slot (a new one, the first free, for a pad not served yet).
    func serve(_ bridge: RemapBridge) {
        guard let controller = bridge.controller else { return }
        let slot: Int
        if let known = slots.firstIndex(of: bridge.fingerprint) {
            slot = known
        } else if slots.count < DSUProtocol.slotCount {
            slot = slots.count
            slots.append(bridge.fingerprint)
        } else {
            if !saidFull {
                saidFull = true
                StatusOutput.say(
                    .tooManyPads, "not serving \(controller.name) [\(controller.fingerprint)] over DSU: its four slots are taken",
                    ["pad": .string(controller.fingerprint.rawValue)])
            }
            return
        }
        var description = DSUPadState(describing: controller)
        // The virtual pad's motion is the physical one's: a kind without motion still shows none.
        if bridge.kind?.capabilities.motion != true { description.motion = .none }
        let server = self.server
        server.update(slot: slot, pad: description)
        bridge.onShown = { snapshot, present in
            description.snapshot = snapshot
            description.connected = present
            server.update(slot: slot, pad: description)
        }
        StatusOutput.say(
            .dsuPad, "DSU slot \(slot): \(controller.name) [\(controller.fingerprint)] as remapped",
            ["slot": EventValue(slot), "pad": .string(controller.fingerprint.rawValue), "name": .string(controller.name),
             "mac": .string(description.mac.description), "motion": .bool(description.motion != .none)])
    }

    func close() { server.close() }
}

/// `remap`'s and `serve`'s --dsu and --dsu-listen: their pads served over DSU too, as `padbridge dsu` serves pads.
struct DSUOptions: ParsableArguments {
    @Flag(
        name: .long,
        help: "Also serve the virtual pads (the first four) to emulators over DSU on 127.0.0.1:26760, as `padbridge dsu` does.")
    var dsu = false

    @Option(
        name: .customLong("dsu-listen"),
        help: ArgumentHelp(
            "With --dsu: the address and port to serve DSU on (any address but a loopback one opens the pads' motion to that network).",
            valueName: "address:port"))
    var dsuListen: String?

    func validate() throws {
        if dsuListen != nil && !dsu { throw ValidationError("--dsu-listen applies with --dsu.") }
    }

    /// Where to serve DSU; nil without --dsu.
    func address() throws -> SocketAddress? {
        try dsu ? DSUCommand.address(dsuListen, option: "--dsu-listen") : nil
    }
}
