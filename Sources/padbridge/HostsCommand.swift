import ArgumentParser
import Glibc
import Logging
import PadCore
import PadDNSSD
import PadLinux
import PadNet
import PadNetLinux

struct HostsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hosts",
        abstract: "List the padbridge hosts announced on the LAN (DNS-SD through avahi-daemon).",
        discussion: """
            A host announces itself while `padbridge serve` runs there with avahi-daemon: its name, addresses \
            (IPv4 and IPv6), port, key fingerprint and whether a pairing window is open. PAIRED says whether this \
            machine paired with that key (paired-hosts). `padbridge pair` and `padbridge connect` take a NAME from \
            this list, a unique start of it, or its index (#).
            An announcement only says where to try: anyone on the LAN can announce anything. `connect` trusts a host \
            only once the handshake with the paired key succeeds.
            --watch prints the hosts there are, then a line whenever one comes, changes (a pairing window opening) \
            or goes, until SIGINT or SIGTERM.
            Without avahi-daemon it says how to start it and exits 1.
            """
    )

    @Flag(name: .long, help: "Print JSON: an array of hosts (with --watch: one object per line and change).")
    var json = false

    @Flag(name: .long, help: "Keep running and print a line whenever a host comes, changes or goes.")
    var watch = false

    @Option(name: .long, help: ArgumentHelp("Wait at most this long for the hosts to answer (default 5).", valueName: "seconds"))
    var timeout: Double = 5

    @OptionGroup var configDirectory: ConfigDirectoryOptions

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard timeout.isFinite, timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout is in seconds, more than 0 and at most 3600.")
        }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.hosts")
        signal(SIGPIPE, SIG_IGN)
        let loop = try DeviceEventLoop()
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in loop.stop() }
        let store = try configDirectory.store()
        let paired = try store.pairedHosts()
        let output = LineOutput.standardOutput
        var listed = false
        var failure: DNSSDUnavailable?
        var outputClosed = false
        var browser: AnnouncedHostBrowser?

        func write(_ line: String) {
            guard !outputClosed else { return }
            if !output.write(line) {
                outputClosed = true
                StatusOutput.say(LineOutput.readerWentAway("hosts ends"))
                loop.stop()
            }
        }
        func line(_ event: String, _ host: AnnouncedHost, index: Int?) -> String {
            json
                ? ControllerPresentation.json(
                    AnnouncedHostPresentation.WatchLine(
                        event: event, host: AnnouncedHostPresentation.Object(host, index: index, paired: paired)),
                    pretty: false)
                : AnnouncedHostPresentation.watchLine(event, host, paired: paired)
        }
        func list() {
            guard !listed, let browser else { return }
            listed = true
            let hosts = browser.table.hosts
            if watch {
                for (index, host) in hosts.enumerated() { write(line("present", host, index: index)) }
                StatusOutput.say(.watchingHosts, "watching for hosts on the LAN; SIGINT or SIGTERM ends")
                return
            }
            if json {
                write(ControllerPresentation.json(
                    hosts.enumerated().map { AnnouncedHostPresentation.Object($1, index: $0, paired: paired) }, pretty: true))
            } else if hosts.isEmpty {
                StatusOutput.say(
                    .noHosts,
                    "no padbridge host is announced on the LAN (a host announces itself while `padbridge serve` "
                        + "runs there with avahi-daemon; one without it is reached by its address)")
            } else {
                AnnouncedHostPresentation.table(hosts, paired: paired).forEach(write)
            }
            loop.stop()
        }

        do {
            browser = try AnnouncedHostBrowser(loop: loop, logger: logger) { event in
                switch event {
                case .settled:
                    list()
                case let .changed(change):
                    guard listed, watch else { return }
                    switch change {
                    case let .appeared(host): write(line("add", host, index: nil))
                    case let .changed(host): write(line("change", host, index: nil))
                    case let .left(host): write(line("remove", host, index: nil))
                    }
                case let .unavailable(problem):
                    failure = problem
                    loop.stop()
                }
            }
        } catch {
            throw CommandFailure("cannot look for hosts on the LAN: \(error)")
        }
        defer { browser?.close() }
        // Hosts that answer late are not waited for beyond --timeout: the list is printed as it stands then.
        let deadline = loop.deadline(afterMilliseconds: UInt64(timeout * 1000)) { list() }
        try loop.run()
        deadline.cancel()
        if let failure { throw CommandFailure("cannot look for hosts on the LAN: \(failure)") }
    }
}
