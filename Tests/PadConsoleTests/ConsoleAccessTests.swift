@testable import PadConsole
import NIOConcurrencyHelpers
import Testing

@Suite("ConsoleAccess")
struct ConsoleAccessTests {
    let access = ConsoleAccess(token: String(repeating: "ab", count: 32))
    let host = "127.0.0.1:48101"
    var withToken: [String: String] { ["x-padbridge-token": access.token] }

    func decide(_ headers: [String: String], method: String = "GET", target: String = "/fragment/host") -> ConsoleAccess.Decision {
        let request = ConsoleRequest(method: method, target: target, headers: headers.merging(["host": host]) { $1 })
        return access.decide(method: request.method, path: request.path, headers: request.headers)
    }

    @Test("No token, a wrong one, a prefix of it, or the token only in the old cookie or the query: refused, saying where the address comes from")
    func refusedWithoutTheToken() {
        guard case let .refused(reason) = decide([:]) else { Issue.record("no token was let in"); return }
        #expect(reason.contains("padbridge console"))
        #expect(reason.contains("#token="))
        guard case .refused = decide(["x-padbridge-token": String(repeating: "ab", count: 31) + "ac"]) else {
            Issue.record("a wrong token was let in"); return
        }
        guard case .refused = decide(["x-padbridge-token": "ab"]) else { Issue.record("a prefix of the token was let in"); return }
        // The cookie the console used to set: a browser sends it to every loopback port, so it is never taken.
        guard case let .refused(cookieReason) = decide(["cookie": "other=1; padbridge-console-48101=\(access.token)"]) else {
            Issue.record("the old cookie was taken"); return
        }
        #expect(cookieReason.contains("no cookie"))
        guard case .refused = decide(["cookie": "padbridge-console-48101=\(access.token)", "origin": "http://\(host)"], method: "POST",
                                     target: "/pairing/open")
        else { Issue.record("the old cookie was taken for a change from the console's own origin"); return }
        // A query is sent to servers and kept in histories: not a place for the token.
        guard case .refused = decide([:], target: "/fragment/host?token=\(access.token)") else {
            Issue.record("the token in the query was taken"); return
        }
    }

    @Test("The shell, its script, style sheet and icon are open (they hold no host data); everything else needs the header")
    func openPaths() {
        for path in ["/", "/console.js", "/console.css", "/favicon.ico"] {
            #expect(decide([:], target: path) == .allowed, "\(path)")
        }
        for path in ["/fragment/host", "/events/ticket", "/pairing/open", "/clients/revoke", "/nothing"] {
            guard case .refused = decide([:], target: path) else { Issue.record("\(path) was open"); continue }
        }
        guard case .refused = decide([:], method: "POST", target: "/") else { Issue.record("a POST to / was open"); return }
        #expect(decide(withToken) == .allowed)
    }

    @Test("A change needs the token in the header and the console's own origin, or no origin at all (a script)")
    func changesNeedTheSameOrigin() {
        #expect(decide(withToken.merging(["origin": "http://\(host)"]) { $1 }, method: "POST", target: "/pairing/open") == .allowed)
        guard case .refused = decide(withToken.merging(["origin": "http://evil.example"]) { $1 }, method: "POST", target: "/pairing/open")
        else { Issue.record("a cross-origin POST was taken"); return }
        guard case .refused = decide(withToken.merging(["origin": "http://127.0.0.1:48102"]) { $1 }, method: "POST", target: "/pairing/open")
        else { Issue.record("another port's page could post"); return }
        // A script with the token in the header (no browser page elsewhere can send one without a preflight).
        #expect(decide(withToken, method: "POST", target: "/clients/revoke") == .allowed)
        guard case .refused = decide(["x-padbridge-token": "nope"], method: "POST", target: "/clients/revoke") else {
            Issue.record("a wrong header token was taken"); return
        }
    }

    @Test("The live view: another origin is refused before its ticket is looked at; a missing or spent ticket is refused")
    func liveView() {
        let evil = ["host": host, "origin": "http://evil.example"]
        guard case .refused = access.decideLiveView(headers: evil, redeemTicket: {
            Issue.record("the ticket was used up for another origin"); return true
        }) else { Issue.record("a cross-origin WebSocket was taken"); return }
        guard case let .refused(reason) = access.decideLiveView(headers: ["host": host, "origin": "http://\(host)"], redeemTicket: { false })
        else { Issue.record("a WebSocket without a good ticket was taken"); return }
        #expect(reason.contains("ticket"))
        #expect(access.decideLiveView(headers: ["host": host, "origin": "http://\(host)"], redeemTicket: { true }) == .allowed)
        #expect(access.decideLiveView(headers: ["host": host], redeemTicket: { true }) == .allowed)
    }

    @Test("Tokens are compared whole")
    func comparison() {
        #expect(!ConsoleAccess.equalInConstantTime("abc", "abcd"))
        #expect(!ConsoleAccess.equalInConstantTime("abc", "abd"))
        #expect(ConsoleAccess.equalInConstantTime("abc", "abc"))
    }
}

@Suite("Console tickets")
struct ConsoleTicketsTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        let instant = NIOLockedValueBox(ContinuousClock.now)
        func advance(by duration: Duration) { instant.withLockedValue { $0 += duration } }
        func now() -> ContinuousClock.Instant { instant.withLockedValue { $0 } }
    }

    @Test("A ticket opens one socket, once, within its lifetime; unknown ones never")
    func singleUseAndShortLived() {
        let clock = ManualClock()
        let tickets = ConsoleTickets(lifetime: .seconds(30), now: { clock.now() })
        let ticket = tickets.issue()
        #expect(ticket.count == 64 && ticket.allSatisfy(\.isHexDigit))
        #expect(tickets.issue() != ticket)
        #expect(tickets.isRedeemable(ticket))
        #expect(tickets.isRedeemable(ticket), "looking does not use it up")
        #expect(tickets.redeem(ticket))
        #expect(!tickets.redeem(ticket), "a ticket was taken twice")
        #expect(!tickets.isRedeemable(ticket))
        #expect(!tickets.redeem(""))
        #expect(!tickets.redeem(String(repeating: "0", count: 64)))

        let late = tickets.issue()
        clock.advance(by: .seconds(29))
        #expect(tickets.isRedeemable(late))
        clock.advance(by: .seconds(1))
        #expect(!tickets.redeem(late), "an expired ticket was taken")
    }

    @Test("At most 64 tickets are kept, the oldest dropped first")
    func capped() {
        let tickets = ConsoleTickets()
        let issued = (0..<100).map { _ in tickets.issue() }
        #expect(tickets.outstandingCount == ConsoleTickets.capacity)
        #expect(!tickets.isRedeemable(issued[0]))
        #expect(!tickets.isRedeemable(issued[100 - ConsoleTickets.capacity - 1]))
        #expect(tickets.redeem(issued[100 - ConsoleTickets.capacity]))
        #expect(tickets.redeem(issued[99]))
    }
}
