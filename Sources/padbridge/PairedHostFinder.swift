import Logging
import PadCore
import PadDNSSD
import PadLinux
import PadNet
import PadNetLinux

/// `connect`'s search for a paired host that no longer answers where it was (a DHCP lease that changed): while the
/// client has no session, it browses the LAN for announcements carrying the pinned key's fingerprint and, once the
/// address tried has had its time (`HostAddressTrials`), points the client at theirs, one after the other. The
/// announcement only *selects* where to try: the Noise handshake with the pinned key is the only thing that
/// authenticates, so an announcement by anyone else gets a handshake it cannot answer. Once a session comes from
/// a new address, paired-hosts is rewritten (one rename) to hold it, and the search stops: nothing of it runs
/// while the link carries frames. An announcement under the paired host's name with another key is never tried,
/// and is reported once, as ssh reports a changed host key. Loop-confined.
final class PairedHostFinder {
    static let trialMicroseconds: UInt64 = 1_500_000

    private let client: ForwardingClient
    private let store: TrustStore
    private let loop: DeviceEventLoop
    private let logger: Logger
    private(set) var paired: PairedHost
    private let socketIsIPv6: Bool
    private var trials: HostAddressTrials<SocketAddress>
    /// What each address was announced as ("192.0.2.3:48100"), for paired-hosts: the first address and those of
    /// the hosts announcing the key now (bounded by `PairedHostSightings`).
    private var endpoints: [SocketAddress: String]
    private let first: (address: SocketAddress, text: String)
    private var sightings: PairedHostSightings
    private var browser: AnnouncedHostBrowser?
    private var timer: LoopTimer?
    private var reportedUnavailable = false
    private var searching = false
    /// When the first address's trial ends (a DNS-SD problem is said then, if the host has not answered).
    private var firstTrialEnds: UInt64 = 0

    /// `first`: where the client sends its first handshake, as text (`connect` resolved it to `client.hostAddress`).
    init(
        paired: PairedHost, first: String, client: ForwardingClient, store: TrustStore, loop: DeviceEventLoop,
        logger: Logger
    ) throws {
        self.paired = paired
        self.client = client
        self.store = store
        self.loop = loop
        self.logger = logger
        socketIsIPv6 = client.hostAddress.isIPv6
        trials = HostAddressTrials(
            stored: client.hostAddress, atMicroseconds: MonotonicInstant.now().microseconds,
            trialMicroseconds: Self.trialMicroseconds)
        endpoints = [client.hostAddress: first]
        self.first = (client.hostAddress, first)
        sightings = PairedHostSightings(fingerprint: paired.key.keyFingerprint, pairedName: paired.name)
        timer = loop.makeTimer { [weak self] in self?.trialOver() }
        startSearching()
    }

    /// The client connected: if at an address other than the paired one, paired-hosts now holds it. The search stops.
    func connected() {
        stopSearching()
        let address = client.hostAddress
        guard let text = endpoints[address],
            let canonical = try? LinkHostAddress(text, defaultPort: LinkCommandDefaults.port).canonical,
            canonical != paired.address
        else { return }
        let moved = PairedHost(address: canonical, key: paired.key, name: paired.name)
        do {
            try store.remember(moved, replacing: paired)
            StatusOutput.say(
                .hostFound,
                "\"\(paired.name)\" (host key \(paired.key.fingerprint)) answered at \(canonical), where the "
                    + "LAN announces its key; \(store.pairedHostsPath) now holds that address (was \(paired.address))",
                ["host": .string(paired.name), "address": .string(canonical), "previous": .string(paired.address)])
            paired = moved
        } catch {
            StatusOutput.say(
                .hostNotRemembered, "\"\(paired.name)\" answered at \(canonical), but paired-hosts could not be updated: \(error)",
                ["host": .string(paired.name), "address": .string(canonical)])
        }
    }

    /// The link was lost: the search starts again from where the host was last.
    func linkLost() {
        trials = HostAddressTrials(
            stored: client.hostAddress, atMicroseconds: MonotonicInstant.now().microseconds,
            trialMicroseconds: Self.trialMicroseconds)
        startSearching()
    }

    func close() {
        stopSearching()
        timer?.close()
        timer = nil
    }

    private func startSearching() {
        guard !searching else { return }
        searching = true
        sightings.forgetHosts()
        firstTrialEnds = MonotonicInstant.now().microseconds + Self.trialMicroseconds
        rearm()
        do {
            browser = try AnnouncedHostBrowser(loop: loop, logger: logger) { [weak self] event in
                switch event {
                case let .changed(change): self?.announcementsChanged(change)
                case .settled: break
                case let .unavailable(problem): self?.unavailable(problem)
                }
            }
        } catch {
            unavailable(error)
        }
    }

    private func stopSearching() {
        searching = false
        browser?.close()
        browser = nil
        timer?.cancel()
    }

    private func unavailable(_ problem: DNSSDUnavailable) {
        browser?.close()
        browser = nil
        logger.debug("not looking for \(paired.name) on the LAN: \(problem)")
        pendingUnavailable = problem
    }

    /// Said only if the stored address does not answer in its time.
    private var pendingUnavailable: DNSSDUnavailable?

    /// One announcement changed: only it is looked at.
    private func announcementsChanged(_ change: AnnouncedHostTable.Change) {
        guard searching else { return }
        let outcome = sightings.apply(change)
        if let impostor = outcome.impostor {
            StatusOutput.say(
                .keyDiffers, HostArgument.keyDiffers(impostor, paired: paired, store: store), ["host": .string(paired.name)])
        }
        guard outcome.carryingChanged else { return }
        var candidates: [SocketAddress] = []
        endpoints = [first.address: first.text]
        for host in sightings.carrying {
            for address in host.addresses where (address.family == .ipv6) == socketIsIPv6 {
                let text = address.endpoint(port: host.port)
                guard let resolved = try? SocketAddress.resolve(text, defaultPort: host.port).first else { continue }
                endpoints[resolved] = text
                if !candidates.contains(resolved) { candidates.append(resolved) }
            }
        }
        if let next = trials.announced(candidates, atMicroseconds: MonotonicInstant.now().microseconds) { tryAt(next) }
        rearm()
    }

    private func trialOver() {
        let now = MonotonicInstant.now().microseconds
        guard searching else { return }
        if let problem = pendingUnavailable, !reportedUnavailable, now >= firstTrialEnds {
            reportedUnavailable = true
            StatusOutput.say(
                .cannotLookForHost, "cannot look for \"\(paired.name)\" on the LAN: \(problem)", ["host": .string(paired.name)])
        }
        if let next = trials.next(atMicroseconds: now) { tryAt(next) }
        rearm()
    }

    private func tryAt(_ address: SocketAddress) {
        guard client.retarget(to: address) else { return }
        StatusOutput.say(
            .tryingHost,
            "trying \"\(paired.name)\" at \(endpoints[address] ?? address.description)"
                + (address == trials.stored ? " (where it was)" : ", where the LAN announces its key"),
            ["host": .string(paired.name), "address": .string(endpoints[address] ?? address.description)])
    }

    private func rearm() {
        guard searching else { return }
        let now = MonotonicInstant.now().microseconds
        var wake = trials.deadlineMicroseconds
        if !reportedUnavailable, firstTrialEnds > now { wake = min(wake ?? firstTrialEnds, firstTrialEnds) }
        if let wake {
            timer?.schedule(at: MonotonicInstant(microseconds: max(wake, now + 1)))
        } else {
            timer?.cancel()
        }
    }
}
