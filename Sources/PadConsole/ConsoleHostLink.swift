import Glibc
public import PadNet
import PadNetLinux
import PadLinux
import NIOConcurrencyHelpers

/// What the console asks of a serve: one request, one answer line. A protocol so the console's tests can stand in for
/// a serve.
public protocol ConsoleHost: Sendable {
    /// Calls `completion` once, on any thread, with the serve's answer line to `request` or why there is none. Never
    /// waits: the console's event loop calls it, and no answer waits on Swift's cooperative threads, which blocking
    /// work elsewhere in the process may hold.
    func answer(_ request: HostControlRequest, completion: @escaping @Sendable (Result<String, HostControlError>) -> Void)
}

/// A serve's control socket, as the console uses it: every request on a connection of its own, made and waited for
/// on a thread of its own (the control socket client blocks; neither the event loop nor Swift's cooperative threads
/// ever wait on it), and the serve's `status` and `live` events followed on one long-lived connection (`follow`).
public struct ControlSocketConsoleHost: ConsoleHost {
    public let path: String
    /// Words for the serve in messages ("config directory /home/u/.config/padbridge").
    public let whose: String

    public init(path: String, whose: String) {
        self.path = path
        self.whose = whose
    }

    public func answer(_ request: HostControlRequest, completion: @escaping @Sendable (Result<String, HostControlError>) -> Void) {
        let started = OffThread.start { [path, whose] in
            do throws(ControlSocketClientError) {
                var client = try ControlSocketClient(path: path, whose: whose)
                completion(.success(try client.request(request.line(id: 1))))
            } catch {
                completion(.failure(HostControlError(error.description)))
            }
        }
        if started != 0 {
            completion(.failure(HostControlError("cannot start a thread (error \(started))")))
        }
    }

    /// Follows the serve's events for as long as the process runs, on a thread of its own: each event line goes to
    /// `broadcast`; while no serve answers, the broadcast says so and the connection is tried again every second.
    public func follow(into broadcast: ConsoleBroadcast) -> Bool {
        OffThread.start { [self] in
            while true {
                broadcast.serveUnreachable(followUntilItEnds(into: broadcast))
                var nothing = pollfd()
                _ = poll(&nothing, 0, 1_000)
            }
        } == 0
    }

    /// Subscribes and passes events on until the connection ends; returns why it ended.
    private func followUntilItEnds(into broadcast: ConsoleBroadcast) -> String {
        do throws(ControlSocketClientError) {
            var client = try ControlSocketClient(path: path, whose: whose)
            let first = try client.request(HostControlRequest.subscribe([.status, .live]).line(id: 1))
            switch HostControlReply.payload(first, "status", as: HostStatus.self) {
            case let .success(status):
                broadcast.serveReached()
                broadcast.publish(HostControlReply.event(HostControlEvent.status.rawValue, status))
            case let .failure(error):
                return error.description
            }
            while true {
                if let line = try client.nextLine(timeoutMilliseconds: 5_000) { broadcast.publish(line) }
            }
        } catch {
            return error.description
        }
    }
}

/// The serve's latest event lines, and the console's live-view sockets that want them. Each new socket is first given
/// the latest line of each kind (`status`, `live`, `console`). Lines are handed to each subscriber's `deliver` as they
/// come, from the thread that publishes them (no task, no cooperative thread); a subscriber that cannot keep up drops
/// older lines itself (`LiveViewBacklog`).
public final class ConsoleBroadcast: Sendable {
    public typealias Deliver = @Sendable (String) -> Void

    private struct State {
        var latest: [String: String] = [:]
        var subscribers: [Int: Deliver] = [:]
        var nextID = 0
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Hands `deliver` the latest line of each kind, then every new line, in order, until `unsubscribe`. `deliver` is
    /// called with the broadcast's lock held: it must only hand the line on (to an event loop), never wait.
    public func subscribe(_ deliver: @escaping Deliver) -> Int {
        state.withLockedValue { state in
            for kind in state.latest.keys.sorted() { deliver(state.latest[kind]!) }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = deliver
            return id
        }
    }

    public func unsubscribe(_ id: Int) {
        _ = state.withLockedValue { $0.subscribers.removeValue(forKey: id) }
    }

    /// One event line from the serve (`{"event":"KIND",...}`).
    public func publish(_ line: String) {
        let kind = Self.kind(of: line)
        state.withLockedValue { state in
            state.latest[kind] = line
            for deliver in state.subscribers.values { deliver(line) }
        }
    }

    public var subscriberCount: Int { state.withLockedValue { $0.subscribers.count } }

    func serveReached() {
        publish(#"{"event":"console","console":{"serve":true}}"#)
    }

    func serveUnreachable(_ problem: String) {
        state.withLockedValue { $0.latest["live"] = nil }
        publish(#"{"event":"console","console":{"serve":false,"problem":"# + HostControlReply.json(problem) + "}}")
    }

    /// `KIND` of `{"event":"KIND",...`, as `HostControlReply.event` writes it.
    static func kind(of line: String) -> String {
        let prefix = #"{"event":""#
        guard line.hasPrefix(prefix) else { return "other" }
        return String(line.dropFirst(prefix.count).prefix { $0 != "\"" })
    }
}
