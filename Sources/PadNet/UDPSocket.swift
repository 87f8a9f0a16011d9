import CPadLinux
import Glibc
public import PadLinux
public import SystemPackage

/// An IPv4 or IPv6 socket address (what `sendto` and `recvfrom` take and give), kept inline: making one for each
/// datagram received allocates nothing.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    var storage: SocketAddressBytes

    init(_ pointer: UnsafeRawPointer, length: socklen_t) {
        storage = SocketAddressBytes(pointer, length: Int(length))
    }

    var family: Int32 {
        storage.withUnsafeBytes { Int32($0.load(fromByteOffset: 0, as: sa_family_t.self)) }
    }

    public var isIPv6: Bool { family == AF_INET6 }

    /// The address without its port (the source a datagram came from, whatever port it used).
    var hostBytes: [UInt8] {
        family == AF_INET6 ? storage[8..<min(24, storage.count)] : storage[4..<min(8, storage.count)]
    }

    public var port: UInt16 {
        storage.withUnsafeBytes { bytes in
            UInt16(bigEndian: bytes.load(fromByteOffset: 2, as: UInt16.self))
        }
    }

    /// "192.0.2.1:48100", "[::1]:48100".
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let host: String = storage.withUnsafeBytes { bytes in
            let base = bytes.baseAddress!
            let offset = family == AF_INET6 ? 8 : 4
            guard inet_ntop(family, base + offset, &text, socklen_t(text.count)) != nil else { return "?" }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Resolves "HOST", "HOST:PORT", "[IPV6]:PORT" or "IPV6" (port `defaultPort` when none is given) for UDP,
    /// numeric addresses and names alike. `passive`: for binding (an empty host then means every address).
    public static func resolve(_ text: String, defaultPort: UInt16, passive: Bool = false) throws(LinkSocketError)
        -> [SocketAddress]
    {
        let (host, port) = try split(text, defaultPort: defaultPort, allowingPortZero: passive)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host.isEmpty ? nil : host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .cannotResolve(text, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr {
                let resolved = SocketAddress(UnsafeRawPointer(address), length: current.pointee.ai_addrlen)
                if !addresses.contains(resolved) { addresses.append(resolved) }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw .cannotResolve(text, reason: "no address") }
        return addresses
    }

    /// "host:port" -> ("host", port); "[v6]:port", "v6", "host" (default port).
    /// Port 0 (any free port) only for binding.
    public static func split(_ text: String, defaultPort: UInt16, allowingPortZero: Bool) throws(LinkSocketError)
        -> (String, UInt16)
    {
        func port(_ digits: Substring) throws(LinkSocketError) -> UInt16 {
            guard let value = UInt16(digits), value > 0 || allowingPortZero else { throw .badAddress(text) }
            return value
        }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .badAddress(text) }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (host, defaultPort) }
            guard rest.hasPrefix(":") else { throw .badAddress(text) }
            return (host, try port(rest.dropFirst()))
        }
        let colons = text.filter { $0 == ":" }.count
        if colons == 1, let colon = text.firstIndex(of: ":") {
            return (String(text[..<colon]), try port(text[text.index(after: colon)...]))
        }
        return (text, defaultPort)  // a host name, an IPv4 address, or a bare IPv6 address
    }
}

/// A `sockaddr_in` or `sockaddr_in6` (at most 28 bytes), inline.
struct SocketAddressBytes: Sendable, Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt32) = (0, 0, 0, 0)
    private let length: UInt8

    static let capacity = 28

    init(_ pointer: UnsafeRawPointer, length: Int) {
        self.length = UInt8(min(max(length, 0), Self.capacity))
        let count = Int(self.length)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: count)) }
    }

    var count: Int { Int(length) }

    /// The address's bytes (as long as the address is), for `sendto`, `bind` and reading its fields.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<Int(length)])) }
    }

    subscript(range: Range<Int>) -> [UInt8] { withUnsafeBytes { Array($0[range]) } }

    /// The bytes past `length` are always zero (`init` copies only `length` bytes into zeroed words), so the words
    /// compare as the bytes do: four integer comparisons for every datagram's path, not a byte-by-byte loop.
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.length == rhs.length && lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) { withUnsafeBytes { hasher.combine(bytes: $0) } }
}

/// The path a datagram came by, which its reply goes back along: the peer's address and, for a socket bound to
/// every address, the local address the datagram was sent to (the reply must leave from it: a peer compares a
/// reply's source with the address it sent to).
public struct DatagramPath: Sendable, Hashable, CustomStringConvertible {
    public var remote: SocketAddress
    /// The local address (and interface) the datagram arrived at; nil: whichever the kernel picks.
    public var local: LocalDestination?

    public init(remote: SocketAddress, local: LocalDestination? = nil) {
        self.remote = remote
        self.local = local
    }

    public var description: String { remote.description }
}

/// The local end of a datagram received on a socket bound to every address: the address it was sent to and the
/// interface it came in on (`IP_PKTINFO`, `IPV6_PKTINFO`).
public struct LocalDestination: Sendable, Hashable {
    /// 4 bytes (IPv4) or 16 (IPv6, IPv4-mapped for IPv4 on a dual-stack socket), inline.
    var address: SocketAddressBytes
    var interfaceIndex: Int32
}

enum WallClock {
    /// `CLOCK_REALTIME` in microseconds since the epoch.
    static var nowMicroseconds: UInt64 {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        return UInt64(max(0, clock.tv_sec)) * 1_000_000 + UInt64(max(0, clock.tv_nsec)) / 1_000
    }
}

/// What went wrong with the link's socket, and what to do about it.
public enum LinkSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    case badAddress(String)
    case cannotResolve(String, reason: String)
    case cannotBind(String, cause: Errno)
    case socketFailed(operation: String, cause: Errno)
    /// The kernel has no IPv6 (booted with `ipv6.disable=1`): only IPv4 addresses can be used.
    case ipv6Unavailable

    public var description: String {
        switch self {
        case let .badAddress(text):
            "\"\(text)\" is not an address: give HOST, HOST:PORT or [IPV6]:PORT"
        case let .cannotResolve(text, reason):
            "cannot resolve \"\(text)\": \(reason); check the host name (or give its IP address)"
        case let .cannotBind(address, cause) where cause == .addressInUse:
            "cannot listen on \(address): the port is in use (another `padbridge serve`?); stop it or give --listen ADDR:PORT"
        case let .cannotBind(address, cause) where cause == .permissionDenied:
            "cannot listen on \(address): permission denied (ports below 1024 need privileges); choose a port above 1023"
        case let .cannotBind(address, cause):
            "cannot listen on \(address): \(cause)"
        case let .socketFailed(operation, cause):
            "\(operation) failed: \(cause)"
        case .ipv6Unavailable:
            "this machine's kernel has IPv6 disabled: give an IPv4 address (--listen 0.0.0.0:PORT)"
        }
    }
}

/// A non-blocking UDP socket on the device loop: the one owner of its descriptor (closed in `close()`, deinit's
/// last resort), never handing it out. `onDatagram` runs on the loop for each datagram received (the buffer is
/// only valid during the call) with the path it came by; `send(_:along:)` answers from the local address it came
/// to (a socket bound to every address would otherwise answer from whichever the kernel picks, and a peer that
/// compares the reply's source with where it sent would hear nothing). `send` never blocks (a full socket buffer
/// drops the datagram, as the network may: the link repeats what matters). Datagrams longer than the buffer are
/// dropped, not cut.
public final class UDPSocket {
    private var descriptor: FileDescriptor?
    private var watch: DeviceEventLoop.WatchToken?
    private let loop: DeviceEventLoop
    private let family: Int32
    /// Slots for one batch of received datagrams (`receiveSlotBytes` each) and what the kernel said of each: made
    /// at the first read, for at most `CPadLinux_receiveBatchLimit` datagrams (fewer when the socket reads fewer per
    /// wake), and reused.
    private var receiveSlots: [UInt8] = []
    private var received: [CPadLinux_ReceivedDatagram] = []
    private static let receiveSlotBytes = 2_048
    /// How many datagrams the first recvmmsg of a turn asks for (see `receiveAll`).
    static let firstCallDatagrams = 4
    /// The address it is bound to (the port the kernel chose when 0 was asked for).
    public let localAddress: SocketAddress
    public var onDatagram: ((UnsafeRawBufferPointer, DatagramPath) -> Void)?
    /// Datagrams dropped because they were longer than the buffer (none of padbridge's is).
    public private(set) var truncatedDatagrams = 0
    /// At most this many datagrams are read each time the loop finds the socket readable; the rest wait for its next
    /// turn (epoll is level-triggered), after the other descriptors that were ready. A shared socket that a flood may
    /// keep full reads a few at a time, so the sockets of paired clients are read in between. Never unbounded
    /// (default `datagramsPerWake`): the loop's timers run only between turns.
    public var maximumDatagramsPerWake = UDPSocket.datagramsPerWake
    /// The default bound (see `receiveAll`).
    public static let datagramsPerWake = 16
    /// Datagrams read so far (handed to `onDatagram`, or dropped as too long).
    public private(set) var datagramsRead: UInt64 = 0
    /// Called after each turn of reading: `drained` when the socket was read empty (the kernel had nothing more),
    /// false when the turn's bound ended it. Not called when the handler closed the socket.
    public var onTurnEnded: ((_ drained: Bool) -> Void)?

    /// A socket bound to `address` (port 0: any free port).
    public init(bindingTo address: SocketAddress, loop: DeviceEventLoop) throws(LinkSocketError) {
        self.loop = loop
        family = address.family
        let fd = socket(address.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            if errno == EAFNOSUPPORT && address.family == AF_INET6 { throw .ipv6Unavailable }
            throw .socketFailed(operation: "socket", cause: Errno(rawValue: errno))
        }
        if address.family == AF_INET6 {
            var on: Int32 = 0  // dual stack: "[::]" also takes IPv4
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        guard CPadLinux_enablePacketInfo(fd, address.family) == 0 else {
            let error = errno
            Glibc.close(fd)
            throw .socketFailed(operation: "asking for packet information (IP_PKTINFO)", cause: Errno(rawValue: error))
        }
        let bound = address.storage.withUnsafeBytes { bytes in
            bind(fd, bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
        guard bound == 0 else {
            let error = errno
            Glibc.close(fd)
            throw .cannotBind(address.description, cause: Errno(rawValue: error))
        }
        localAddress = Self.boundAddress(of: fd)
        try startWatching(fd)
    }

    /// A socket on `listening`'s port for one peer: bound to `local` (the address the peer's datagrams came to;
    /// nil: the listening socket's address) and connected to `remote`. The kernel then queues that peer's datagrams
    /// here, apart from the listening socket's queue (which a flood may fill), until this socket is closed. The
    /// listening socket must allow it first (`allowConnectedSocketsOnItsPort`).
    /// Not `readingNow`: nothing is read (the kernel queues) until `startReading()`.
    public init(
        connectedTo remote: SocketAddress, sharingPortOf listening: UDPSocket, local: LocalDestination?,
        readingNow: Bool = true
    ) throws(LinkSocketError) {
        loop = listening.loop
        family = listening.family
        let localBytes = local.map { $0.address.withUnsafeBytes { Array($0) } } ?? listening.localAddress.hostBytes
        let fd = localBytes.withUnsafeBytes { localPointer in
            remote.storage.withUnsafeBytes { target in
                CPadLinux_openConnectedDatagramSocket(
                    listening.family, localPointer.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    Int32(localPointer.count), local?.interfaceIndex ?? 0, listening.localAddress.port,
                    target.baseAddress, socklen_t(target.count))
            }
        }
        guard fd >= 0 else { throw .socketFailed(operation: "a socket of its own for \(remote)", cause: Errno(rawValue: errno)) }
        localAddress = Self.boundAddress(of: fd)
        if readingNow {
            try startWatching(fd)
        } else {
            descriptor = FileDescriptor(rawValue: fd)
        }
    }

    /// Starts reading a socket made not `readingNow` (nothing when it is read already, or closed). On failure the
    /// socket is closed.
    public func startReading() throws(LinkSocketError) {
        guard watch == nil, let descriptor else { return }
        try startWatching(descriptor.rawValue)
    }

    /// Whether a datagram waits to be read (it is looked at, not read).
    public var hasQueuedDatagram: Bool {
        guard let descriptor else { return false }
        return recv(descriptor.rawValue, nil, 0, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) >= 0
    }

    /// The address `fd` is bound to (`getsockname`: the port the kernel chose for port 0).
    private static func boundAddress(of fd: Int32) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return withUnsafeBytes(of: &storage) { SocketAddress($0.baseAddress!, length: length) }
    }

    private func startWatching(_ fd: Int32) throws(LinkSocketError) {
        let descriptor = FileDescriptor(rawValue: fd)
        self.descriptor = descriptor
        do {
            // unowned(unsafe): no reference counting (nor a side table) per wake. Sound because the watch ends in
            // close(), which deinit calls.
            watch = try loop.watch(descriptor, path: "udp \(localAddress)") { [unowned(unsafe) self] _ throws(DeviceAccessError) in
                self.receiveAll()
            }
        } catch {
            Glibc.close(fd)
            self.descriptor = nil
            throw .socketFailed(operation: "watching the socket (\(error.operation))", cause: error.cause ?? .ioError)
        }
    }

    /// Lets sockets made by `init(connectedTo:sharingPortOf:local:)` share this socket's port: SO_REUSEPORT, which
    /// Linux lets only sockets of the same user share (SO_REUSEADDR would let a process of any user bind the port
    /// too and take the datagrams meant for this one). Set after binding, so that binding still fails while another
    /// socket (a second `serve`) holds the port, and a second `serve` still cannot bind it afterwards (it does not
    /// ask to share). A connected socket gets its peer's datagrams; this one the rest.
    public func allowConnectedSocketsOnItsPort() throws(LinkSocketError) {
        guard let descriptor else { return }
        var on: Int32 = 1
        guard setsockopt(descriptor.rawValue, SOL_SOCKET, SO_REUSEPORT, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
        else { throw .socketFailed(operation: "setsockopt(SO_REUSEPORT)", cause: Errno(rawValue: errno)) }
    }

    /// Sends one datagram; false when the kernel refused it now (the caller counts it as lost).
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, to address: SocketAddress) -> Bool {
        guard let descriptor else { return false }
        let sent = address.storage.withUnsafeBytes { target in
            sendto(
                descriptor.rawValue, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT),
                target.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(target.count))
        }
        return sent == bytes.count
    }

    @discardableResult
    public func send(_ bytes: [UInt8], to address: SocketAddress) -> Bool {
        bytes.withUnsafeBytes { send($0, to: address) }
    }

    /// Sends along `path`: to its remote address, from its local one (when the datagram it answers came to a known
    /// local address). A local address gone meanwhile (a DHCP change) falls back to the kernel's choice.
    public func send(_ datagram: [UInt8], along path: DatagramPath) {
        guard let local = path.local, let descriptor else {
            send(datagram, to: path.remote)
            return
        }
        let sent = datagram.withUnsafeBytes { bytes in
            path.remote.storage.withUnsafeBytes { target in
                local.address.withUnsafeBytes { source in
                    CPadLinux_sendDatagram(
                        descriptor.rawValue, bytes.baseAddress, bytes.count, target.baseAddress, socklen_t(target.count),
                        family, source.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(source.count),
                        local.interfaceIndex)
                }
            }
        }
        if sent < 0 && (errno == EINVAL || errno == EADDRNOTAVAIL) { send(datagram, to: path.remote) }
    }

    /// Stops watching and closes the socket. Idempotent.
    public func close() {
        if let watch { loop.removeWatch(watch) }
        watch = nil
        if let descriptor { try? descriptor.close() }
        descriptor = nil
    }

    deinit { close() }

    /// The datagrams waiting now, at most `maximumDatagramsPerWake` (draining saves wake-ups; level-triggered epoll
    /// calls again for the rest); then `onTurnEnded`. Read in batches (recvmmsg): one system call for up to 4 waiting
    /// (the turn's first), one per batch after, and none to find the queue empty (a batch that came short found it
    /// so). The bound lets the loop's timers run between batches of a backlog: a host working through a burst (many
    /// clients' frames at once on a slow machine) keeps acknowledging and answering, where reading until empty kept
    /// every timer waiting while the backlog kept coming, so for over 400 ms the host answered nothing and its
    /// clients took the link for lost.
    private func receiveAll() {
        guard let descriptor else { return }
        let batch = max(1, min(maximumDatagramsPerWake, Int(CPadLinux_receiveBatchLimit)))
        if received.count < batch {
            received = Array(repeating: CPadLinux_ReceivedDatagram(), count: batch)
            receiveSlots = Array(repeating: 0, count: batch * Self.receiveSlotBytes)
        }
        var budget = maximumDatagramsPerWake
        var drained = false
        // The turn's first call asks for a few: most wakes find one datagram, and the shim sets up a header for every
        // datagram asked for (16 cost ~300 instructions a call); a full first batch means more are waiting, and the
        // next calls ask for the rest of the turn's share.
        var asked = min(budget, batch, Self.firstCallDatagrams)
        while budget > 0 {
            let count = receiveSlots.withUnsafeMutableBytes { slots in
                received.withUnsafeMutableBufferPointer { received in
                    CPadLinux_receiveDatagrams(
                        descriptor.rawValue, slots.baseAddress?.assumingMemoryBound(to: UInt8.self), Self.receiveSlotBytes,
                        received.baseAddress, Int32(asked))
                }
            }
            guard count > 0 else {  // EAGAIN: drained; other errors (ICMP unreachable): nothing to read now
                drained = errno == EAGAIN || errno == EWOULDBLOCK
                break
            }
            budget -= Int(count)
            for index in 0..<Int(count) {
                datagramsRead &+= 1
                if received[index].truncated != 0 {
                    truncatedDatagrams += 1
                    continue
                }
                let path = withUnsafeMutablePointer(to: &received[index]) { datagram in
                    let from = withUnsafeBytes(of: &datagram.pointee.from) {
                        SocketAddress($0.baseAddress!, length: datagram.pointee.fromLength)
                    }
                    let destination = datagram.pointee.localLength > 0
                        ? withUnsafeBytes(of: &datagram.pointee.local) {
                            LocalDestination(
                                address: SocketAddressBytes($0.baseAddress!, length: Int(datagram.pointee.localLength)),
                                interfaceIndex: datagram.pointee.interfaceIndex)
                        } : nil
                    return DatagramPath(remote: from, local: destination)
                }
                let length = received[index].length
                receiveSlots.withUnsafeBytes {
                    let start = index * Self.receiveSlotBytes
                    onDatagram?(UnsafeRawBufferPointer(rebasing: $0[start..<start + length]), path)
                }
                if self.descriptor == nil { return }  // closed by the handler
            }
            if Int(count) < asked {  // the batch came short: nothing more was waiting
                drained = true
                break
            }
            asked = min(budget, batch)
        }
        onTurnEnded?(drained)
    }
}
