import PadNet
import PadNetLinux

/// One HTTP request as the console reads it (the server's types stay in `ConsoleHTTPServer`).
public struct ConsoleRequest: Sendable {
    public var method: String
    /// The path without its query.
    public var path: String
    /// The query's fields, percent-decoded.
    public var query: [String: String]
    /// Header values by lower-cased name (the last of a repeated header).
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, target: String, headers: [String: String], body: [UInt8] = []) {
        self.method = method.uppercased()
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = String(parts.first ?? "/")
        query = parts.count > 1 ? ConsoleForm.fields(parts[1]) : [:]
        self.headers = headers
        self.body = body
    }

    public var isWebSocketUpgrade: Bool { headers["upgrade"]?.lowercased() == "websocket" }
}

/// The console's answer to one request.
public struct ConsoleResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public static func == (left: ConsoleResponse, right: ConsoleResponse) -> Bool {
        left.status == right.status && left.body == right.body
            && left.headers.map { "\($0.name): \($0.value)" } == right.headers.map { "\($0.name): \($0.value)" }
    }

    public func header(_ name: String) -> String? {
        headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// `application/x-www-form-urlencoded` text (a query, a form's body) into its fields: total, any bytes in.
public enum ConsoleForm {
    public static func fields(_ text: some StringProtocol) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let name = decoded(parts[0]), let value = decoded(parts[1]) else { continue }
            fields[name] = value
        }
        return fields
    }

    /// `+` as a space and `%XX` as its byte; nil when an escape is broken or the bytes are not UTF-8.
    static func decoded(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// What the console answers: the page's shell, style sheet and script (to anyone: no host data in them); the host
/// fragment the page fetches; the three changes a person may make (`POST /pairing/open`, `/pairing/close`,
/// `/clients/revoke`); the live view's tickets (`POST /events/ticket`) and whether its WebSocket (`/events`) may be
/// opened, each behind `ConsoleAccess`. It holds no state of the host's: every fragment asks the serve, every change
/// is the serve's to make. No sockets here (`ConsoleHTTPServer` carries requests in and out), and no waiting: answers
/// are handed to a completion, from whichever thread the serve's answer came on.
public struct ConsoleRequestHandler: Sendable {
    let access: ConsoleAccess
    let host: any ConsoleHost
    let tickets: ConsoleTickets

    public init(access: ConsoleAccess, host: any ConsoleHost, tickets: ConsoleTickets = ConsoleTickets()) {
        self.access = access
        self.host = host
        self.tickets = tickets
    }

    /// Whether a WebSocket upgrade may go ahead (its ticket is then used up): nil when it may, else the refusal.
    public func refusal(ofUpgrade request: ConsoleRequest) -> ConsoleResponse? {
        guard request.path == "/events" else { return notFound(request) }
        let ticket = request.query["ticket"] ?? ""
        switch access.decideLiveView(headers: request.headers, redeemTicket: { tickets.redeem(ticket) }) {
        case let .refused(reason): return response(403, html: ConsolePage.refused(reason), for: request)
        case .allowed: return nil
        }
    }

    /// Answers `request`: `completion` is called once, at once for most requests, or on the thread the serve's answer
    /// came on.
    public func respond(to request: ConsoleRequest, completion: @escaping @Sendable (ConsoleResponse) -> Void) {
        if request.path == "/events" && request.isWebSocketUpgrade {
            // An upgrade that `refusal(ofUpgrade:)` turned down (its ticket, if it was good, was not used up).
            let ticket = request.query["ticket"] ?? ""
            let reason = switch access.decideLiveView(headers: request.headers, redeemTicket: { tickets.isRedeemable(ticket) }) {
            case let .refused(reason): reason
            case .allowed: "refused: not a WebSocket upgrade the console takes"
            }
            return completion(response(403, html: ConsolePage.refused(reason), for: request))
        }
        if case let .refused(reason) = access.decide(method: request.method, path: request.path, headers: request.headers) {
            return completion(response(403, html: ConsolePage.refused(reason), for: request))
        }
        switch (request.method, request.path) {
        case ("GET", "/"):
            completion(response(200, html: ConsolePage.shell, for: request))
        case ("GET", "/fragment/host"):
            status { status, problem in
                completion(response(200, html: ConsolePage.hostFragment(status: status, problem: problem), for: request))
            }
        case ("GET", "/console.css"):
            completion(response(200, body: ConsoleAssets.styleSheet, type: "text/css; charset=utf-8", for: request))
        case ("GET", "/console.js"):
            completion(response(200, body: ConsoleAssets.script, type: "text/javascript; charset=utf-8", for: request))
        case ("GET", "/favicon.ico"):
            completion(response(204, body: "", type: "image/x-icon", for: request))
        case ("GET", "/events"):
            completion(response(400, html: ConsolePage.refused("the live view is a WebSocket"), for: request))
        case ("POST", "/events/ticket"):
            completion(response(200, body: tickets.issue(), type: "text/plain; charset=utf-8", for: request))
        case ("POST", "/pairing/open"):
            change("Opening the pairing window", .openPairing, for: request, completion: completion)
        case ("POST", "/pairing/close"):
            change("Closing the pairing window", .closePairing, for: request, completion: completion)
        case ("POST", "/clients/revoke"):
            guard let client = ConsoleForm.fields(String(decoding: request.body, as: UTF8.self))["client"], !client.isEmpty else {
                return completion(response(400, html: ConsolePage.failed("Revoking", HostControlError("no client named")), for: request))
            }
            change("Revoking \(client)", .revoke(client: client), for: request, completion: completion)
        case (_, "/"), (_, "/fragment/host"), (_, "/console.css"), (_, "/console.js"), (_, "/events"), (_, "/events/ticket"),
             (_, "/pairing/open"), (_, "/pairing/close"), (_, "/clients/revoke"):
            completion(response(405, html: ConsolePage.refused("\(request.method) is not taken here"), for: request))
        default:
            completion(notFound(request))
        }
    }

    private func notFound(_ request: ConsoleRequest) -> ConsoleResponse {
        response(404, html: ConsolePage.refused("nothing at \(request.path)"), for: request)
    }

    private func status(_ completion: @escaping @Sendable (HostStatus?, String?) -> Void) {
        host.answer(.status) { answer in
            switch answer {
            case let .failure(error): completion(nil, error.description)
            case let .success(line):
                switch HostControlReply.payload(line, "status", as: HostStatus.self) {
                case let .success(status): completion(status, nil)
                case let .failure(error): completion(nil, error.description)
                }
            }
        }
    }

    /// Asks the serve to make a change: 204 (the page then fetches the host fragment again), or the serve's refusal.
    private func change(
        _ what: String, _ change: HostControlRequest, for request: ConsoleRequest,
        completion: @escaping @Sendable (ConsoleResponse) -> Void
    ) {
        host.answer(change) { [self] answer in
            switch answer.flatMap({ line in HostControlReply.parse(Substring(line)).map { _ in line } }) {
            case let .failure(error):
                completion(response(409, html: ConsolePage.failed(what, error), for: request))
            case .success:
                completion(response(204, body: "", type: "text/plain; charset=utf-8", for: request))
            }
        }
    }

    private func response(
        _ status: Int, html: String, for request: ConsoleRequest, extra: [(name: String, value: String)] = []
    ) -> ConsoleResponse {
        response(status, body: html, type: "text/html; charset=utf-8", for: request, extra: extra)
    }

    /// Every answer: never cached, never framed by another page, no referrer to other sites, and scripts, styles and
    /// connections only from the console itself. Never a cookie.
    private func response(
        _ status: Int, body: String, type: String, for request: ConsoleRequest, extra: [(name: String, value: String)] = []
    ) -> ConsoleResponse {
        let socket = request.headers["host"].map { " ws://\($0)" } ?? ""
        return ConsoleResponse(
            status: status,
            headers: [
                ("Content-Type", type),
                ("Cache-Control", "no-store"),
                ("X-Frame-Options", "DENY"),
                ("X-Content-Type-Options", "nosniff"),
                // Not no-referrer: with it browsers send `Origin: null` on the page's own POSTs.
                ("Referrer-Policy", "same-origin"),
                ("Content-Security-Policy",
                 "default-src 'self'; connect-src 'self'\(socket); frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
            ] + extra,
            body: Array(body.utf8))
    }
}
