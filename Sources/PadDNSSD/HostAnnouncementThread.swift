public import Logging
public import PadCore
public import PadLinux

/// `serve`'s announcement (`HostAnnouncer`) on a loop and a thread of its own (`LoopThread`): every Avahi call is a
/// D-Bus round trip that waits for avahi-daemon (up to libdbus's 25 s when the daemon is stuck), and a rival on the
/// LAN who announces the same name makes the announcer rename itself (a reset, an add and a commit each time), so
/// none of it may run on the loop that forwards pads. The two loops talk through mailboxes only: the pairing
/// window's records go there, the announcer's events come back. Loop-confined to the loop that makes it.
public final class HostAnnouncementThread {
    private enum Command: Sendable {
        case update(HostAnnouncementRecord)
        case close
    }

    private let commands: LoopMailbox<Command>
    private let events: LoopMailbox<HostAnnouncer.Event>
    private var closed = false

    /// Starts announcing `name` on `port` from a thread of its own; `onEvent` runs on `loop`. Throws only when the
    /// thread or its mailboxes cannot be made; everything Avahi says (not installed, no daemon, no bus) comes as
    /// `.notAnnounced` events.
    public init(
        name: String, port: UInt16, record: HostAnnouncementRecord, loop: DeviceEventLoop, logger: Logger,
        onEvent: @escaping (HostAnnouncer.Event) -> Void
    ) throws(DeviceAccessError) {
        let commands = try LoopMailbox<Command>()
        let events = try LoopMailbox<HostAnnouncer.Event>()
        self.commands = commands
        self.events = events
        try events.receive(on: loop, onEvent)
        try LoopThread.start { announcerLoop in
            guard let announcerLoop else {
                events.post(.notAnnounced(DNSSDUnavailable(code: .failed, reason: "no event loop could be made for it")))
                return
            }
            let announcer: HostAnnouncer
            do throws(DNSSDUnavailable) {
                announcer = try HostAnnouncer(
                    name: name, port: port, record: record, loop: announcerLoop, logger: logger
                ) { event in events.post(event) }
            } catch {
                events.post(.notAnnounced(error))
                return
            }
            do {
                try commands.receive(on: announcerLoop) { command in
                    switch command {
                    case let .update(record):
                        announcer.update(record)
                    case .close:
                        announcer.close()
                        commands.stopReceiving()
                        announcerLoop.stop()
                    }
                }
            } catch {
                announcer.close()
                events.post(.notAnnounced(DNSSDUnavailable(code: .failed, reason: "\(error)")))
                announcerLoop.stop()
            }
        }
    }

    /// New TXT records (the pairing window opened or closed).
    public func update(_ record: HostAnnouncementRecord) {
        guard !closed else { return }
        commands.post(.update(record))
    }

    /// Withdraws the announcement (on its thread, which then ends); no event comes after. Idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        events.stopReceiving()
        commands.post(.close)
    }

    deinit { close() }
}
