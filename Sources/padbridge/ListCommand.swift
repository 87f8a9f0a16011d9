import ArgumentParser
import Glibc
import Logging
import PadCore
import PadLinux
import PadSessions

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the connected pads: one line each, or JSON.",
        discussion: """
            Each pad is one physical controller, however many device nodes the kernel made for it (a DualSense: its \
            pad, motion-sensor and touchpad event nodes and its hidraw node). ID is its fingerprint: the same pad \
            gets the same ID after replugging and rebooting (from its serial or MAC; pads without one are told \
            apart by the port they hang off). Other commands take a PAD as the index (#), the ID or a unique prefix \
            of it, or one of its device paths.
            --watch prints the pads there are, then a line whenever a pad comes or goes, until SIGINT or SIGTERM.
            """
    )

    @Flag(name: .long, help: "Print JSON: an array of pads (with --watch: one object per line and change).")
    var json = false

    @Flag(name: .long, help: "Keep running and print a line whenever a pad is added or removed.")
    var watch = false

    @Flag(name: .customLong("udev-records"), help: .hidden)
    var udevRecords = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.list")
        let output = LineOutput.standardOutput
        if udevRecords {
            // For bug reports and test fixtures: what udev says about every input and hidraw node.
            output.write(ControllerPresentation.json(try UdevContext().padNodeRecords(), pretty: true))
            return
        }
        guard watch else {
            let controllers = try ControllerCatalog.discover(logger: logger, sdlSource: .padbridgeHelper)
            if json {
                output.write(
                    ControllerPresentation.json(
                        controllers.enumerated().map { ControllerPresentation.Object($1, index: $0) }, pretty: true))
            } else if controllers.isEmpty {
                StatusOutput.say(.noPads, "no pads found (is one connected? `padbridge doctor` checks access)")
            } else {
                ControllerPresentation.table(controllers).forEach { output.write($0) }
            }
            return
        }
        try watchChanges(logger: logger)
    }

    /// Prints the pads there are ("present"), then "add"/"remove" as they come and go. udev reports a pad node by
    /// node; a listing is taken once the burst of uevents has been quiet for a moment (`HotplugSettle`), so a pad is
    /// reported once, complete, not node by node.
    private func watchChanges(logger: Logger) throws {
        signal(SIGPIPE, SIG_IGN)
        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }
        var known: [Fingerprint: (controller: Controller, index: Int)] = [:]
        var outputClosed = false

        func report(_ event: String, _ controller: Controller, index: Int) {
            guard !outputClosed else { return }
            let line =
                json
                ? ControllerPresentation.json(
                    WatchLine(event: event, controller: ControllerPresentation.Object(controller, index: index)),
                    pretty: false)
                : "\(event.padding(toWidth: 8))\(index)  \(controller.fingerprint)  "
                    + "\(ControllerPresentation.kindTitle(controller.kind))  \(controller.name)  \(controller.bus.rawValue)"
            // Its reader went away (`list --watch | head -1`): nothing more to do.
            if !LineOutput.standardOutput.write(line) {
                outputClosed = true
                StatusOutput.say(LineOutput.readerWentAway("list ends"))
                loop.stop()
            }
        }

        func relist(initial: Bool) {
            let controllers: [Controller]
            do {
                controllers = try ControllerCatalog.discover(logger: logger, sdlSource: .padbridgeHelper)
            } catch {
                logger.error("listing pads failed: \(error)")
                return
            }
            let current = Dictionary(
                controllers.enumerated().map { ($1.fingerprint, (controller: $1, index: $0)) },
                uniquingKeysWith: { first, _ in first })
            for (fingerprint, old) in known.sorted(by: { $0.value.index < $1.value.index })
            where current[fingerprint] == nil {
                report("remove", old.controller, index: old.index)
            }
            var next = current
            for (index, controller) in controllers.enumerated() {
                if initial {
                    report("present", controller, index: index)
                } else if let old = known[controller.fingerprint] {
                    // A pad's nodes go away one by one, with pauses the settle time does not always cover: a pad
                    // that lost any node is on its way out (even if a node it was first listed without shows up
                    // in the same listing); it stays as it was last reported until it is gone, so "remove" names
                    // the whole pad. Only gaining nodes (a late touchpad node) is a change.
                    let before = Set(old.controller.nodes.allPaths)
                    let after = Set(controller.nodes.allPaths)
                    if !after.isStrictSuperset(of: before) {
                        next[controller.fingerprint] = old
                    } else {
                        report("change", controller, index: index)
                    }
                } else {
                    report("add", controller, index: index)
                }
            }
            known = next
        }

        // Receiving starts before the first listing, so no pad that comes in between is missed.
        let monitor = try UdevMonitor(context: UdevContext())
        let settle = try HotplugSettle(loop: loop) { relist(initial: false) }
        let subscription = try loop.watch(monitor) { change in
            logger.debug("uevent \(change)")
            settle.noteEvent()
        }
        relist(initial: true)
        StatusOutput.say(
            .watching, "watching for pads (\(monitor.source.rawValue) uevents); SIGINT or SIGTERM ends",
            ["source": .string(monitor.source.rawValue)])
        try loop.run()
        subscription.cancel()
    }

    struct WatchLine: Encodable {
        var event: String
        var controller: ControllerPresentation.Object
    }
}
