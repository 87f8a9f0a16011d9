import Foundation
import Glibc
@testable import PadConsole
import PadNet
import Synchronization
import Testing

/// A serve stand-in: answers from fixed lines and records what it was asked.
final class RecordingHost: ConsoleHost {
    let asked = Mutex<[HostControlRequest]>([])
    let refuseRevoke: Bool

    init(refuseRevoke: Bool = false) { self.refuseRevoke = refuseRevoke }

    static let status = HostStatus(
        name: "den <pc>", key: "SHA256:host", listening: "127.0.0.1:48100", port: 48100, announcement: "not announced",
        uptimeSeconds: 75, pairing: PairingWindowStatus(open: false), devices: [], clients: [])

    func answer(_ request: HostControlRequest) async -> Result<String, HostControlError> {
        asked.withLock { $0.append(request) }
        switch request {
        case .status: return .success(HostControlReply.success(id: 1, "status", Self.status))
        case .openPairing: return .success(HostControlReply.success(id: 1, "pairing", PairingWindowStatus(open: true, code: "ABCDE")))
        case .revoke where refuseRevoke:
            return .success(HostControlReply.failure(id: 1, HostControlError("no paired client is called \"x\"")))
        default: return .success(HostControlReply.success(id: 1, "ok", true))
        }
    }
}

/// The console's HTTP side on a real loopback socket, with a stand-in serve. Clients run on threads of their own
/// (blocking sockets), never on the cooperative pool the server runs on.
@Suite("Console server")
struct ConsoleServerTests {
    static let token = String(repeating: "5a", count: 32)

    /// Runs a console on 127.0.0.1 (a free port) for `body`.
    static func withConsole(
        host: RecordingHost = RecordingHost(), broadcast: ConsoleBroadcast = ConsoleBroadcast(),
        _ body: (UInt16) async throws -> Void
    ) async throws {
        let handler = ConsoleRequestHandler(access: ConsoleAccess(token: token), host: host)
        let server = try ConsoleHTTPServer(address: "127.0.0.1", port: 0, handler: handler, broadcast: broadcast)
        defer { server.close() }
        let port = try #require(server.port)
        try await body(UInt16(port))
    }

    /// Sends `request` (CRLF line ends are added) and reads until the server closes or `until` is in the answer.
    static func exchange(port: UInt16, _ request: String, until marker: String? = nil) async -> String {
        await withCheckedContinuation { continuation in
            Thread {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(fd) }
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard connected == 0 else { continuation.resume(returning: "connect failed"); return }
                let bytes = Array(request.replacingOccurrences(of: "\n", with: "\r\n").utf8)
                _ = send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL))
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
                continuation.resume(returning: String(decoding: answer, as: UTF8.self))
            }.start()
        }
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

    static func cookie(_ port: UInt16) -> String { "Cookie: padbridge-console-\(port)=\(token)\n" }

    @Test("Without the token or with a wrong one, every page is refused; the token sets a cookie that then works")
    func pagesNeedTheToken() async throws {
        let host = RecordingHost()
        try await Self.withConsole(host: host) { port in
            let bare = await Self.exchange(port: port, Self.get("/", port: port))
            #expect(bare.hasPrefix("HTTP/1.1 403"))
            #expect(bare.contains("no token"))
            #expect(!bare.contains("den &lt;pc&gt;"))
            let wrong = await Self.exchange(port: port, Self.get("/?token=" + String(repeating: "00", count: 32), port: port))
            #expect(wrong.hasPrefix("HTTP/1.1 403"))
            for path in ["/fragment/host", "/console.js", "/console.css"] {
                #expect(await Self.exchange(port: port, Self.get(path, port: port)).hasPrefix("HTTP/1.1 403"), "\(path)")
            }
            #expect(host.asked.withLock { $0.isEmpty }, "the serve was asked something for a refused request")

            let first = await Self.exchange(port: port, Self.get("/?token=\(Self.token)", port: port))
            #expect(first.hasPrefix("HTTP/1.1 303"))
            #expect(first.contains("Set-Cookie: padbridge-console-\(port)=\(Self.token); Path=/; HttpOnly; SameSite=Strict"))
            #expect(first.contains("Location: /\r\n"))

            let page = await Self.exchange(port: port, Self.get("/", port: port, Self.cookie(port)))
            #expect(page.hasPrefix("HTTP/1.1 200"))
            #expect(page.contains("den &lt;pc&gt;"), "the host's name, escaped")
            #expect(page.contains(#"<button id="open-pairing">"#))
            #expect(page.contains("X-Frame-Options: DENY"))
            #expect(page.contains("Content-Security-Policy: default-src 'self'"))
            let script = await Self.exchange(port: port, Self.get("/console.js", port: port, Self.cookie(port)))
            #expect(script.contains("text/javascript"))
            #expect(script.contains("new WebSocket"))
        }
    }

    @Test("A cross-origin POST is refused and never reaches the serve; the console's own page opens pairing and revokes")
    func changesNeedTheSameOrigin() async throws {
        let host = RecordingHost()
        try await Self.withConsole(host: host) { port in
            let body = "client=SHA256%3Aab+cd"
            func post(_ path: String, origin: String) -> String {
                "POST \(path) HTTP/1.1\nHost: 127.0.0.1:\(port)\n\(Self.cookie(port))Origin: \(origin)\n"
                    + "Content-Type: application/x-www-form-urlencoded\nContent-Length: \(body.utf8.count)\nConnection: close\n\n\(body)"
            }
            for path in ["/pairing/open", "/pairing/close", "/clients/revoke"] {
                let refused = await Self.exchange(port: port, post(path, origin: "http://evil.example"))
                #expect(refused.hasPrefix("HTTP/1.1 403"), "\(path)")
            }
            #expect(host.asked.withLock { $0.isEmpty }, "a cross-origin POST reached the serve")

            let own = "http://127.0.0.1:\(port)"
            #expect(await Self.exchange(port: port, post("/pairing/open", origin: own)).hasPrefix("HTTP/1.1 303"))
            #expect(await Self.exchange(port: port, post("/clients/revoke", origin: own)).hasPrefix("HTTP/1.1 303"))
            #expect(host.asked.withLock { $0 } == [.openPairing, .revoke(client: "SHA256:ab cd")])
        }
    }

    @Test("A change the serve refuses shows its words")
    func refusalShown() async throws {
        try await Self.withConsole(host: RecordingHost(refuseRevoke: true)) { port in
            let body = "client=x"
            let answer = await Self.exchange(port: port,
                "POST /clients/revoke HTTP/1.1\nHost: 127.0.0.1:\(port)\nX-Padbridge-Token: \(Self.token)\n"
                    + "Content-Length: \(body.utf8.count)\nConnection: close\n\n\(body)")
            #expect(answer.hasPrefix("HTTP/1.1 409"))
            #expect(answer.contains("no paired client is called &quot;x&quot;"))
        }
    }

    @Test("The live view: refused without the token; with it, the latest event lines first")
    func liveView() async throws {
        let broadcast = ConsoleBroadcast()
        broadcast.publish(#"{"event":"status","status":{"name":"one"}}"#)
        broadcast.publish(#"{"event":"live","live":{"pads":[],"clients":[]}}"#)
        try await Self.withConsole(broadcast: broadcast) { port in
            let upgrade = "Upgrade: websocket\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\nSec-WebSocket-Version: 13\n"
            let refused = await Self.exchange(port: port, Self.get("/events", port: port, upgrade, connection: "Upgrade"))
            #expect(refused.hasPrefix("HTTP/1.1 403"))
            let crossSite = await Self.exchange(port: port, Self.get("/events", port: port, upgrade + Self.cookie(port) + "Origin: http://evil.example\n", connection: "Upgrade"))
            #expect(crossSite.hasPrefix("HTTP/1.1 403"))
            let open = await Self.exchange(
                port: port, Self.get("/events", port: port, upgrade + Self.cookie(port) + "Origin: http://127.0.0.1:\(port)\n", connection: "Upgrade"),
                until: #""name":"one""#)
            #expect(open.hasPrefix("HTTP/1.1 101"))
            #expect(open.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "RFC 6455's accept value for its sample key")
            let status = open.range(of: #""name":"one""#)
            let live = open.range(of: #""pads":[]"#)
            #expect(status != nil && live != nil && live!.lowerBound < status!.lowerBound, "latest lines, by kind in order")
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

    @Test("A broadcast's slow subscriber keeps the newest lines, not the oldest")
    func slowSubscriber() async {
        let broadcast = ConsoleBroadcast()
        let stream = broadcast.subscribe()
        for index in 0..<(ConsoleBroadcast.backlog * 4) { broadcast.publish(#"{"event":"live","live":\#(index)}"#) }
        var received: [String] = []
        for await line in stream {
            received.append(line)
            if received.count == ConsoleBroadcast.backlog { break }
        }
        #expect(received.first == #"{"event":"live","live":\#(ConsoleBroadcast.backlog * 3)}"#)
        #expect(received.last == #"{"event":"live","live":\#(ConsoleBroadcast.backlog * 4 - 1)}"#)
    }
}
