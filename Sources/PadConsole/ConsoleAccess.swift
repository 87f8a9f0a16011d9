/// Who may use the console, decided per request from its method, path and headers (no I/O, so it is tested directly).
///
/// - The page itself (`/`, its script and style sheet) holds no host data and is given to anyone: a shell whose script
///   takes the token from the address's fragment (`http://127.0.0.1:48101/#token=...`, which browsers never send to a
///   server nor put in a Referer), keeps it in the tab's `sessionStorage` (kept per origin, so per port) and sends it
///   in the `X-Padbridge-Token` header with every request for data or a change. No cookie is ever set or read: a
///   cookie is not kept per port, so a browser would send it to any other program listening on loopback.
/// - A state-changing request (POST: open or close the pairing window, revoke a client, a live-view ticket) also needs
///   to come from the console's own page: its `Origin`, when it has one, must be the console's (`http://` and the
///   request's `Host`). Without `Origin` (a script) the header alone does; no other site's page can set the header
///   without a CORS preflight, which the console never answers.
/// - The live view's WebSocket (a browser cannot give it a header) needs a single-use, short-lived ticket
///   (`ConsoleTickets`) that the page got with its token, and, with an `Origin`, the console's own.
public struct ConsoleAccess: Sendable {
    public enum Decision: Sendable, Equatable {
        case allowed
        case refused(String)
    }

    public let token: String

    public init(token: String) {
        self.token = token
    }

    public static let tokenHeader = "X-Padbridge-Token"

    /// What anyone may fetch: the page's shell, its script, style sheet and icon, none with any host data.
    public static let openPaths: Set<String> = ["/", "/console.js", "/console.css", "/favicon.ico"]

    static let whereTheAddressComes =
        "open the address `padbridge console` printed (it ends in #token=...), or the one `padbridge console --print-url` prints"

    /// `method`: `GET`, `POST`, ...; `path` without its query; `headers` by lower-cased name.
    public func decide(method: String, path: String, headers: [String: String]) -> Decision {
        if (method == "GET" || method == "HEAD") && Self.openPaths.contains(path) { return .allowed }
        guard let presented = headers[Self.tokenHeader.lowercased()] else {
            let cookieNote = headers["cookie"]?.contains("padbridge-console") == true
                ? " (the console takes no cookie, only the header)" : ""
            return .refused("no token: the console's data needs the \(Self.tokenHeader) header\(cookieNote), which its page "
                + "sends once opened; \(Self.whereTheAddressComes)")
        }
        guard Self.equalInConstantTime(presented, token) else {
            return .refused("wrong token: \(Self.whereTheAddressComes); a new token is made when the console-token file "
                + "is deleted")
        }
        if method != "GET" && method != "HEAD" {
            guard let origin = headers["origin"] else { return .allowed }
            guard isOwn(origin: origin, headers: headers) else {
                return .refused("refused: a change must come from the console's own page (Origin \(origin))")
            }
        }
        return .allowed
    }

    /// A live-view WebSocket upgrade: with an `Origin`, it must be the console's own; then `redeemTicket` (called only
    /// when the origin passes, since it uses the ticket up) must say the ticket in its URL is good.
    public func decideLiveView(headers: [String: String], redeemTicket: () -> Bool) -> Decision {
        if let origin = headers["origin"], !isOwn(origin: origin, headers: headers) {
            return .refused("refused: the live view is only for the console's own page (Origin \(origin))")
        }
        guard redeemTicket() else {
            return .refused("no ticket, or a used or expired one: the live view opens with a ticket its page gets with "
                + "the token (POST /events/ticket); \(Self.whereTheAddressComes)")
        }
        return .allowed
    }

    private func isOwn(origin: String, headers: [String: String]) -> Bool {
        headers["host"].map { "http://" + $0 } == origin
    }

    /// Compares without stopping at the first difference (the time taken says nothing about the token).
    static func equalInConstantTime(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
