import Foundation
import Glibc
import Logging
@testable import PadLinux
import Testing

/// `serve`'s control socket, on a real Unix socket and a real loop: clients on their own threads, the server on the
/// loop's, as in `serve`.
@Suite("ControlSocketServer")
struct ControlSocketServerTests {
    static func socketPath() -> String {
        "/tmp/padbridge-control-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).socket"
    }

    /// Runs `server` (made on the loop) until `clients` returns, on another thread.
    static func run(
        makeServer: (DeviceEventLoop) throws -> ControlSocketServer, clients: @escaping @Sendable () -> Void
    ) throws -> ControlSocketServer {
        let loop = try DeviceEventLoop()
        let server = try makeServer(loop)
        let done = Done()
        let stopper = loop.repeating(everyMilliseconds: 5) { if done.value { loop.stop() } }
        Thread {
            clients()
            done.value = true
        }.start()
        try loop.run()
        stopper.cancel()
        return server
    }

    @Test func answersEachLineAndClosesOnlyTheConnectionThatSentJunk() throws {
        let path = Self.socketPath()
        let results = Results()
        let server = try Self.run(
            makeServer: { loop in
                try ControlSocketServer(
                    path: path, loop: loop, logger: Logger(label: "test"), isAllowed: { _ in true },
                    onLine: { line, connection in
                        if line.hasPrefix("{") {
                            connection.send(#"{"ok":true,"echo":\#(line.count)}"#)
                        } else {
                            connection.send(#"{"ok":false,"error":"not a request"}"#)
                            connection.close()
                        }
                    })
            },
            clients: {
                do {
                    var good = try ControlSocketClient(path: path, whose: "the test")
                    results.add(try good.request(#"{"id":1}"#))
                    var junk = try ControlSocketClient(path: path, whose: "the test")
                    results.add(try junk.request("junk"))
                    do {
                        results.add(try junk.request(#"{"id":2}"#))
                    } catch {
                        results.add("closed: \(error)")
                    }
                    results.add(try good.request(#"{"id":3,"x":1}"#))
                } catch {
                    results.add("failed: \(error)")
                }
            })
        let lines = results.lines
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.first == #"{"ok":true,"echo":8}"#)
        #expect(lines.dropFirst().first == #"{"ok":false,"error":"not a request"}"#)
        #expect(lines.dropFirst(2).first?.hasPrefix("closed: the serve at \(path) closed the connection") == true, "\(lines)")
        #expect(lines.last == #"{"ok":true,"echo":14}"#, "the other connection is served all the same")
        server.close()
        #expect(access(path, F_OK) != 0, "the socket file goes with the server")
    }

    @Test func aReaderThatDoesNotReadIsDroppedNotWaitedFor() throws {
        let path = Self.socketPath()
        let results = Results()
        let bigLine = String(repeating: "x", count: 60_000)
        var sentBeforeDrop = 0
        let server = try Self.run(
            makeServer: { loop in
                try ControlSocketServer(
                    path: path, loop: loop, logger: Logger(label: "test"), isAllowed: { _ in true },
                    onLine: { line, connection in
                        if line == "flood" {
                            // A subscriber that never reads: sends stop succeeding at once, and it is dropped.
                            while connection.send(bigLine) { sentBeforeDrop += 1 }
                        } else {
                            connection.send(#"{"ok":true}"#)
                        }
                    })
            },
            clients: {
                do {
                    var stuck = try ControlSocketClient(path: path, whose: "the test")
                    _ = try stuck.request("flood", timeoutMilliseconds: 200)
                } catch {}
                do {
                    var other = try ControlSocketClient(path: path, whose: "the test")
                    results.add(try other.request("hello"))
                } catch {
                    results.add("failed: \(error)")
                }
            })
        #expect(sentBeforeDrop >= 1 && sentBeforeDrop < 1_000, "the socket buffer filled, then the reader was dropped")
        #expect(results.lines == [#"{"ok":true}"#], "the server kept serving")
        #expect(server.openConnections.count <= 1)
        server.close()
    }

    @Test func aRefusedPeerIsToldAndNeverReachesTheHandler() throws {
        let path = Self.socketPath()
        let results = Results()
        let handled = Results()
        let server = try Self.run(
            makeServer: { loop in
                try ControlSocketServer(
                    path: path, loop: loop, logger: Logger(label: "test"),
                    isAllowed: { peer in peer.uid != geteuid() },  // refuse ourselves
                    onLine: { line, _ in handled.add(String(line)) })
            },
            clients: {
                do {
                    var client = try ControlSocketClient(path: path, whose: "the test")
                    results.add(try client.request(#"{"request":"status"}"#))
                } catch {
                    results.add("failed: \(error)")
                }
            })
        #expect(results.lines.first?.contains("not allowed") == true, "\(results.lines)")
        #expect(handled.lines.isEmpty)
        server.close()
    }

    /// Issue 42, item 10: a command believes only a socket held by root, its own user or the service's user; a
    /// program of another user listening at a --socket path (squatted in a shared directory) gets no request.
    @Test func aCommandSendsNothingToASocketHeldByAnUntrustedUser() throws {
        let path = Self.socketPath()
        let results = Results()
        let handled = Results()
        let server = try Self.run(
            makeServer: { loop in
                try ControlSocketServer(
                    path: path, loop: loop, logger: Logger(label: "test"), isAllowed: { _ in true },
                    onLine: { line, connection in
                        handled.add(String(line))
                        connection.send(#"{"ok":true}"#)
                    })
            },
            clients: {
                do {
                    // This process's own user is the squatter here: trusted are only users it is not.
                    var client = try ControlSocketClient(path: path, whose: "the test", trustedUIDs: [geteuid() &+ 1])
                    results.add(try client.request(#"{"request":"status"}"#))
                } catch {
                    results.add("failed: \(error)")
                }
                do {
                    var client = try ControlSocketClient(path: path, whose: "the test")
                    results.add(try client.request(#"{"request":"status"}"#))
                } catch {
                    results.add("failed: \(error)")
                }
            })
        #expect(results.lines.count == 2)
        #expect(results.lines.first?.contains("runs as uid \(geteuid())") == true, "\(results.lines)")
        #expect(results.lines.first?.contains("nothing was sent to it") == true, "\(results.lines)")
        #expect(results.lines.last == #"{"ok":true}"#, "the default trust takes the command's own user: \(results.lines)")
        #expect(handled.lines == [#"{"request":"status"}"#], "only the trusting client's request arrived")
        server.close()
    }
}

private final class Done: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var done = false
    var value: Bool {
        get { lock.withLock { done } }
        set { lock.withLock { done = newValue } }
    }
}

private final class Results: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var stored: [String] = []
    func add(_ line: String) { lock.withLock { stored.append(line) } }
    var lines: [String] { lock.withLock { stored } }
}
