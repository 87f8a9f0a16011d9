import CPadLinux
import Glibc
@testable import PadLinux
import PadLinuxTestSupport
import SystemPackage
import Testing

extension Tag {
    /// Needs a kernel with uinput/uhid (the QEMU VM): skipped elsewhere.
    @Tag static var kernel: Self
}

enum KernelAvailability {
    /// Set by scripts/kernel-suite in the VM: there the kernel tests must run, so a missing device fails them
    /// (with the error padbridge gives a user) instead of skipping them.
    static var required: Bool { getenv("PADBRIDGE_KERNEL_SUITE") != nil }
    static func canWrite(_ path: String) -> Bool { access(path, R_OK | W_OK) == 0 }
    static var hasUinput: Bool { required || canWrite("/dev/uinput") }
    static var hasUhid: Bool { required || canWrite("/dev/uhid") }
}

/// An independent reader of an evdev node: what any program sees, through plain evdev ioctls and read(2).
struct EvdevReader: ~Copyable {
    let path: String
    let descriptor: FileDescriptor

    init(_ path: String, writable: Bool = false) throws {
        self.path = path
        descriptor = try FileDescriptor.open(
            FilePath(path), writable ? .readWrite : .readOnly, options: [.nonBlocking, .closeOnExec])
    }

    deinit { try? descriptor.close() }

    func string(_ request: (Int) -> IoctlRequest) throws -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let result = buffer.withUnsafeMutableBytes { descriptor.control(request($0.count), $0.baseAddress) }
        _ = try result.get()
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }

    var name: String { get throws { try string { .evdevName(length: $0) } } }
    var uniq: String { get throws { try string { .evdevUniq(length: $0) } } }

    var id: input_id {
        get throws {
            var id = input_id()
            _ = try withUnsafeMutableBytes(of: &id) { descriptor.control(.evdevID, $0.baseAddress) }.get()
            return id
        }
    }

    /// The codes set in the capability bitmap of `eventType` (0 = the event types themselves).
    func capabilities(_ eventType: Int32) throws -> Set<Int32> {
        var bits = [UInt8](repeating: 0, count: 96)
        let result = bits.withUnsafeMutableBytes {
            descriptor.control(.evdevBits(eventType: eventType, length: $0.count), $0.baseAddress)
        }
        _ = try result.get()
        return Self.codes(in: bits)
    }

    var pressedKeys: Set<Int32> {
        get throws {
            var bits = [UInt8](repeating: 0, count: 96)
            let result = bits.withUnsafeMutableBytes {
                descriptor.control(.evdevKeyState(length: $0.count), $0.baseAddress)
            }
            _ = try result.get()
            return Self.codes(in: bits)
        }
    }

    func axis(_ code: Int32) throws -> input_absinfo {
        var info = input_absinfo()
        _ = try withUnsafeMutableBytes(of: &info) { descriptor.control(.evdevAxis(code), $0.baseAddress) }.get()
        return info
    }

    /// Everything queued so far (the node is non-blocking).
    func pendingEvents() -> [input_event] {
        var events = [input_event](repeating: input_event(), count: 256)
        let count = events.withUnsafeMutableBytes { (try? descriptor.read(into: $0)) ?? 0 }
        return Array(events.prefix(count / MemoryLayout<input_event>.stride))
    }

    /// The errno of a read(2) now (nil if it succeeded or would block).
    func readFailure() -> Errno? {
        var events = [input_event](repeating: input_event(), count: 16)
        let result = events.withUnsafeMutableBytes { descriptor.readResult(into: $0) }
        if case let .failure(failure) = result, failure != .resourceTemporarilyUnavailable { return failure }
        return nil
    }

    /// EVIOCSFF; returns the id the kernel assigned.
    func upload(_ effect: ff_effect) throws -> Int16 {
        var effect = effect
        _ = try withUnsafeMutableBytes(of: &effect) { descriptor.control(.evdevUploadEffect, $0.baseAddress) }.get()
        return effect.id
    }

    func write(type: Int32, code: Int32, value: Int32) throws {
        var event = input_event(time: timeval(), type: UInt16(type), code: UInt16(code), value: value)
        _ = try withUnsafeBytes(of: &event) { try descriptor.write($0) }
    }

    static func codes(in bits: [UInt8]) -> Set<Int32> {
        var codes: Set<Int32> = []
        for (index, byte) in bits.enumerated() {
            for bit in 0..<8 where byte & (1 << bit) != 0 { codes.insert(Int32(index * 8 + bit)) }
        }
        return codes
    }

    static func rumble(strong: UInt16, weak: UInt16, length: UInt16 = 0, delay: UInt16 = 0) -> ff_effect {
        var effect = ff_effect()
        effect.type = UInt16(FF_RUMBLE)
        effect.id = -1
        effect.replay.length = length
        effect.replay.delay = delay
        effect.u.rumble.strong_magnitude = strong
        effect.u.rumble.weak_magnitude = weak
        return effect
    }
}

extension DeviceEventLoop {
    /// Runs for `milliseconds`, servicing devices.
    func run(milliseconds: UInt64) throws {
        let deadline = makeTimer { self.stop() }
        defer { deadline.close() }
        deadline.schedule(at: MonotonicInstant.now().adding(milliseconds: milliseconds))
        try run()
    }
}

/// A one-shot gate between threads (a pipe): `wait()` blocks until `open()`.
final class Gate: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// For watching with the loop: readable once opened.
    var descriptorForPolling: FileDescriptor { FileDescriptor(rawValue: readEnd) }

    func wait() {
        var byte: UInt8 = 0
        _ = read(readEnd, &byte, 1)
    }

    func open() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }
}

/// Runs `body` on a new POSIX thread (a client that blocks in the kernel while the loop thread answers it).
final class ClientThread: @unchecked Sendable {
    // Invariant: `body` is only touched by the new thread, and `thread` only by the creating one.
    private let body: () -> Void
    private var thread = pthread_t()

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { context in
            let client = Unmanaged<ClientThread>.fromOpaque(context!).takeRetainedValue()
            client.body()
            return nil
        }, context)
        precondition(status == 0)
    }

    func join() { pthread_join(thread, nil) }
}
