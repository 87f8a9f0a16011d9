import CPadLinux
import Glibc
import Testing

/// udevd's control socket stays behind as a file when udevd exits; only a listening socket means udevd runs.
@Suite struct UdevdDetectionTests {
    @Test func onlyAListeningSocketCounts() throws {
        let path = "/tmp/padbridge-test-\(getpid())-control"
        unlink(path)
        defer { unlink(path) }
        #expect(CPadLinux_unixSocketIsListening(path) == 0, "no file at all")

        // Close-on-exec: other tests spawn children meanwhile, and a child that inherited the listening socket
        // would keep it listening after `close` below.
        let server = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(server >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        try #require(listen(server, 1) == 0)
        #expect(CPadLinux_unixSocketIsListening(path) == 1, "a listening socket")

        close(server)
        #expect(access(path, F_OK) == 0, "the socket file outlives its listener")
        #expect(CPadLinux_unixSocketIsListening(path) == 0, "a stale socket file")
    }
}
