public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import PadNet
import PadNetLinux
import NIOConcurrencyHelpers

/// How many connections the console keeps and how long it waits for a request.
public struct ConsoleConnectionLimits: Sendable {
    /// Connections open at once; past it the oldest connection still waiting for a request is closed to make room, or,
    /// when none is waiting, the new one is closed at once.
    public var maximumOpen: Int
    /// How long a connection has to send a whole request (head and body), from when it opens or from the previous
    /// answer; then it is closed. Not for an open live view.
    public var requestTimeout: Duration

    public init(maximumOpen: Int = 256, requestTimeout: Duration = .seconds(10)) {
        self.maximumOpen = maximumOpen
        self.requestTimeout = requestTimeout
    }
}

/// The console's sockets: HTTP/1.1 and the live view's WebSocket, with SwiftNIO on one event-loop thread of its own.
/// Requests go to `ConsoleRequestHandler` and are answered from its completion (never through Swift's cooperative
/// threads, which blocking work elsewhere in the process can hold); an upgrade to `/events` that it lets through
/// becomes a `LiveViewHandler`. On loopback, a connection from another user's program is closed unread
/// (`ConsolePeer`); the connections are capped and each must send its request in time (`ConsoleConnectionLimits`).
public final class ConsoleHTTPServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let lookups: NIOThreadPool
    private let channel: any Channel

    /// Listens on `address` (an IP address) and `port` (0: any free port). On a loopback address, only programs of
    /// the users `peers` admits are answered.
    public init(
        address: String, port: Int, handler: ConsoleRequestHandler, broadcast: ConsoleBroadcast,
        limits: ConsoleConnectionLimits = ConsoleConnectionLimits(), peers: ConsolePeer.Policy = .consoleUser(),
        logger: Logger = Logger(label: "padbridge.console")
    ) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        // Reading the kernel's socket tables is file reading: on a thread of its own, never the event loop's.
        let lookups = NIOThreadPool(numberOfThreads: 1)
        lookups.start()
        let connections = ConsoleConnectionTable(maximumOpen: limits.maximumOpen, loop: loop)
        let refusedUsers = RefusedUsers(logger: logger)
        let checksPeers = Self.isLoopback(address)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Nothing is read from a loopback connection before its peer is known to be let in.
            .childChannelOption(.autoRead, value: !checksPeers)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard connections.admit(channel) else { throw ConsoleConnectionRefused() }
                    channel.closeFuture.whenComplete { _ in connections.remove(channel) }
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
                    try channel.pipeline.syncOperations.addHandler(
                        ConsoleHTTPHandler(handler: handler, connections: connections, requestTimeout: TimeAmount(limits.requestTimeout)),
                        name: ConsoleHTTPHandler.name)
                    if checksPeers {
                        Self.admitIfLetIn(channel, peers: peers, lookups: lookups, connections: connections, refusedUsers: refusedUsers)
                    }
                }
            }
        do {
            channel = try bootstrap.bind(host: address, port: port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            try? lookups.syncShutdownGracefully()
            throw error
        }
        self.group = group
        self.lookups = lookups
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
        try? lookups.syncShutdownGracefully()
    }

    static func lowered(_ headers: HTTPHeaders) -> [String: String] {
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        return lowered
    }

    /// padbridge's one loopback rule (PadNet's `SocketAddress.isLoopback`).
    static func isLoopback(_ address: String) -> Bool { PadNet.SocketAddress.isLoopback(host: address) }

    /// Looks the peer's socket up (on `lookups`) and starts reading from `channel` when its owner is let in, or closes it.
    private static func admitIfLetIn(
        _ channel: any Channel, peers: ConsolePeer.Policy, lookups: NIOThreadPool, connections: ConsoleConnectionTable,
        refusedUsers: RefusedUsers
    ) {
        guard let peer = endpoint(channel.remoteAddress), let console = endpoint(channel.localAddress) else {
            channel.close(promise: nil)
            return
        }
        lookups.runIfActive(eventLoop: channel.eventLoop) { ConsolePeer.owner(ofPeer: peer, connectedTo: console) }
            .whenComplete { result in
                // Closed meanwhile (by its peer, or to make room): nothing to decide. Not `isActive`: NIO registers an
                // accepted channel in a later turn of the loop, so the answer may come before it is active (reading is
                // then turned on from its registration).
                guard connections.contains(channel) else { return }
                let owner = (try? result.get()) ?? nil
                if peers.admits(owner: owner) {
                    channel.setOption(.autoRead, value: true).whenFailure { _ in channel.close(promise: nil) }
                } else {
                    refusedUsers.tell(owner: owner, peer: peer)
                    channel.close(promise: nil)
                }
            }
    }

    static func endpoint(_ address: NIOCore.SocketAddress?) -> ConsolePeer.Endpoint? {
        switch address {
        case let .v4(address)?:
            let socketAddress = address.address
            return ConsolePeer.Endpoint(
                address: withUnsafeBytes(of: socketAddress.sin_addr) { Array($0) }, port: UInt16(bigEndian: socketAddress.sin_port))
        case let .v6(address)?:
            let socketAddress = address.address
            return ConsolePeer.Endpoint(
                address: withUnsafeBytes(of: socketAddress.sin6_addr) { Array($0) }, port: UInt16(bigEndian: socketAddress.sin6_port))
        default:
            return nil
        }
    }
}

/// A connection past the cap with none to make room for it: closed at once.
struct ConsoleConnectionRefused: Error {}

/// Says once per user that the console refused another user's program (a person may wonder why a page stays blank).
final class RefusedUsers: Sendable {
    private let told = NIOLockedValueBox<Set<UInt32?>>([])
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func tell(owner: UInt32?, peer: ConsolePeer.Endpoint) {
        let first = told.withLockedValue { told in told.count < 64 && told.insert(owner).inserted }
        guard first else { return }
        let who = owner.map { "uid \($0), another user's program" } ?? "a socket not found in /proc/net/tcp or tcp6"
        logger.info("refused a connection from \(peer) (\(who)): on loopback the console answers only its own user and root")
    }
}

/// The console's open connections, for the cap: each one, in the order they came, and whether it is waiting for a
/// request (then it may be closed to make room).
/// `@unchecked Sendable`: every access is on the console's one event loop (each method checks it), so nothing in it is
/// ever touched from two threads.
final class ConsoleConnectionTable: @unchecked Sendable {
    private struct Entry {
        let channel: any Channel
        let order: UInt64
        var waiting: Bool
    }

    private let maximumOpen: Int
    private let loop: any EventLoop
    private var entries: [ObjectIdentifier: Entry] = [:]
    private var nextOrder: UInt64 = 0

    init(maximumOpen: Int, loop: any EventLoop) {
        self.maximumOpen = maximumOpen
        self.loop = loop
    }

    /// Takes `channel` in; at the cap, closes the oldest connection waiting for a request to make room, and when none
    /// is waiting, says no.
    func admit(_ channel: any Channel) -> Bool {
        loop.preconditionInEventLoop()
        if entries.count >= maximumOpen {
            guard let oldest = entries.filter(\.value.waiting).min(by: { $0.value.order < $1.value.order }) else { return false }
            entries[oldest.key] = nil
            oldest.value.channel.close(promise: nil)
        }
        entries[ObjectIdentifier(channel)] = Entry(channel: channel, order: nextOrder, waiting: true)
        nextOrder += 1
        return true
    }

    func remove(_ channel: any Channel) {
        loop.preconditionInEventLoop()
        entries[ObjectIdentifier(channel)] = nil
    }

    /// Whether `channel` waits for a request (true) or is being answered, or is a live view (false).
    func setWaiting(_ channel: any Channel, _ waiting: Bool) {
        loop.preconditionInEventLoop()
        entries[ObjectIdentifier(channel)]?.waiting = waiting
    }

    /// Whether `channel` is still open and counted (not closed, nor closed to make room).
    func contains(_ channel: any Channel) -> Bool {
        loop.preconditionInEventLoop()
        return entries[ObjectIdentifier(channel)] != nil
    }
}

/// One HTTP connection's requests: each read whole (a body of at most `bodyLimit` bytes), answered by
/// `ConsoleRequestHandler`'s completion, written back on the connection's event loop, in order. A request that does
/// not arrive whole within the timeout closes the connection.
final class ConsoleHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let name = "padbridge-console-http"
    /// The largest body taken (a form with a client's key is under 200 bytes).
    static let bodyLimit = 16_384

    private let handler: ConsoleRequestHandler
    private let connections: ConsoleConnectionTable
    private let requestTimeout: TimeAmount
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyTooLarge = false
    private var deadline: Scheduled<Void>?

    init(handler: ConsoleRequestHandler, connections: ConsoleConnectionTable, requestTimeout: TimeAmount) {
        self.handler = handler
        self.connections = connections
        self.requestTimeout = requestTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { awaitRequest(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        awaitRequest(context: context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Upgraded to the live view (or closed): no request to wait for, and not to be closed to make room.
        deadline?.cancel()
        deadline = nil
        connections.setWaiting(context.channel, false)
    }

    /// Gives the next request `requestTimeout` to arrive whole.
    private func awaitRequest(context: ChannelHandlerContext) {
        guard deadline == nil else { return }
        connections.setWaiting(context.channel, true)
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: requestTimeout) { channel.close(promise: nil) }
    }

    private func requestArrived(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        connections.setWaiting(context.channel, false)
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
            requestArrived(context: context)
            let keepAlive = head.isKeepAlive && !bodyTooLarge
            guard !bodyTooLarge else {
                write(ConsoleResponse(status: 413, headers: [("Content-Type", "text/plain")], body: Array("too large\n".utf8)),
                      keepAlive: false, context: context)
                return
            }
            let request = ConsoleRequest(
                method: head.method.rawValue, target: head.uri, headers: ConsoleHTTPServer.lowered(head.headers), body: body)
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            handler.respond(to: request) { response in
                loop.execute {
                    let (this, context) = bound.value
                    this.write(response, keepAlive: keepAlive, context: context)
                }
            }
        }
    }

    private func write(_ response: ConsoleResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        headers.add(name: "Content-Length", value: "\(response.body.count)")
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: response.body.count)
        buffer.writeBytes(response.body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if keepAlive {
            awaitRequest(context: context)
        } else {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

/// The lines a live-view socket has yet to send: at most `capacity`, the newest kept (a browser that does not keep up
/// loses older lines, never the newest, and never makes them queue without bound).
public struct LiveViewBacklog: Sendable {
    public static let capacity = 32
    private var lines = CircularBuffer<String>(initialCapacity: capacity)

    public init() {}

    public mutating func append(_ line: String) {
        if lines.count == Self.capacity { lines.removeFirst() }
        lines.append(line)
    }

    public mutating func next() -> String? { lines.popFirst() }

    public var count: Int { lines.count }
}

/// One browser's live view: the serve's event lines as text frames, latest first, handed over by the broadcast onto
/// the event loop (no task). Lines wait in a `LiveViewBacklog` while the connection is not writable; what the browser
/// sends is ignored but for pings and its close.
final class LiveViewHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let broadcast: ConsoleBroadcast
    private var subscription: Int?
    private var backlog = LiveViewBacklog()

    init(broadcast: ConsoleBroadcast) {
        self.broadcast = broadcast
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        subscription = broadcast.subscribe { line in
            loop.execute {
                let (this, context) = bound.value
                guard this.subscription != nil else { return }
                this.backlog.append(line)
                this.send(context: context)
            }
        }
    }

    private func send(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var wrote = false
        while context.channel.isWritable, let line = backlog.next() {
            var buffer = context.channel.allocator.buffer(capacity: line.utf8.count)
            buffer.writeString(line)
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: buffer)), promise: nil)
            wrote = true
        }
        if wrote { context.flush() }
    }

    private func stop() {
        if let subscription { broadcast.unsubscribe(subscription) }
        subscription = nil
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        send(context: context)
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .connectionClose:
            stop()
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
