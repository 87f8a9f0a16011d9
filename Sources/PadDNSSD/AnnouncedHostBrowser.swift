internal import CAvahiLoader
import Glibc
public import Logging
public import PadCore
public import PadLinux

/// Browses the LAN for padbridge hosts (`_padbridge._udp` through avahi-daemon) and resolves each one it sees,
/// keeping `table` current: hosts as they come, change (a pairing window opening, a new address) and go. Names and
/// TXT records are unauthenticated input, read by PadCore's total decoders: a name that cannot be shown is left
/// out, unreadable records are listed with why. Loop-confined.
public final class AnnouncedHostBrowser {
    public enum Event: Sendable, Equatable {
        case changed(AnnouncedHostTable.Change)
        /// Every host announced now has been seen and resolved (or failed to): a listing can be printed.
        case settled
        /// Browsing stopped, and why (the daemon went away).
        case unavailable(DNSSDUnavailable)
    }

    public private(set) var table = AnnouncedHostTable()
    private let connection: DNSSDConnection
    private let logger: Logger
    private let onEvent: (Event) -> Void
    private var browser: OpaquePointer?
    /// One resolver per instance seen; those in `unanswered` have not answered yet.
    private var resolvers: [AnnouncedHostTable.Instance: OpaquePointer] = [:]
    private var unanswered: Set<AnnouncedHostTable.Instance> = []
    private var allForNow = false
    private var settled = false

    /// Starts browsing. Throws when Avahi's client library is missing or avahi-daemon is not running.
    public init(loop: DeviceEventLoop, logger: Logger, onEvent: @escaping (Event) -> Void) throws(DNSSDUnavailable) {
        self.logger = logger
        self.onEvent = onEvent
        connection = try DNSSDConnection(loop: loop, waitForDaemon: false, logger: logger)
        connection.onState = { [unowned self] state in
            guard case let .failed(problem) = state else { return }
            self.freeAll()
            self.onEvent(.unavailable(problem))
        }
        guard let client = connection.client else {
            throw DNSSDUnavailable(code: .daemonNotRunning, reason: "no client")
        }
        browser = connection.library.functions.avahi_service_browser_new(
            client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), HostAnnouncementRecord.serviceType, nil,
            AvahiLookupFlags(rawValue: 0),
            { _, interface, proto, event, name, _, domain, _, userdata in
                guard let userdata else { return }
                Unmanaged<AnnouncedHostBrowser>.fromOpaque(userdata).takeUnretainedValue()
                    .browsed(interface, proto, event, name, domain)
            }, Unmanaged.passUnretained(self).toOpaque())
        if browser == nil {
            let problem = connection.unavailable(connection.library.functions.avahi_client_errno(client))
            connection.close()
            throw problem
        }
    }

    /// Whether every host announced so far has been resolved (or failed to).
    public var isSettled: Bool { settled }

    /// Stops browsing and disconnects. Idempotent.
    public func close() {
        freeAll()
        connection.close()
    }

    deinit { close() }

    private func freeAll() {
        let functions = connection.library.functions
        for resolver in resolvers.values { _ = functions.avahi_service_resolver_free(resolver) }
        resolvers.removeAll()
        unanswered.removeAll()
        if let browser { _ = functions.avahi_service_browser_free(browser) }
        browser = nil
    }

    private func instance(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ name: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) -> AnnouncedHostTable.Instance? {
        guard let name else { return nil }
        let bytes = Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
        let decoded: String
        do {
            decoded = try AnnouncedServiceName.decode(bytes)
        } catch {
            logger.debug("ignoring an announcement: \(error)")
            return nil
        }
        let domainText = domain.map { String(cString: $0) } ?? "local"
        return AnnouncedHostTable.Instance(
            interfaceIndex: interface, overIPv6: proto == AvahiProtocol(AVAHI_PROTO_INET6), name: decoded,
            domain: String(String.UnicodeScalarView(domainText.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })))
    }

    private func browsed(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent, _ name: UnsafePointer<CChar>?,
        _ domain: UnsafePointer<CChar>?
    ) {
        let functions = connection.library.functions
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let found = instance(interface, proto, name, domain), resolvers[found] == nil,
                let client = connection.client
            else { return }
            let resolver = functions.avahi_service_resolver_new(
                client, interface, proto, name, HostAnnouncementRecord.serviceType, domain, proto,
                AvahiLookupFlags(rawValue: 0),
                { _, interface, proto, event, name, _, domain, _, address, port, txt, _, userdata in
                    guard let userdata else { return }
                    Unmanaged<AnnouncedHostBrowser>.fromOpaque(userdata).takeUnretainedValue()
                        .resolved(interface, proto, event, name, domain, address, port, txt)
                }, Unmanaged.passUnretained(self).toOpaque())
            guard let resolver else {
                logger.debug("cannot resolve \(found.name): \(connection.library.describe(functions.avahi_client_errno(client)))")
                return
            }
            resolvers[found] = resolver
            unanswered.insert(found)
        case AVAHI_BROWSER_REMOVE:
            guard let gone = instance(interface, proto, name, domain) else { return }
            if let resolver = resolvers.removeValue(forKey: gone) { _ = functions.avahi_service_resolver_free(resolver) }
            unanswered.remove(gone)
            if let change = table.removed(gone) { onEvent(.changed(change)) }
        case AVAHI_BROWSER_ALL_FOR_NOW:
            allForNow = true
        case AVAHI_BROWSER_FAILURE:
            let problem = connection.unavailable(connection.client.map { functions.avahi_client_errno($0) } ?? 0)
            freeAll()
            onEvent(.unavailable(problem))
            return
        default:
            break
        }
        checkSettled()
    }

    private func resolved(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiResolverEvent, _ name: UnsafePointer<CChar>?,
        _ domain: UnsafePointer<CChar>?, _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
        _ txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        guard let found = instance(interface, proto, name, domain) else { return }
        unanswered.remove(found)
        if event == AVAHI_RESOLVER_FOUND {
            let change = table.resolved(
                found, port: port, address: address.flatMap { announcedAddress($0, interface: interface) },
                txt: entries(txt))
            if let change { onEvent(.changed(change)) }
        } else {
            // Not resolved in time (a host that left meanwhile): it is not listed; its resolver keeps trying.
            logger.debug("could not resolve \(found.name) on interface \(interface)")
        }
        checkSettled()
    }

    private func checkSettled() {
        guard !settled, allForNow, unanswered.isEmpty else { return }
        settled = true
        onEvent(.settled)
    }

    /// The TXT strings in the order they were announced (Avahi's list holds them in reverse).
    private func entries(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var element = UnsafePointer(list)
        while let current = element {
            let size = CAvahi_stringListSize(current)
            result.append(Array(UnsafeBufferPointer(start: CAvahi_stringListText(current), count: size)))
            element = CAvahi_stringListNext(current)
        }
        return result.reversed()
    }

    private func announcedAddress(_ address: UnsafePointer<AvahiAddress>, interface: AvahiIfIndex) -> AnnouncedAddress? {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = CAvahi_addressBytes(address, &bytes)
        guard count == 4 || count == 16 else { return nil }
        var text = [CChar](repeating: 0, count: 64)
        guard connection.library.functions.avahi_address_snprint(&text, text.count, address) != nil else { return nil }
        var interfaceName = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        let named = interface >= 0 && if_indextoname(UInt32(interface), &interfaceName) != nil
        return AnnouncedAddress(
            family: count == 4 ? .ipv4 : .ipv6,
            text: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
            isLinkLocal: count == 16 && bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80,
            interface: named
                ? String(decoding: interfaceName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                : String(interface))
    }
}
