import Logging
import PadCore
import PadLinux
import PadSessions

/// remap's and connect's part in hiding the pads they grab from other programs on this machine (docs/hiding.md): for
/// each pad a lease from the hiding service on its event and hidraw nodes while the command holds them, given back
/// when the pad goes away or the command ends (the service also gives them back when it is killed). Without the
/// service, it says once what is not hidden, why, and how to install it. Loop-confined.
final class BridgeHiding {
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let command: Command

    /// The command that holds the pads.
    enum Command: String {
        case remap, connect

        /// What other programs see once the pad is hidden.
        var whatOthersSee: String {
            switch self {
            case .remap: "SDL, Steam and games see only its virtual pad"
            case .connect: "SDL, Steam and games on this machine no longer see it (the host's virtual pad is where it plays)"
            }
        }
    }
    private var leases: [Fingerprint: NodeHidingLease] = [:]
    private var saidUnavailable = false

    init(loop: DeviceEventLoop, logger: Logger, command: Command) {
        self.loop = loop
        self.logger = logger
        self.command = command
    }

    /// Asks the service to hide `controller`'s nodes (the command has grabbed them).
    func hide(_ controller: Controller) {
        release(controller.fingerprint)
        let name = "\(controller.name) [\(controller.fingerprint)]"
        let pad: EventValue = .string(controller.fingerprint.rawValue)
        let padName: EventValue = .string(controller.name)
        do {
            leases[controller.fingerprint] = try NodeHidingLease(
                hiding: controller.nodes.allPaths
                    + NodeHidingLease.joystickNodes(ofInputDevices: controller.nodes.evdev.map(\.inputSyspath)),
                loop: loop,
                onAnswer: { [command] answer in
                    if !answer.hidden.isEmpty {
                        StatusOutput.say(
                            .hidden,
                            "\(name) is hidden from other programs while \(command.rawValue) runs (\(answer.hidden.joined(separator: ", "))): "
                                + command.whatOthersSee,
                            ["pad": pad, "name": padName, "command": .string(command.rawValue), "nodes": EventValue(strings: answer.hidden)])
                    }
                    for (path, reason) in answer.refused.sorted(by: { $0.key < $1.key }) {
                        StatusOutput.say(
                            .hidingRefused,
                            "\(path) of \(name) stays visible to other programs: the hiding service refused it (\(reason))",
                            ["pad": pad, "node": .string(path), "reason": .string("\(reason)")])
                    }
                },
                onServiceGone: {
                    StatusOutput.say(
                        .hidingServiceGone,
                        "the hiding service went away: \(name) is visible to other programs again (a game may see it twice)",
                        ["pad": pad, "name": padName])
                })
        } catch {
            sayUnavailable(controller, error)
        }
    }

    /// Gives `fingerprint`'s nodes back (the pad went away: its nodes are gone, or about to be).
    func release(_ fingerprint: Fingerprint) {
        leases.removeValue(forKey: fingerprint)?.close()
    }

    func releaseAll() {
        for lease in leases.values { lease.close() }
        leases = [:]
    }

    private func sayUnavailable(_ controller: Controller, _ error: DeviceAccessError) {
        guard !saidUnavailable else { return }
        saidUnavailable = true
        let cause = error.code == .missingDevice ? "nothing listens at \(NodeHiding.socketPath)" : "\(error)"
        let hidraw = controller.nodes.hidraw.map { ", and read it through \($0) (SDL's HIDAPI drivers, Steam)" } ?? ""
        StatusOutput.say(
            .notHidden,
            "\(controller.name) [\(controller.fingerprint)] is not hidden from other programs: padbridge's "
                + "hiding service is not running (\(cause)). Its event nodes are grabbed, so their input reaches only "
                + "padbridge, but SDL and Steam still list the pad\(hidraw): a game may see two pads. To hide the "
                + "pads \(command.rawValue) grabs, enable the service padbridge's package installs: sudo systemctl enable --now "
                + "padbridge-hide.socket (docs/hiding.md)",
            ["pad": .string(controller.fingerprint.rawValue)])
    }
}
