import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The console's sockets: HTTP/1.1 and the live view's WebSocket, with SwiftNIO on one event-loop thread of its own
/// (never Swift's cooperative threads). Requests go to `ConsoleRequestHandler`; an upgrade to `/events` that it lets
/// through becomes a `LiveViewHandler`.
public final class ConsoleHTTPServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    /// Listens on `address` (an IP address) and `port` (0: any free port).
    public init(address: String, port: Int, handler: ConsoleRequestHandler, broadcast: ConsoleBroadcast) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: 1 << 14,
                        shouldUpgrade: { channel, head in
                            let request = ConsoleRequest(method: head.method.rawValue, target: head.uri, headers: Self.lowered(head.headers))
                            // Refused: no upgrade, and the request goes on to ConsoleHTTPHandler, which refuses it.
                            return channel.eventLoop.makeSucceededFuture(handler.refusal(ofUpgrade: request) == nil ? HTTPHeaders() : nil)
                        },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(LiveViewHandler(broadcast: broadcast))
                            }
                        })
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                            context.pipeline.removeHandler(name: ConsoleHTTPHandler.name, promise: nil)
                        }))
                    try channel.pipeline.syncOperations.addHandler(ConsoleHTTPHandler(handler: handler), name: ConsoleHTTPHandler.name)
                }
            }
        do {
            channel = try bootstrap.bind(host: address, port: port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        self.group = group
    }

    /// The port it listens on.
    public var port: Int? { channel.localAddress?.port }

    /// Blocks the calling thread until the server is closed.
    public func waitUntilClosed() throws {
        try channel.closeFuture.wait()
    }

    public func close() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    static func lowered(_ headers: HTTPHeaders) -> [String: String] {
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        return lowered
    }
}

/// One HTTP connection's requests: each read whole (a body of at most `bodyLimit` bytes), answered by
/// `ConsoleRequestHandler` in a task, written back on the connection's event loop, in order.
final class ConsoleHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let name = "padbridge-console-http"
    /// The largest body taken (a form with a client's key is under 200 bytes).
    static let bodyLimit = 16_384

    private let handler: ConsoleRequestHandler
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyTooLarge = false

    init(handler: ConsoleRequestHandler) {
        self.handler = handler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            self.head = head
            body = []
            bodyTooLarge = false
        case var .body(buffer):
            if body.count + buffer.readableBytes > Self.bodyLimit {
                bodyTooLarge = true
            } else if let bytes = buffer.readBytes(length: buffer.readableBytes) {
                body += bytes
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let keepAlive = head.isKeepAlive && !bodyTooLarge
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            guard !bodyTooLarge else {
                write(ConsoleResponse(status: 413, headers: [("Content-Type", "text/plain")], body: Array("too large\n".utf8)),
                      keepAlive: false, context: context)
                return
            }
            let request = ConsoleRequest(
                method: head.method.rawValue, target: head.uri, headers: ConsoleHTTPServer.lowered(head.headers), body: body)
            let answered = context.eventLoop.makePromise(of: ConsoleResponse.self)
            answered.completeWithTask { [handler] in await handler.respond(to: request) }
            answered.futureResult.whenSuccess { response in
                let (this, context) = bound.value
                this.write(response, keepAlive: keepAlive, context: context)
            }
        }
    }

    private func write(_ response: ConsoleResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        headers.add(name: "Content-Length", value: "\(response.body.count)")
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: response.body.count)
        buffer.writeBytes(response.body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

/// One browser's live view: the serve's event lines as text frames, latest first. A browser that does not keep up
/// (its connection not writable) loses lines, never makes them queue; what it sends is ignored but for pings and
/// its close.
final class LiveViewHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let broadcast: ConsoleBroadcast
    private var forwarding: Task<Void, Never>?

    init(broadcast: ConsoleBroadcast) {
        self.broadcast = broadcast
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        let lines = broadcast.subscribe()
        forwarding = Task {
            for await line in lines {
                guard channel.isWritable else { continue }
                var buffer = channel.allocator.buffer(capacity: line.utf8.count)
                buffer.writeString(line)
                channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: buffer), promise: nil)
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        forwarding?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        forwarding?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .connectionClose:
            forwarding?.cancel()
            let channel = context.channel
            var data = frame.unmaskedData
            let code = data.readSlice(length: min(2, data.readableBytes)) ?? channel.allocator.buffer(capacity: 0)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: code)))
                .whenComplete { _ in channel.close(promise: nil) }
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        default:
            break
        }
    }
}
