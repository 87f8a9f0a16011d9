public import FlyingFox
import Foundation
import PadNet

/// The console's HTTP side: the page, its fragment, style sheet and script, the live-view WebSocket (`/events`), and
/// the three changes a person may make (`POST /pairing/open`, `/pairing/close`, `/clients/revoke`), each behind
/// `ConsoleAccess`. It holds no state of the host's: every page asks the serve, every change is the serve's to make.
public struct ConsoleRequestHandler: HTTPHandler {
    let access: ConsoleAccess
    let host: any ConsoleHost
    let broadcast: ConsoleBroadcast

    public init(access: ConsoleAccess, host: any ConsoleHost, broadcast: ConsoleBroadcast) {
        self.access = access
        self.host = host
        self.broadcast = broadcast
    }

    public func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name.rawValue.lowercased()] = value }
        let isUpgrade = headers["upgrade"]?.lowercased() == "websocket"
        let method = request.method.rawValue.uppercased()
        switch access.decide(method: method, tokenInQuery: request.query["token"], headers: headers, isWebSocketUpgrade: isUpgrade) {
        case let .refused(reason):
            return response(.forbidden, html: ConsolePage.refused(reason), host: headers["host"])
        case .allowedSettingCookie:
            var answer = response(.seeOther, html: "", host: headers["host"])
            answer.headers[.location] = request.path
            answer.headers[.setCookie] = access.setCookie(host: headers["host"])
            return answer
        case .allowed:
            break
        }
        switch (method, request.path) {
        case ("GET", "/"):
            let (status, problem) = await status()
            return response(.ok, html: ConsolePage.page(status: status, problem: problem), host: headers["host"])
        case ("GET", "/fragment/host"):
            let (status, problem) = await status()
            return response(.ok, html: ConsolePage.hostFragment(status: status, problem: problem), host: headers["host"])
        case ("GET", "/console.css"):
            return response(.ok, body: ConsoleAssets.styleSheet, type: "text/css; charset=utf-8", host: headers["host"])
        case ("GET", "/console.js"):
            return response(.ok, body: ConsoleAssets.script, type: "text/javascript; charset=utf-8", host: headers["host"])
        case ("GET", "/favicon.ico"):
            return response(.noContent, body: "", type: "image/x-icon", host: headers["host"])
        case ("GET", "/events"):
            return try await WebSocketHTTPHandler(handler: MessageFrameWSHandler(handler: LiveViewSocket(broadcast: broadcast)))
                .handleRequest(request)
        case ("POST", "/pairing/open"):
            return await change("Opening the pairing window", .openPairing, host: headers["host"])
        case ("POST", "/pairing/close"):
            return await change("Closing the pairing window", .closePairing, host: headers["host"])
        case ("POST", "/clients/revoke"):
            let form = Self.form(String(decoding: try await request.bodyData.prefix(4_096), as: UTF8.self))
            guard let client = form["client"], !client.isEmpty else {
                return response(.badRequest, html: ConsolePage.failed("Revoking", HostControlError("no client named")), host: headers["host"])
            }
            return await change("Revoking \(client)", .revoke(client: client), host: headers["host"])
        case (_, "/"), (_, "/fragment/host"), (_, "/console.css"), (_, "/console.js"), (_, "/events"),
             (_, "/pairing/open"), (_, "/pairing/close"), (_, "/clients/revoke"):
            return response(.methodNotAllowed, html: ConsolePage.refused("\(method) is not taken here"), host: headers["host"])
        default:
            return response(.notFound, html: ConsolePage.refused("nothing at \(request.path)"), host: headers["host"])
        }
    }

    private func status() async -> (HostStatus?, String?) {
        switch await host.answer(.status) {
        case let .failure(error): return (nil, error.description)
        case let .success(line):
            switch HostControlReply.payload(line, "status", as: HostStatus.self) {
            case let .success(status): return (status, nil)
            case let .failure(error): return (nil, error.description)
            }
        }
    }

    /// Asks the serve to make a change, then sends the browser back to the page (which shows the result), or shows
    /// the serve's refusal.
    private func change(_ what: String, _ request: HostControlRequest, host hostHeader: String?) async -> HTTPResponse {
        let answer = await host.answer(request).flatMap { line in HostControlReply.parse(Substring(line)).map { _ in line } }
        switch answer {
        case let .failure(error):
            return response(.conflict, html: ConsolePage.failed(what, error), host: hostHeader)
        case .success:
            var redirect = response(.seeOther, html: "", host: hostHeader)
            redirect.headers[.location] = "/"
            return redirect
        }
    }

    private func response(_ status: HTTPStatusCode, html: String, host: String?) -> HTTPResponse {
        response(status, body: html, type: "text/html; charset=utf-8", host: host)
    }

    /// Every answer: never cached, never framed by another page, no referrer to other sites (the first address carries the token),
    /// and scripts, styles and connections only from the console itself.
    private func response(_ status: HTTPStatusCode, body: String, type: String, host: String?) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers[.contentType] = type
        headers[.cacheControl] = "no-store"
        headers[HTTPHeader("X-Frame-Options")] = "DENY"
        headers[HTTPHeader("X-Content-Type-Options")] = "nosniff"
        // Not no-referrer: with it browsers send `Origin: null` on the page's own forms. same-origin sends none elsewhere.
        headers[HTTPHeader("Referrer-Policy")] = "same-origin"
        let socket = host.map { " ws://\($0)" } ?? ""
        headers[HTTPHeader("Content-Security-Policy")] =
            "default-src 'self'; connect-src 'self'\(socket); frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        return HTTPResponse(statusCode: status, headers: headers, body: Data(body.utf8))
    }

    /// `application/x-www-form-urlencoded` fields.
    static func form(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }
}

/// One browser's live view: the serve's event lines as text messages, latest first; what the browser sends is
/// ignored, and its leaving ends the subscription.
struct LiveViewSocket: WSMessageHandler {
    let broadcast: ConsoleBroadcast

    func makeMessages(for client: AsyncStream<WSMessage>) async throws -> AsyncStream<WSMessage> {
        let lines = broadcast.subscribe()
        let (messages, continuation) = AsyncStream.makeStream(of: WSMessage.self, bufferingPolicy: .bufferingNewest(ConsoleBroadcast.backlog))
        let forwarding = Task {
            for await line in lines { continuation.yield(.text(line)) }
            continuation.finish()
        }
        let listening = Task {
            for await _ in client {}
            forwarding.cancel()
            continuation.finish()
        }
        continuation.onTermination = { _ in
            forwarding.cancel()
            listening.cancel()
        }
        return messages
    }
}
