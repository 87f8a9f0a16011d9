import Foundation
import Glibc
@testable import PadConsole
import PadNet
import PadNetLinux
import NIOConcurrencyHelpers
import Synchronization
import Testing

/// A serve stand-in: answers from fixed lines and records what it was asked.
final class RecordingHost: ConsoleHost {
    let asked = NIOLockedValueBox<[HostControlRequest]>([])
    let refuseRevoke: Bool

    init(refuseRevoke: Bool = false) { self.refuseRevoke = refuseRevoke }

    static let status = HostStatus(
        name: "den <pc>", key: "SHA256:host", listening: "127.0.0.1:48100", port: 48100, announcement: "not announced",
        uptimeSeconds: 75, pairing: PairingWindowStatus(open: false), devices: [], clients: [])

    func answer(_ request: HostControlRequest, completion: @escaping @Sendable (Result<String, HostControlError>) -> Void) {
        asked.withLockedValue { $0.append(request) }
        switch request {
        case .status: completion(.success(HostControlReply.success(id: 1, "status", Self.status)))
        case .openPairing: completion(.success(HostControlReply.success(id: 1, "pairing", PairingWindowStatus(open: true, code: "ABCDE"))))
        case .revoke where refuseRevoke:
            completion(.success(HostControlReply.failure(id: 1, HostControlError("no paired client is called \"x\""))))
        default: completion(.success(HostControlReply.success(id: 1, "ok", true)))
        }
    }
}

/// The console's HTTP side on a real loopback socket, with a stand-in serve. Clients run on threads of their own
/// (blocking sockets), never on the cooperative pool; each waits up to 30 s for an answer (generous for a busy machine,
/// where a whole answer takes milliseconds; a console that hangs still fails).
@Suite("Console server")
struct ConsoleServerTests {
    static let token = String(repeating: "5a", count: 32)
    static let receiveTimeoutSeconds = 30

    /// Runs a console on 127.0.0.1 (a free port) for `body`.
    static func withConsole(
        host: RecordingHost = RecordingHost(), broadcast: ConsoleBroadcast = ConsoleBroadcast(),
        limits: ConsoleConnectionLimits = ConsoleConnectionLimits(),
        _ body: (UInt16) async throws -> Void
    ) async throws {
        let handler = ConsoleRequestHandler(access: ConsoleAccess(token: token), host: host)
        let server = try ConsoleHTTPServer(address: "127.0.0.1", port: 0, handler: handler, broadcast: broadcast, limits: limits)
        defer { server.close() }
        let port = try #require(server.port)
        try await body(UInt16(port))
    }

    /// Sends `request` (CRLF line ends are added) and reads until the server closes or `until` is in the answer.
    static func exchange(port: UInt16, _ request: String, until marker: String? = nil) async -> String {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: exchangeBlocking(port: port, request, until: marker)) }.start()
        }
    }

    /// `exchange` on the calling thread.
    static func exchangeBlocking(port: UInt16, _ request: String, until marker: String? = nil) -> String {
        guard let fd = try? LoopbackSocket.connected(to: port, receiveTimeoutSeconds: receiveTimeoutSeconds) else {
            return "connect failed"
        }
        defer { close(fd) }
        LoopbackSocket.send(fd, request)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer += buffer.prefix(count)
            let text = String(decoding: answer, as: UTF8.self)
            if let marker, text.contains(marker) { break }
            if marker == nil, let end = text.range(of: "\r\n\r\n"), let length = Self.contentLength(text),
               answer.count - text[..<end.upperBound].utf8.count >= length { break }
        }
        return String(decoding: answer, as: UTF8.self)
    }

    static func contentLength(_ head: String) -> Int? {
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    static func get(_ path: String, port: UInt16, _ headers: String = "", connection: String = "close") -> String {
        "GET \(path) HTTP/1.1\nHost: 127.0.0.1:\(port)\n\(headers)Connection: \(connection)\n\n"
    }

    static let tokenHeader = "X-Padbridge-Token: \(token)\n"
    /// The cookie the console used to set; a browser sends it to every port on 127.0.0.1.
    static func oldCookie(_ port: UInt16) -> String { "Cookie: padbridge-console-\(port)=\(token)\n" }

    static func post(_ path: String, port: UInt16, _ headers: String, body: String = "") -> String {
        "POST \(path) HTTP/1.1\nHost: 127.0.0.1:\(port)\n\(headers)"
            + "Content-Type: application/x-www-form-urlencoded\nContent-Length: \(body.utf8.count)\nConnection: close\n\n\(body)"
    }

    static func body(_ answer: String) -> String {
        answer.range(of: "\r\n\r\n").map { String(answer[$0.upperBound...]) } ?? ""
    }

    @Test("The shell is open and holds no host data; the host's data needs the token in the header, never a cookie or the query")
    func pagesNeedTheToken() async throws {
        let host = RecordingHost()
        try await Self.withConsole(host: host) { port in
            var answers: [String] = []
            let shell = await Self.exchange(port: port, Self.get("/", port: port))
            answers.append(shell)
            #expect(shell.hasPrefix("HTTP/1.1 200"))
            #expect(!shell.contains("den &lt;pc&gt;"), "the shell showed the host's name")
            #expect(shell.contains(#"<div id="host">"#))
            #expect(shell.contains("X-Frame-Options: DENY"))
            #expect(shell.contains("Content-Security-Policy: default-src 'self'"))
            #expect(host.asked.withLockedValue { $0.isEmpty }, "the shell asked the serve")

            let bare = await Self.exchange(port: port, Self.get("/fragment/host", port: port))
            #expect(bare.hasPrefix("HTTP/1.1 403"))
            #expect(bare.contains("no token"))
            let wrong = await Self.exchange(port: port, Self.get("/fragment/host", port: port, "X-Padbridge-Token: \(String(repeating: "00", count: 32))\n"))
            #expect(wrong.hasPrefix("HTTP/1.1 403"))
            let cookieOnly = await Self.exchange(port: port, Self.get("/fragment/host", port: port, Self.oldCookie(port)))
            #expect(cookieOnly.hasPrefix("HTTP/1.1 403"), "a request with only the old cookie was let in")
            let queryOnly = await Self.exchange(port: port, Self.get("/fragment/host?token=\(Self.token)", port: port))
            #expect(queryOnly.hasPrefix("HTTP/1.1 403"), "the token in the query was taken")
            answers += [bare, wrong, cookieOnly, queryOnly]
            #expect(host.asked.withLockedValue { $0.isEmpty }, "the serve was asked something for a refused request")

            let fragment = await Self.exchange(port: port, Self.get("/fragment/host", port: port, Self.tokenHeader))
            answers.append(fragment)
            #expect(fragment.hasPrefix("HTTP/1.1 200"))
            #expect(fragment.contains("den &lt;pc&gt;"), "the host's name, escaped")
            #expect(fragment.contains(#"<button id="open-pairing">"#))
            let script = await Self.exchange(port: port, Self.get("/console.js", port: port))
            answers.append(script)
            #expect(script.contains("text/javascript"))
            #expect(script.contains("new WebSocket"))
            #expect(script.contains("X-Padbridge-Token") && script.contains("sessionStorage"))
            for answer in answers {
                #expect(!answer.lowercased().contains("set-cookie"), "a cookie was set: \(answer.prefix(300))")
                #expect(!Self.body(answer).contains(Self.token), "an answer held the token")
            }
        }
    }

    @Test("A cross-origin POST, or one with only the old cookie, is refused and never reaches the serve; the page's own open pairing and revoke")
    func changesNeedTheSameOrigin() async throws {
        let host = RecordingHost()
        try await Self.withConsole(host: host) { port in
            let body = "client=SHA256%3Aab+cd"
            let own = "Origin: http://127.0.0.1:\(port)\n"
            for path in ["/pairing/open", "/pairing/close", "/clients/revoke"] {
                let crossOrigin = await Self.exchange(
                    port: port, Self.post(path, port: port, Self.tokenHeader + "Origin: http://evil.example\n", body: body))
                #expect(crossOrigin.hasPrefix("HTTP/1.1 403"), "\(path)")
                let cookieOnly = await Self.exchange(port: port, Self.post(path, port: port, Self.oldCookie(port) + own, body: body))
                #expect(cookieOnly.hasPrefix("HTTP/1.1 403"), "\(path) with the old cookie")
            }
            #expect(host.asked.withLockedValue { $0.isEmpty }, "a refused POST reached the serve")

            let opened = await Self.exchange(port: port, Self.post("/pairing/open", port: port, Self.tokenHeader + own))
            #expect(opened.hasPrefix("HTTP/1.1 204"))
            let revoked = await Self.exchange(port: port, Self.post("/clients/revoke", port: port, Self.tokenHeader + own, body: body))
            #expect(revoked.hasPrefix("HTTP/1.1 204"))
            #expect(host.asked.withLockedValue { $0 } == [.openPairing, .revoke(client: "SHA256:ab cd")])
        }
    }

    @Test("A change the serve refuses shows its words")
    func refusalShown() async throws {
        try await Self.withConsole(host: RecordingHost(refuseRevoke: true)) { port in
            let answer = await Self.exchange(port: port, Self.post("/clients/revoke", port: port, Self.tokenHeader, body: "client=x"))
            #expect(answer.hasPrefix("HTTP/1.1 409"))
            #expect(answer.contains("no paired client is called &quot;x&quot;"))
        }
    }

    @Test("The live view: refused without a ticket, with the old cookie, from another site, or with a spent ticket; with one, the latest event lines first")
    func liveView() async throws {
        let broadcast = ConsoleBroadcast()
        broadcast.publish(#"{"event":"status","status":{"name":"one"}}"#)
        broadcast.publish(#"{"event":"live","live":{"pads":[],"clients":[]}}"#)
        try await Self.withConsole(broadcast: broadcast) { port in
            let upgrade = "Upgrade: websocket\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\nSec-WebSocket-Version: 13\n"
            let own = "Origin: http://127.0.0.1:\(port)\n"
            let refused = await Self.exchange(port: port, Self.get("/events", port: port, upgrade + own, connection: "Upgrade"))
            #expect(refused.hasPrefix("HTTP/1.1 403"))
            let cookieOnly = await Self.exchange(port: port, Self.get("/events", port: port, upgrade + own + Self.oldCookie(port), connection: "Upgrade"))
            #expect(cookieOnly.hasPrefix("HTTP/1.1 403"))
            let tokenInQuery = await Self.exchange(port: port, Self.get("/events?token=\(Self.token)", port: port, upgrade + own, connection: "Upgrade"))
            #expect(tokenInQuery.hasPrefix("HTTP/1.1 403"))
            let ticketRefused = await Self.exchange(port: port, Self.post("/events/ticket", port: port, ""))
            #expect(ticketRefused.hasPrefix("HTTP/1.1 403"), "a ticket was given without the token")

            let issued = await Self.exchange(port: port, Self.post("/events/ticket", port: port, Self.tokenHeader + own))
            #expect(issued.hasPrefix("HTTP/1.1 200"))
            let ticket = Self.body(issued)
            #expect(ticket.count == 64)
            let crossSite = await Self.exchange(
                port: port, Self.get("/events?ticket=\(ticket)", port: port, upgrade + "Origin: http://evil.example\n", connection: "Upgrade"))
            #expect(crossSite.hasPrefix("HTTP/1.1 403"))
            let open = await Self.exchange(
                port: port, Self.get("/events?ticket=\(ticket)", port: port, upgrade + own, connection: "Upgrade"),
                until: #""name":"one""#)
            #expect(open.hasPrefix("HTTP/1.1 101"), "the ticket did not open the live view after a cross-site try")
            #expect(open.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "RFC 6455's accept value for its sample key")
            let status = open.range(of: #""name":"one""#)
            let live = open.range(of: #""pads":[]"#)
            #expect(status != nil && live != nil && live!.lowerBound < status!.lowerBound, "latest lines, by kind in order")
            let again = await Self.exchange(port: port, Self.get("/events?ticket=\(ticket)", port: port, upgrade + own, connection: "Upgrade"))
            #expect(again.hasPrefix("HTTP/1.1 403"), "a ticket opened the live view twice")
        }
    }
}

/// Blocks the calling thread until `semaphore` is signalled (a function of its own: async code may not wait on it).
func blockUntilSignalled(_ semaphore: DispatchSemaphore) { semaphore.wait() }

@Suite("Console server, its cooperative pool blocked")
struct ConsoleServerBlockedPoolTests {
    /// Other suites in the same process may block cooperative threads; the console must answer all the same. Many
    /// high-priority tasks that block are queued first, so every cooperative thread takes one and holds it (the pool
    /// never runs more than its width); then a request must still be answered. A task queued after them shows that
    /// the pool really was held: it must not have run before the answer came.
    @Test("A request is answered while every cooperative thread is blocked")
    func answersWhileThePoolIsBlocked() throws {
        let handler = ConsoleRequestHandler(access: ConsoleAccess(token: ConsoleServerTests.token), host: RecordingHost())
        let server = try ConsoleHTTPServer(address: "127.0.0.1", port: 0, handler: handler, broadcast: ConsoleBroadcast())
        defer { server.close() }
        let port = UInt16(try #require(server.port))
        let release = DispatchSemaphore(value: 0)
        let firstBlocked = DispatchSemaphore(value: 0)
        let blockers = max(64, 4 * ProcessInfo.processInfo.activeProcessorCount)
        for _ in 0..<blockers {
            Task.detached(priority: .high) {
                firstBlocked.signal()
                blockUntilSignalled(release)
            }
        }
        let controlRan = Atomic<Bool>(false)
        Task.detached(priority: .high) { controlRan.store(true, ordering: .sequentiallyConsistent) }
        blockUntilSignalled(firstBlocked)
        let answer = ConsoleServerTests.exchangeBlocking(
            port: port, ConsoleServerTests.get("/fragment/host", port: port, ConsoleServerTests.tokenHeader))
        let poolWasHeld = !controlRan.load(ordering: .sequentiallyConsistent)
        for _ in 0..<blockers { release.signal() }
        #expect(poolWasHeld, "the test's set-up did not hold the cooperative pool (more threads than \(blockers)?)")
        #expect(answer.hasPrefix("HTTP/1.1 200"), "no answer while the cooperative pool was blocked: \(answer)")
        #expect(answer.contains("den &lt;pc&gt;"))
    }
}

/// The cap on connections and the time a connection has to send its request, on real loopback sockets.
@Suite("Console connections")
struct ConsoleConnectionsTests {
    @Test("The standard limits: 256 connections, 10 s for a request")
    func standardLimits() {
        let limits = ConsoleConnectionLimits()
        #expect(limits.maximumOpen == 256)
        #expect(limits.requestTimeout == .seconds(10))
    }

    @Test("A connection that sends half a request is closed after the timeout; so is a kept-alive one after its answer")
    func idleConnectionsClosed() async throws {
        try await ConsoleServerTests.withConsole(limits: ConsoleConnectionLimits(requestTimeout: .milliseconds(300))) { port in
            let (halfSent, keptAlive) = await withCheckedContinuation { continuation in
                Thread {
                    let started = ContinuousClock.now
                    guard let half = try? LoopbackSocket.connected(to: port) else {
                        return continuation.resume(returning: ((false, Duration.zero), (false, "")))
                    }
                    defer { close(half) }
                    LoopbackSocket.send(half, "GET / HTTP/1.1\nHost: 127.0.0.1:\(port)\n")
                    // Waits for the console's close (the receive timeout, 30 s, only bounds a console that never closes).
                    let closed = LoopbackSocket.receive(half).closed
                    let halfResult = (closed, ContinuousClock.now - started)
                    guard let kept = try? LoopbackSocket.connected(to: port) else {
                        return continuation.resume(returning: (halfResult, (false, "")))
                    }
                    defer { close(kept) }
                    LoopbackSocket.send(kept, ConsoleServerTests.get("/", port: port, connection: "keep-alive"))
                    let received = LoopbackSocket.receive(kept)
                    continuation.resume(returning: (halfResult, (received.closed, received.text)))
                }.start()
            }
            #expect(halfSent.0, "the half-sent connection was not closed")
            #expect(halfSent.1 >= .milliseconds(300), "closed before its time: \(halfSent.1)")
            #expect(keptAlive.0, "the kept-alive connection was not closed after its answer")
            #expect(keptAlive.1.hasPrefix("HTTP/1.1 200") && keptAlive.1.contains("Connection: keep-alive"))
        }
    }

    @Test("Past the cap of half-sent connections, the oldest are closed and a proper request is still answered")
    func halfSentConnectionsPastTheCap() async throws {
        let cap = 32
        let opened = 80
        try await ConsoleServerTests.withConsole(limits: ConsoleConnectionLimits(maximumOpen: cap, requestTimeout: .seconds(60))) { port in
            let (answer, oldestClosed, newestOpen) = await withCheckedContinuation { continuation in
                Thread {
                    var halfSent: [Int32] = []
                    defer { halfSent.forEach { close($0) } }
                    for _ in 0..<opened {
                        guard let descriptor = try? LoopbackSocket.connected(to: port) else { break }
                        LoopbackSocket.send(descriptor, "GET /fragment/host HTTP/1.1\nHost: 127.0.0.1:\(port)\n")
                        halfSent.append(descriptor)
                    }
                    let answer = ConsoleServerTests.exchangeBlocking(
                        port: port, ConsoleServerTests.get("/fragment/host", port: port, ConsoleServerTests.tokenHeader))
                    // All but the newest cap - 1 (room was made for the proper request too) were closed to make room.
                    let closedCount = opened - (cap - 1)
                    let oldestClosed = halfSent.prefix(closedCount).allSatisfy { LoopbackSocket.receive($0).closed }
                    var stillOpen = 0
                    for descriptor in halfSent.suffix(cap - 1) {
                        var byte: UInt8 = 0
                        if recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT)) < 0 && errno == EAGAIN { stillOpen += 1 }
                    }
                    continuation.resume(returning: (answer, oldestClosed && halfSent.count == opened, stillOpen))
                }.start()
            }
            #expect(answer.hasPrefix("HTTP/1.1 200"), "the proper request was not answered: \(answer.prefix(200))")
            #expect(oldestClosed, "the oldest half-sent connections were not all closed")
            #expect(newestOpen == cap - 1, "the newest half-sent connections should have been kept")
        }
    }

    @Test("With every place taken by live views, a new connection is closed at once")
    func fullOfLiveViews() async throws {
        let cap = 3
        try await ConsoleServerTests.withConsole(limits: ConsoleConnectionLimits(maximumOpen: cap)) { port in
            let (upgraded, refused) = await withCheckedContinuation { continuation in
                Thread {
                    var views: [Int32] = []
                    defer { views.forEach { close($0) } }
                    var upgraded = 0
                    for _ in 0..<cap {
                        let issued = ConsoleServerTests.exchangeBlocking(
                            port: port, ConsoleServerTests.post("/events/ticket", port: port, ConsoleServerTests.tokenHeader))
                        guard let view = try? LoopbackSocket.connected(to: port) else { break }
                        views.append(view)
                        LoopbackSocket.send(view, ConsoleServerTests.get(
                            "/events?ticket=\(ConsoleServerTests.body(issued))", port: port,
                            "Upgrade: websocket\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\nSec-WebSocket-Version: 13\n",
                            connection: "Upgrade"))
                        if LoopbackSocket.receive(view, until: "\r\n\r\n").text.hasPrefix("HTTP/1.1 101") { upgraded += 1 }
                    }
                    guard let late = try? LoopbackSocket.connected(to: port) else {
                        return continuation.resume(returning: (upgraded, (false, "")))
                    }
                    defer { close(late) }
                    LoopbackSocket.send(late, ConsoleServerTests.get("/", port: port))
                    let received = LoopbackSocket.receive(late)
                    continuation.resume(returning: (upgraded, (received.closed, received.text)))
                }.start()
            }
            #expect(upgraded == cap)
            #expect(refused.0 && refused.1.isEmpty, "a connection past the cap was answered: \(refused.1.prefix(200))")
        }
    }

    /// glibc's setfsuid(2) (not in Swift's Glibc module): the calling thread's file-system uid; returns the previous one.
    static func setFileSystemUID(_ uid: UInt32) -> Int32 {
        typealias SetFileSystemUID = @convention(c) (UInt32) -> Int32
        guard let symbol = dlsym(nil, "setfsuid") else { return -1 }
        return unsafeBitCast(symbol, to: SetFileSystemUID.self)(uid)
    }

    /// As root, a thread's file-system uid decides whose a socket it makes is (`/proc/net/tcp`'s uid column), so
    /// another user's program can be stood in for without a second process.
    @Test("A connection from another user's socket is closed unanswered; our own is answered",
          .enabled(if: geteuid() == 0, "needs root, to make a socket as another user (setfsuid)"))
    func anotherUsersSocket() async throws {
        try await ConsoleServerTests.withConsole { port in
            let (foreign, own) = await withCheckedContinuation { continuation in
                Thread {
                    let previous = ConsoleConnectionsTests.setFileSystemUID(65534)
                    let made = try? LoopbackSocket.connected(to: port)
                    _ = ConsoleConnectionsTests.setFileSystemUID(UInt32(previous))
                    guard let made else { return continuation.resume(returning: ((false, "no socket"), "")) }
                    defer { close(made) }
                    LoopbackSocket.send(made, ConsoleServerTests.get("/fragment/host", port: port, ConsoleServerTests.tokenHeader))
                    let received = LoopbackSocket.receive(made)
                    let own = ConsoleServerTests.exchangeBlocking(
                        port: port, ConsoleServerTests.get("/fragment/host", port: port, ConsoleServerTests.tokenHeader))
                    continuation.resume(returning: ((received.closed, received.text), own))
                }.start()
            }
            #expect(foreign.0 && foreign.1.isEmpty, "another user's connection was answered: \(foreign.1.prefix(200))")
            #expect(own.hasPrefix("HTTP/1.1 200"))
        }
    }
}

@Suite("Console pieces")
struct ConsolePiecesTests {
    @Test("The token file is made 0600, read back the same, and refused when others may read it")
    func tokenFile() throws {
        let directory = "/tmp/padbridge-console-token-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(directory + "/" + ConsoleToken.fileName); rmdir(directory) }
        let token = try ConsoleToken.loadOrCreate(inDirectory: directory)
        #expect(token.count == 64)
        var info = stat()
        #expect(stat(directory + "/" + ConsoleToken.fileName, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try ConsoleToken.loadOrCreate(inDirectory: directory) == token)
        #expect(try ConsoleToken.readExisting(inDirectory: directory) == token)
        #expect {
            _ = try ConsoleToken.readExisting(inDirectory: directory + "-none")
        } throws: { error in
            "\(error)".contains("start `padbridge console`")
        }
        chmod(directory + "/" + ConsoleToken.fileName, 0o644)
        #expect {
            _ = try ConsoleToken.loadOrCreate(inDirectory: directory)
        } throws: { error in
            "\(error)".contains("chmod 600")
        }
    }

    @Test("Names a client chose are escaped in the page")
    func escaping() {
        let client = HostClientStatus(
            name: "<script>alert(1)</script>", key: "SHA256:\"k\"", connected: true, address: "10.0.0.2:5000",
            lastHeardMillisecondsAgo: 3, roundTripMicroseconds: 1_500, receivedDatagrams: 1, sentDatagrams: 1,
            pads: [HostPadStatus(id: "p", name: "Pad & <b>", kind: "dualsense", state: .notForwarded, slot: 0, virtualKind: nil,
                                 eventNodes: [], hidraw: nil, problem: "no access to /dev/uhid")],
            pairedSinceEpochSeconds: 1_740_852_245, lossToHostPercent: 2.46, lossToClientPercent: nil)
        let html = ConsolePage.clients([client])
        #expect(!html.contains("<script>"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("value=\"SHA256:&quot;k&quot;\""))
        #expect(html.contains("Pad &amp; &lt;b&gt;"))
        #expect(html.contains("not forwarded: no access to /dev/uhid"))
        #expect(html.contains("1.5 ms"))
        #expect(html.contains("paired 2025-03-01 18:04:05 UTC"))
        #expect(html.contains("2.5 % / –"))
    }

    @Test("A live view's backlog keeps the newest lines, not the oldest")
    func backlogKeepsTheNewest() {
        var backlog = LiveViewBacklog()
        for index in 0..<(LiveViewBacklog.capacity * 4) { backlog.append("line \(index)") }
        #expect(backlog.count == LiveViewBacklog.capacity)
        var lines: [String] = []
        while let line = backlog.next() { lines.append(line) }
        #expect(lines.first == "line \(LiveViewBacklog.capacity * 3)")
        #expect(lines.last == "line \(LiveViewBacklog.capacity * 4 - 1)")
        #expect(lines.count == LiveViewBacklog.capacity)
    }

    @Test("A broadcast hands a subscriber the latest line of each kind, then new lines, until it unsubscribes")
    func broadcastSubscription() {
        let broadcast = ConsoleBroadcast()
        broadcast.publish(#"{"event":"status","status":1}"#)
        broadcast.publish(#"{"event":"live","live":1}"#)
        broadcast.publish(#"{"event":"live","live":2}"#)
        let received = NIOLockedValueBox<[String]>([])
        let id = broadcast.subscribe { line in received.withLockedValue { $0.append(line) } }
        broadcast.publish(#"{"event":"live","live":3}"#)
        broadcast.unsubscribe(id)
        broadcast.publish(#"{"event":"live","live":4}"#)
        #expect(received.withLockedValue { $0 } == [#"{"event":"live","live":2}"#, #"{"event":"status","status":1}"#, #"{"event":"live","live":3}"#])
        #expect(broadcast.subscriberCount == 0)
    }
}
