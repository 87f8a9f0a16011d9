internal import CAvahiLoader
public import Logging
public import PadLinux

/// A connection to avahi-daemon (Avahi's client, over the D-Bus system bus), run on padbridge's event loop through
/// `AvahiLoopPoll`. What announces or browses holds one and is told its state.
///
/// With `waitForDaemon` (a host that keeps serving) it is made even when avahi-daemon is not running, waits for it,
/// and comes back by itself when the daemon restarts (Avahi's `AVAHI_CLIENT_NO_FAIL`); when the D-Bus system bus
/// itself is not there (not started yet, or restarting), which `NO_FAIL` does not cover, it tries again on a timer
/// (2 s, doubling to 30 s). Without it (`hosts`, a command that wants an answer now), a daemon that is not there is
/// an error at once.
///
/// Avahi's calls into the daemon (making a browser or a group, committing it) are D-Bus round trips that block
/// the calling thread until the daemon answers; they happen when a command starts, when a host's announcement
/// changes (a pairing window opening or closing) and when the daemon comes or goes, never per datagram. Loop-confined.
final class DNSSDConnection {
    enum State: Equatable {
        /// Waiting for avahi-daemon (`waitForDaemon`).
        case waitingForDaemon
        /// The daemon answers and has its host name: announce and browse now.
        case running
        /// The daemon is busy with its own name (a collision, registering it): announcements wait.
        case daemonBusy
        case failed(DNSSDUnavailable)
    }

    let library: AvahiLibrary
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let waitForDaemon: Bool
    private let poll: AvahiLoopPoll
    /// The client; set from Avahi's first callback, which runs inside `avahi_client_new`.
    private(set) var client: OpaquePointer?
    private(set) var state: State = .waitingForDaemon
    /// Told every state change. On `.failed` every object made with `client` must be freed before it returns.
    var onState: ((State) -> Void)?
    private var closed = false
    private var retry: LoopDeadline?
    private var retryDelayMilliseconds: UInt64 = 0

    init(loop: DeviceEventLoop, waitForDaemon: Bool, logger: Logger) throws(DNSSDUnavailable) {
        library = try AvahiLibrary.shared.get()
        self.loop = loop
        self.logger = logger
        self.waitForDaemon = waitForDaemon
        poll = AvahiLoopPoll(loop: loop, logger: logger)
        do {
            try connect()
        } catch where waitForDaemon {
            state = .failed(error)
            scheduleRetry()
        }
    }

    /// No client could be made (no system bus): tried again later, as long as this connection is wanted.
    private func scheduleRetry() {
        guard waitForDaemon, !closed else { return }
        retryDelayMilliseconds = min(max(2_000, retryDelayMilliseconds * 2), 30_000)
        logger.debug("no connection to avahi-daemon; trying again in \(retryDelayMilliseconds) ms")
        retry = loop.deadline(afterMilliseconds: retryDelayMilliseconds) { [weak self] in
            guard let self, !self.closed, case .failed = self.state else { return }
            self.retry = nil
            if let old = self.client { self.library.functions.avahi_client_free(old) }
            self.client = nil
            do throws(DNSSDUnavailable) {
                try self.connect()
                self.retryDelayMilliseconds = 0
                self.onState?(self.state)
            } catch {
                self.state = .failed(error)
                self.scheduleRetry()
            }
        }
    }

    private func connect() throws(DNSSDUnavailable) {
        var error: Int32 = 0
        let flags = waitForDaemon ? AVAHI_CLIENT_NO_FAIL : AvahiClientFlags(rawValue: 0)
        let made = library.functions.avahi_client_new(
            poll.api, flags,
            { client, state, userdata in
                guard let userdata else { return }
                Unmanaged<DNSSDConnection>.fromOpaque(userdata).takeUnretainedValue().changed(client, state)
            }, Unmanaged.passUnretained(self).toOpaque(), &error)
        guard let made else {
            client = nil
            throw unavailable(error)
        }
        client = made
        if case .failed = state { state = .waitingForDaemon }
        state = translate(library.functions.avahi_client_get_state(made))
    }

    func unavailable(_ error: Int32) -> DNSSDUnavailable {
        if error == Int32(AVAHI_ERR_NO_DAEMON) {
            return DNSSDUnavailable(code: .daemonNotRunning, reason: library.describe(error))
        }
        return DNSSDUnavailable(code: .failed, reason: library.describe(error))
    }

    private func translate(_ state: AvahiClientState) -> State {
        switch state {
        case AVAHI_CLIENT_S_RUNNING: .running
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING: .daemonBusy
        case AVAHI_CLIENT_CONNECTING: .waitingForDaemon
        default: .failed(unavailable(client.map { library.functions.avahi_client_errno($0) } ?? 0))
        }
    }

    private func changed(_ client: OpaquePointer?, _ avahiState: AvahiClientState) {
        if self.client == nil { self.client = client }
        let next: State
        if avahiState == AVAHI_CLIENT_FAILURE {
            let error = client.map { library.functions.avahi_client_errno($0) } ?? 0
            next = .failed(unavailable(error))
        } else {
            next = translate(avahiState)
        }
        guard next != state else { return }
        state = next
        onState?(next)
        guard case .failed = next, waitForDaemon, !closed else { return }
        // The daemon went away (or restarted): its objects are gone (freed by onState above); a new client waits
        // for it. Not from inside the failing client's own callback: after it returns.
        loop.deferWork { [weak self] in
            guard let self, !self.closed, case .failed = self.state else { return }
            if let old = self.client { self.library.functions.avahi_client_free(old) }
            self.client = nil
            do throws(DNSSDUnavailable) {
                try self.connect()
                self.onState?(self.state)
            } catch {
                // No system bus (restarting, or gone): the client itself cannot be made; tried again on a timer.
                self.state = .failed(error)
                self.onState?(self.state)
                self.scheduleRetry()
            }
        }
    }

    /// Disconnects from the daemon (everything announced through it is withdrawn). Free the objects made with the
    /// client first. Idempotent.
    func close() {
        closed = true
        retry?.cancel()
        retry = nil
        if let client { library.functions.avahi_client_free(client) }
        client = nil
    }

    deinit { close() }
}

/// Whether DNS-SD works here (`padbridge doctor`): Avahi's client library loads and avahi-daemon answers.
public enum DNSSDAvailability {
    /// nil when it does; else why not, with the fix. Connects to the daemon and disconnects at once.
    public static func problem(loop: DeviceEventLoop, logger: Logger) -> DNSSDUnavailable? {
        do {
            let connection = try DNSSDConnection(loop: loop, waitForDaemon: false, logger: logger)
            defer { connection.close() }
            if case let .failed(problem) = connection.state { return problem }
            return nil
        } catch {
            return error
        }
    }
}
