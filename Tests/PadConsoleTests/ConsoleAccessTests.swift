@testable import PadConsole
import Testing

@Suite("ConsoleAccess")
struct ConsoleAccessTests {
    let access = ConsoleAccess(token: String(repeating: "ab", count: 32))
    let host = "127.0.0.1:48101"
    var cookie: String { "other=1; padbridge-console-48101=\(access.token)" }

    func decide(_ headers: [String: String], method: String = "GET", query: String? = nil, upgrade: Bool = false)
        -> ConsoleAccess.Decision
    {
        access.decide(method: method, tokenInQuery: query, headers: headers.merging(["host": host]) { $1 }, isWebSocketUpgrade: upgrade)
    }

    @Test("No token, a wrong one, or the cookie of another port's console: refused, saying where the address comes from")
    func refusedWithoutTheToken() {
        guard case let .refused(reason) = decide([:]) else { Issue.record("no token was let in"); return }
        #expect(reason.contains("padbridge console"))
        guard case .refused = decide([:], query: String(repeating: "ab", count: 31) + "ac") else {
            Issue.record("a wrong token was let in"); return
        }
        guard case .refused = decide([:], query: "ab") else { Issue.record("a prefix of the token was let in"); return }
        guard case .refused = decide(["cookie": "padbridge-console-48102=\(access.token)"]) else {
            Issue.record("another port's cookie was taken"); return
        }
    }

    @Test("The token in the URL sets the cookie; the cookie then lets pages and the live view in")
    func tokenThenCookie() {
        #expect(decide([:], query: access.token) == .allowedSettingCookie)
        #expect(access.setCookie(host: host).hasPrefix("padbridge-console-48101=\(access.token);"))
        #expect(access.setCookie(host: host).contains("HttpOnly"))
        #expect(access.setCookie(host: host).contains("SameSite=Strict"))
        #expect(decide(["cookie": cookie]) == .allowed)
        #expect(decide(["cookie": cookie, "origin": "http://\(host)"], upgrade: true) == .allowed)
    }

    @Test("A change needs the console's own origin: cross-origin or origin-less POSTs with the cookie are refused")
    func changesNeedTheSameOrigin() {
        #expect(decide(["cookie": cookie, "origin": "http://\(host)"], method: "POST") == .allowed)
        guard case .refused = decide(["cookie": cookie, "origin": "http://evil.example"], method: "POST") else {
            Issue.record("a cross-origin POST was taken"); return
        }
        guard case .refused = decide(["cookie": cookie, "origin": "http://127.0.0.1:48102"], method: "POST") else {
            Issue.record("another port's page could post"); return
        }
        guard case .refused = decide(["cookie": cookie], method: "POST") else { Issue.record("an origin-less POST with the cookie was taken"); return }
        guard case .refused = decide(["origin": "http://evil.example"], method: "POST", query: access.token) else {
            Issue.record("a cross-origin POST with the token in its URL was taken"); return
        }
        // A script with the token in the header (no browser page elsewhere can send one without a preflight).
        #expect(decide(["x-padbridge-token": access.token], method: "POST") == .allowed)
        guard case .refused = decide(["x-padbridge-token": "nope"], method: "POST") else { Issue.record("a wrong header token was taken"); return }
    }

    @Test("The live view refuses another site's page even with the cookie")
    func liveViewOrigin() {
        guard case .refused = decide(["cookie": cookie, "origin": "http://evil.example"], upgrade: true) else {
            Issue.record("a cross-origin WebSocket was taken"); return
        }
    }

    @Test("Cookie names follow the Host header's port")
    func cookieNames() {
        #expect(ConsoleAccess.cookieName(host: "127.0.0.1:9") == "padbridge-console-9")
        #expect(ConsoleAccess.cookieName(host: "[::1]:48101") == "padbridge-console-48101")
        #expect(ConsoleAccess.cookieName(host: "[::1]") == "padbridge-console")
        #expect(ConsoleAccess.cookieName(host: nil) == "padbridge-console")
        #expect(!ConsoleAccess.equalInConstantTime("abc", "abcd"))
        #expect(ConsoleAccess.equalInConstantTime("abc", "abc"))
    }
}
