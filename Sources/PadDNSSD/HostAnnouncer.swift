internal import CAvahiLoader
public import Logging
public import PadCore
public import PadLinux

/// `serve`'s DNS-SD announcement: the service `_padbridge._udp` under the host's name, on its port, with TXT records
/// saying its key's fingerprint and whether a pairing window is open (`HostAnnouncementRecord`), published through
/// avahi-daemon on every interface. It follows the daemon: it waits for one that is not running yet, announces again
/// after the daemon restarts, takes another name ("NAME #2", Avahi's choice) when another host has this one, and
/// updates the records in place when the pairing window opens or closes. Loop-confined.
public final class HostAnnouncer {
    public enum Event: Sendable, Equatable {
        /// On the LAN under this name.
        case announced(name: String)
        /// Another service has the name: announced under `name` instead.
        case renamed(from: String, to: String)
        /// Not announced, and why (the daemon not running: it will be as soon as the daemon is).
        case notAnnounced(DNSSDUnavailable)
    }

    private let connection: DNSSDConnection
    private let port: UInt16
    private var name: String
    private var record: HostAnnouncementRecord
    private let onEvent: (Event) -> Void
    private let logger: Logger
    private var group: OpaquePointer?
    /// Whether the service is in the group (added and committed).
    private var added = false

    /// Starts announcing `name` (cleaned and cut to a DNS-SD name) on `port`. Throws only when Avahi's client
    /// library is not installed or the D-Bus system bus refuses; a daemon not running is `.notAnnounced`, and the
    /// announcement follows when it starts.
    public init(
        name: String, port: UInt16, record: HostAnnouncementRecord, loop: DeviceEventLoop, logger: Logger,
        onEvent: @escaping (Event) -> Void
    ) throws(DNSSDUnavailable) {
        self.name = AnnouncedServiceName.publishable(name)
        self.port = port
        self.record = record
        self.onEvent = onEvent
        self.logger = logger
        connection = try DNSSDConnection(loop: loop, waitForDaemon: true, logger: logger)
        connection.onState = { [unowned self] state in self.connectionChanged(state) }
        connectionChanged(connection.state)
    }

    /// The name announced (or to be).
    public var announcedName: String { name }

    /// New TXT records (the pairing window opened or closed): updated in place, or announced so when the daemon is back.
    public func update(_ record: HostAnnouncementRecord) {
        guard record != self.record else { return }
        self.record = record
        guard added, let group else { return }
        let status = withTXT(record) { txt in
            connection.library.functions.avahi_entry_group_update_service_txt_strlst(
                group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(rawValue: 0), name,
                HostAnnouncementRecord.serviceType, nil, txt)
        }
        if status < 0 { logger.warning("could not update the announcement's TXT records: \(connection.library.describe(status))") }
    }

    /// Withdraws the announcement. Idempotent.
    public func close() {
        freeGroup()
        connection.close()
    }

    deinit { close() }

    private func connectionChanged(_ state: DNSSDConnection.State) {
        switch state {
        case .running:
            publish()
        case .daemonBusy:
            // The daemon's own host name is being (re)established: withdraw until it runs again.
            if let group { _ = connection.library.functions.avahi_entry_group_reset(group) }
            added = false
        case .waitingForDaemon:
            freeGroup()
            onEvent(.notAnnounced(DNSSDUnavailable(code: .daemonNotRunning, reason: "it will be once avahi-daemon starts")))
        case let .failed(problem):
            freeGroup()
            onEvent(.notAnnounced(problem))
        }
    }

    private func freeGroup() {
        if let group { _ = connection.library.functions.avahi_entry_group_free(group) }
        group = nil
        added = false
    }

    private func publish() {
        guard let client = connection.client else { return }
        let functions = connection.library.functions
        if group == nil {
            group = functions.avahi_entry_group_new(
                client,
                { group, state, userdata in
                    guard let userdata else { return }
                    Unmanaged<HostAnnouncer>.fromOpaque(userdata).takeUnretainedValue().groupChanged(group, state)
                }, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let group else {
            onEvent(.notAnnounced(connection.unavailable(functions.avahi_client_errno(client))))
            return
        }
        if added { return }
        let status = withTXT(record) { txt in
            functions.avahi_entry_group_add_service_strlst(
                group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(rawValue: 0), name,
                HostAnnouncementRecord.serviceType, nil, nil, port, txt)
        }
        if status == Int32(AVAHI_ERR_COLLISION) {
            rename()
            return
        }
        guard status >= 0 else {
            onEvent(.notAnnounced(connection.unavailable(status)))
            return
        }
        let committed = functions.avahi_entry_group_commit(group)
        guard committed >= 0 else {
            onEvent(.notAnnounced(connection.unavailable(committed)))
            return
        }
        added = true
    }

    private func groupChanged(_ group: OpaquePointer?, _ state: AvahiEntryGroupState) {
        if self.group == nil { self.group = group }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            onEvent(.announced(name: name))
        case AVAHI_ENTRY_GROUP_COLLISION:
            // Another service on the LAN has this name: Avahi withdrew ours; announce it under the next name.
            rename()
        case AVAHI_ENTRY_GROUP_FAILURE:
            let error = connection.client.map { connection.library.functions.avahi_client_errno($0) } ?? 0
            added = false
            onEvent(.notAnnounced(connection.unavailable(error)))
        default:
            break
        }
    }

    private func rename() {
        let functions = connection.library.functions
        guard let alternative = functions.avahi_alternative_service_name(name) else { return }
        let previous = name
        name = String(cString: alternative)
        functions.avahi_free(alternative)
        if let group { _ = functions.avahi_entry_group_reset(group) }
        added = false
        onEvent(.renamed(from: previous, to: name))
        publish()
    }

    /// Calls `body` with the records as Avahi's string list (freed after).
    private func withTXT(_ record: HostAnnouncementRecord, _ body: (UnsafeMutablePointer<AvahiStringList>?) -> Int32) -> Int32 {
        let functions = connection.library.functions
        var list: UnsafeMutablePointer<AvahiStringList>?
        // Avahi keeps the list in reverse (adding prepends) and reverses it again to send it: in order on the wire.
        for entry in record.txtEntries {
            list = entry.withUnsafeBufferPointer { functions.avahi_string_list_add_arbitrary(list, $0.baseAddress, $0.count) }
        }
        defer { functions.avahi_string_list_free(list) }
        return body(list)
    }
}
