import PadNet
import PadNetLinux
import Testing

/// padbridge's one loopback rule (`serve`'s announcement, `console`'s peer check and warning).
@Suite struct LoopbackAddressTests {
    @Test(arguments: [
        ("127.0.0.1", true), ("127.1.2.3", true), ("127.255.255.254", true), ("::1", true), ("[::1]", true),
        ("::ffff:127.0.0.1", true), ("::ffff:127.9.8.7", true), ("[::ffff:127.0.0.1]", true), ("localhost", true),
        ("LOCALHOST", true),
        ("128.0.0.1", false), ("10.127.0.1", false), ("0.0.0.0", false), ("::", false), ("::2", false),
        ("::ffff:10.0.0.1", false), ("::127.0.0.1", false), ("fe80::1", false), ("1::1", false),
        ("127.example", false), ("", false), ("pc.local", false),
    ])
    func aHostIsLoopbackExactlyByTheRule(host: String, isLoopback: Bool) {
        #expect(SocketAddress.isLoopback(host: host) == isLoopback, "\(host)")
    }

    @Test(arguments: [
        ("127.0.0.1:48100", true), ("127.4.5.6:1", true), ("[::1]:48100", true), ("[::ffff:127.0.0.1]:48100", true),
        ("192.0.2.1:48100", false), ("[2001:db8::1]:48100", false), ("[::ffff:192.0.2.1]:48100", false),
    ])
    func aParsedSocketAddressIsLoopbackByTheSameRule(text: String, isLoopback: Bool) throws {
        let address = try SocketAddress.resolve(text, defaultPort: 1)[0]
        #expect(address.isLoopback == isLoopback, "\(address)")
    }
}
