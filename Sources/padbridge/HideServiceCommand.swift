import ArgumentParser
import Glibc
import Logging
import PadCore
import PadLinux

/// `padbridge hide-service`: the privileged piece that hides a bridged pad's nodes from games (docs/hiding.md).
/// Run as root by systemd (systemd/padbridge-hide.socket and .service), which passes it the listening socket;
/// started by hand, it listens itself.
struct HideServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hide-service",
        abstract: "Hide the pads remap bridges from other programs (root; run by systemd/padbridge-hide.service).",
        discussion: """
            Serves requests on a unix socket (\(NodeHiding.socketPath); systemd passes it through \
            padbridge-hide.socket): a client that holds a pad's /dev/hidrawN and /dev/input/eventN nodes open (padbridge \
            remap) asks for them to be hidden; they are taken from everyone but root (owner and group root, ACL \
            removed, mode 0000, and a runtime udev rule in \(HiddenNodeRule.directory) that keeps them so) until the \
            client lets go or its connection closes, however it ended. Nodes of a bridge's own virtual pads \
            (phys padbridge-output/...) are never hidden. What an earlier run left hidden is given back at start.
            Ends on SIGINT or SIGTERM, giving every node back.
            """)

    @Option(name: .long, help: "The socket to listen on when systemd passes none.")
    var socket: String = NodeHiding.socketPath

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.hide-service")
        signal(SIGPIPE, SIG_IGN)
        guard geteuid() == 0 else {
            throw CommandFailure(
                "hide-service changes device nodes' owners and permissions: it runs as root, normally started by "
                    + "systemd (sudo systemctl enable --now padbridge-hide.socket; docs/hiding.md)")
        }
        let loop = try DeviceEventLoop()
        var service: NodeHidingService?
        try loop.watchSignals([SIGINT, SIGTERM]) { _ in
            service?.close()
            loop.stop()
        }
        let listener: UnixStreamSocket
        var createdSocket = false
        if let passed = UnixStreamSocket.passedBySystemd() {
            listener = passed
        } else {
            createdSocket = true
            if let slash = socket.lastIndex(of: "/"), slash != socket.startIndex {
                try TextFile.makeDirectories(String(socket[..<slash]), permissions: [.ownerReadWriteExecute, .groupReadExecute, .otherReadExecute])
            }
            listener = try UnixStreamSocket.listening(at: socket, mode: 0o666)
        }
        service = try NodeHidingService(listener: listener, loop: loop, logger: logger)
        defer {
            service?.close()
            // A socket it made itself goes with it (systemd removes its own).
            if createdSocket { unlink(socket) }
        }
        StatusOutput.say(
            .hidingServiceListening, "hiding service listening on \(socket); SIGINT or SIGTERM ends", ["socket": .string(socket)])
        try loop.run()
    }
}
