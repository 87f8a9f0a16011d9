import Foundation
import Glibc
@testable import PadConsole
import Testing

@Suite("Console peers")
struct ConsolePeerTests {
    static let loopback: [UInt8] = [127, 0, 0, 1]
    static let ipv6Loopback: [UInt8] = [UInt8](repeating: 0, count: 15) + [1]

    /// /proc/net/tcp as a little-endian kernel prints it: a console listening on 127.0.0.1:48101 (0xBBE5), a peer at
    /// 127.0.0.1:40000 (0x9C40) of uid 1001 connected to it, the console's side of that connection (uid 1000), and a
    /// peer at the same port connected elsewhere.
    static let table = """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:BBE5 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 101 1 0000000000000000 100 0 0 10 0
           1: 0100007F:BBE5 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 102 1 0000000000000000 20 4 30 10 -1
           2: 0100007F:9C40 0200007F:1F90 01 00000000:00000000 00:00000000 00000000     7        0 104 1 0000000000000000 20 4 30 10 -1
           3: 0100007F:9C40 0100007F:BBE5 01 00000000:00000000 00:00000000 00000000  1001        0 103 1 0000000000000000 20 4 30 10 -1
        not a row
           4: zz:zz
        """

    @Test("The kernel's hex endpoints read as addresses and ports (IPv4, IPv6, IPv4 mapped into IPv6)",
          .enabled(if: 1.littleEndian == 1, "the table's words are as a little-endian kernel prints them"))
    func endpoints() {
        #expect(ConsolePeer.endpoint("0100007F:BBE5") == .init(address: Self.loopback, port: 48101))
        #expect(ConsolePeer.endpoint("00000000000000000000000001000000:1F90") == .init(address: Self.ipv6Loopback, port: 8080))
        let mapped = ConsolePeer.Endpoint(address: Self.loopback, port: 9).v4Mapped
        #expect(ConsolePeer.endpoint("0000000000000000FFFF00000100007F:0009") == mapped)
        #expect(ConsolePeer.endpoint("0100007F") == nil)
        #expect(ConsolePeer.endpoint("0100007:BBE5") == nil)
        #expect(ConsolePeer.endpoint("0100007G:BBE5") == nil)
        #expect(ConsolePeer.endpoint("0100007F:10000") == nil)
        #expect(ConsolePeer.Endpoint(address: Self.loopback, port: 48101).description == "127.0.0.1:48101")
        #expect(ConsolePeer.Endpoint(address: Self.ipv6Loopback, port: 1).description == "[0:0:0:0:0:0:0:1]:1")
    }

    @Test("The owner is the row whose local address is the peer's and remote address the console's",
          .enabled(if: 1.littleEndian == 1, "the table's words are as a little-endian kernel prints them"))
    func ownerRow() {
        let console = ConsolePeer.Endpoint(address: Self.loopback, port: 48101)
        let peer = ConsolePeer.Endpoint(address: Self.loopback, port: 40000)
        #expect(ConsolePeer.owner(ofSocketAt: peer, connectedTo: console, inTable: Self.table) == 1001)
        #expect(ConsolePeer.owner(ofSocketAt: console, connectedTo: peer, inTable: Self.table) == 1000, "the console's own side")
        #expect(ConsolePeer.owner(ofSocketAt: ConsolePeer.Endpoint(address: Self.loopback, port: 40001), connectedTo: console,
                                  inTable: Self.table) == nil)
        #expect(ConsolePeer.owner(ofSocketAt: peer, connectedTo: console, inTable: "") == nil)
    }

    @Test("Root and the console's users are let in; another user, or a socket not found, is not")
    func policy() {
        let policy = ConsolePeer.Policy(users: [1000])
        #expect(policy.admits(owner: 0))
        #expect(policy.admits(owner: 1000))
        #expect(!policy.admits(owner: 1001))
        #expect(!policy.admits(owner: 65534))
        #expect(!policy.admits(owner: nil))
        #expect(ConsolePeer.Policy.consoleUser().users.contains(UInt32(geteuid())))
    }

    @Test("The real tables: our own connection on 127.0.0.1 is found as ours; a port nobody connected from is not found")
    func realLookup() throws {
        let listener = try LoopbackSocket.listening()
        defer { close(listener.descriptor) }
        let client = try LoopbackSocket.connected(to: listener.port)
        defer { close(client) }
        let accepted = accept(listener.descriptor, nil, nil)
        try #require(accepted >= 0)
        defer { close(accepted) }
        let console = try #require(LoopbackSocket.endpoint(accepted, peer: false))
        let peer = try #require(LoopbackSocket.endpoint(accepted, peer: true))
        #expect(ConsolePeer.owner(ofPeer: peer, connectedTo: console) == UInt32(geteuid()))
        #expect(ConsolePeer.Policy.consoleUser().admits(owner: ConsolePeer.owner(ofPeer: peer, connectedTo: console)))
        let stranger = ConsolePeer.Endpoint(address: Self.loopback, port: peer.port == 1 ? 2 : 1)
        #expect(ConsolePeer.owner(ofPeer: stranger, connectedTo: console) == nil)
    }
}

/// Plain blocking loopback sockets for the tests.
enum LoopbackSocket {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func listening() throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 8) == 0, let port = endpoint(descriptor, peer: false)?.port else {
            close(descriptor)
            throw Failure(description: "cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        return (descriptor, port)
    }

    /// A socket connected to 127.0.0.1:`port`, made by the calling thread (its owner is the thread's file-system uid).
    static func connected(to port: UInt16, receiveTimeoutSeconds: Int = 30) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Failure(description: "cannot connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    static func endpoint(_ descriptor: Int32, peer: Bool) -> ConsolePeer.Endpoint? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(descriptor, $0, &length) : getsockname(descriptor, $0, &length)
            }
        }
        guard result == 0 else { return nil }
        return ConsolePeer.Endpoint(
            address: withUnsafeBytes(of: address.sin_addr) { Array($0) }, port: UInt16(bigEndian: address.sin_port))
    }

    static func send(_ descriptor: Int32, _ text: String) {
        let bytes = Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        _ = Glibc.send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL))
    }

    /// Everything received until the other side closes (`closed`: an end of file, or a reset, which a close with unread
    /// bytes makes), or the receive timeout passes, or `until` is in it.
    static func receive(_ descriptor: Int32, until marker: String? = nil) -> (text: String, closed: Bool) {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return (String(decoding: answer, as: UTF8.self), true) }
            guard count > 0 else { return (String(decoding: answer, as: UTF8.self), errno == ECONNRESET) }
            answer += buffer.prefix(count)
            if let marker, String(decoding: answer, as: UTF8.self).contains(marker) {
                return (String(decoding: answer, as: UTF8.self), false)
            }
        }
    }
}
