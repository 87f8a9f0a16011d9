/// Who may use the console, decided per request from its method, target and headers (no I/O, so it is tested
/// directly).
///
/// - Every request and every WebSocket upgrade needs the token: in the URL's `token` query (the address `padbridge
///   console` prints, as Jupyter's), in the cookie a first visit with it sets (`HttpOnly`, `SameSite=Strict`), or in an
///   `X-Padbridge-Token` header (scripts).
/// - A state-changing request (POST: open or close the pairing window, revoke a client) also needs to come from the
///   console's own page: its `Origin` must be the console's (`http://` and the request's `Host`). Without `Origin` it
///   is taken only with the token in the header, which no other site's page can set without a CORS preflight, which
///   the console never answers. So a page elsewhere in the same browser can neither pair nor revoke.
/// - A WebSocket upgrade with an `Origin` needs it to be the console's too (browsers send cookies with cross-site
///   upgrades).
public struct ConsoleAccess: Sendable {
    public enum Decision: Sendable, Equatable {
        case allowed
        /// The token came in the URL: set the cookie and send the browser to the same path without it.
        case allowedSettingCookie
        case refused(String)
    }

    public let token: String

    public init(token: String) {
        self.token = token
    }

    /// The cookie's name for the console at `host` (the `Host` header): one per port, since browsers keep cookies per
    /// host name, not per port, and two consoles (two serves) may run side by side.
    public static func cookieName(host: String?) -> String {
        guard let host, let colon = host.lastIndex(of: ":"), !host[colon...].contains("]") else { return "padbridge-console" }
        let port = host[host.index(after: colon)...]
        return port.allSatisfy(\.isNumber) && !port.isEmpty ? "padbridge-console-\(port)" : "padbridge-console"
    }

    public static let tokenHeader = "X-Padbridge-Token"

    /// `method`: `GET`, `POST`, ...; `query`: the token query value, if any; `headers` by lower-cased name.
    public func decide(method: String, tokenInQuery: String?, headers: [String: String], isWebSocketUpgrade: Bool) -> Decision {
        let fromHeader = headers[Self.tokenHeader.lowercased()]
        let fromCookie = cookie(named: Self.cookieName(host: headers["host"]), in: headers["cookie"])
        let presented: (token: String, place: String)? =
            if let fromHeader { (fromHeader, "header") }
            else if let tokenInQuery { (tokenInQuery, "query") }
            else if let fromCookie { (fromCookie, "cookie") }
            else { nil }
        guard let presented else {
            return .refused("no token: open the address `padbridge console` printed (it ends in ?token=...)")
        }
        guard Self.equalInConstantTime(presented.token, token) else {
            return .refused("wrong token: open the address `padbridge console` printed; a new token is made when the "
                + "console-token file is deleted")
        }
        let origin = headers["origin"]
        let ownOrigin = headers["host"].map { "http://" + $0 }
        let sameOrigin = origin != nil && origin == ownOrigin
        if method != "GET" && method != "HEAD" {
            if origin == nil && presented.place == "header" { return .allowed }
            guard sameOrigin else {
                return .refused("refused: a change must come from the console's own page (Origin \(origin ?? "missing"))")
            }
            return .allowed
        }
        if isWebSocketUpgrade, origin != nil, !sameOrigin {
            return .refused("refused: the live view is only for the console's own page (Origin \(origin ?? ""))")
        }
        return presented.place == "query" && !isWebSocketUpgrade ? .allowedSettingCookie : .allowed
    }

    /// The `Set-Cookie` value that keeps the token for the console's own pages.
    public func setCookie(host: String?) -> String {
        "\(Self.cookieName(host: host))=\(token); Path=/; HttpOnly; SameSite=Strict"
    }

    private func cookie(named cookieName: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            if pair[0].drop(while: { $0 == " " }) == cookieName[...] { return String(pair[1]) }
        }
        return nil
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
