import CPadLinux
import Glibc
public import PadLinux
public import PadNet
import SystemPackage

/// A non-blocking UDP socket on the device loop: the one owner of its descriptor (closed in `close()`, deinit's
/// last resort), never handing it out. `onDatagram` runs on the loop for each datagram received (the buffer is
/// only valid during the call) with the path it came by; `send(_:along:)` answers from the local address it came
/// to (a socket bound to every address would otherwise answer from whichever the kernel picks, and a peer that
/// compares the reply's source with where it sent would hear nothing). `send` never blocks (a full socket buffer
/// drops the datagram, as the network may: the link repeats what matters). Datagrams longer than the buffer are
/// dropped, not cut.
public final class UDPSocket {
    private var descriptor: FileDescriptor?
    private var watch: LoopWatch?
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
            watch = try loop.makeWatch(descriptor, path: "udp \(localAddress)") { [unowned(unsafe) self] _ throws(DeviceAccessError) in
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
        watch?.cancel()  // before the descriptor closes (LoopWatch)
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
