import Foundation
import Glibc
@testable import PadLinux
import SystemPackage
import Testing

/// The hiding service's clients connect through `UnixStreamSocket.connected(to:)`: a listener whose backlog is full
/// (a service busy accepting, or one user's burst of connections) must be waited for, not taken for a refusal.
@Suite("UnixStreamSocket")
struct UnixStreamSocketTests {
    static func socketPath() -> String {
        "/tmp/padbridge-unix-socket-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).socket"
    }

    @Test func aConnectionToAFullBacklogWaitsUntilTheListenerAccepts() throws {
        let path = Self.socketPath()
        defer { unlink(path) }
        // Backlog 0 holds one connection: the first fills it, the second has to wait.
        let listener = try UnixStreamSocket.listening(at: path, mode: 0o600, backlog: 0)
        let first = try UnixStreamSocket.connected(to: path, timeoutMilliseconds: 1_000)
        let accepted = LockedBox<Bool>(false)
        let listenerDescriptor = listener.descriptor.rawValue
        let started = ContinuousClock.now
        let acceptorDone = DispatchSemaphore(value: 0)
        let acceptor = Thread {
            usleep(300_000)
            accepted.set(acceptOne(listenerDescriptor))
            acceptorDone.signal()
        }
        acceptor.start()
        let second = try UnixStreamSocket.connected(to: path, timeoutMilliseconds: 10_000)
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(250), "the connect did not wait for the listener (\(waited))")
        acceptorDone.wait()
        #expect(accepted.get())
        _ = consume first
        _ = consume second
        _ = consume listener
    }

    @Test func aBacklogNobodyAcceptsRunsOutAfterTheTimeoutAsEAGAIN() throws {
        let path = Self.socketPath()
        defer { unlink(path) }
        let listener = try UnixStreamSocket.listening(at: path, mode: 0o600, backlog: 0)
        let first = try UnixStreamSocket.connected(to: path, timeoutMilliseconds: 1_000)
        let started = ContinuousClock.now
        #expect {
            _ = try UnixStreamSocket.connected(to: path, timeoutMilliseconds: 300)
        } throws: { error in
            (error as? DeviceAccessError)?.cause == .resourceTemporarilyUnavailable
        }
        #expect(ContinuousClock.now - started >= .milliseconds(250))
        _ = consume first
        _ = consume listener
    }
}

/// accept(2) of one waiting connection, closed at once.
private func acceptOne(_ fd: Int32) -> Bool {
    let connection = accept(fd, nil, nil)
    guard connection >= 0 else { return false }
    close(connection)
    return true
}

/// A value two threads share, behind a lock.
private final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // Invariant: `value` is read and written only with `lock` held.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}

/// The listening socket's file and the process's umask.
extension UnixStreamSocketTests {
    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode : nil
    }

    /// The file gets its mode under a name of its own and is renamed over the path: never there with other
    /// permissions, and the process's umask (shared by every thread) never changed for it.
    @Test(arguments: [0o600, 0o660] as [UInt32])
    func theSocketFileHasItsModeAndTheUmaskIsLeftAlone(mode: UInt32) throws {
        let path = Self.socketPath()
        defer { unlink(path) }
        let umaskBefore = TextFileTests.umaskBits()
        let listener = try UnixStreamSocket.listening(at: path, mode: mode)
        let status = try #require(Self.mode(path))
        #expect(status & S_IFMT == S_IFSOCK && status & 0o7777 == mode_t(mode))
        #expect(TextFileTests.umaskBits() == umaskBefore)
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(name + ".") }
        #expect(left.isEmpty, "no temporary name left beside it: \(left)")
        try UnixStreamSocket.connected(to: path).close()
        _ = consume listener
    }

    @Test func aSocketLeftThereIsReplacedAndAnythingElseRefused() throws {
        let path = Self.socketPath()
        defer { unlink(path) }
        _ = try UnixStreamSocket.listening(at: path, mode: 0o600)
        let again = try UnixStreamSocket.listening(at: path, mode: 0o600)
        try UnixStreamSocket.connected(to: path).close()
        _ = consume again
        unlink(path)
        #expect(FileManager.default.createFile(atPath: path, contents: Data("keep".utf8)))
        #expect(throws: DeviceAccessError.self) { try UnixStreamSocket.listening(at: path, mode: 0o600) }
        #expect(FileManager.default.contents(atPath: path) == Data("keep".utf8), "a file that is not a socket is left")
    }
}
