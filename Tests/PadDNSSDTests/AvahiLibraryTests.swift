import Testing

@testable import PadDNSSD

/// The run-time load of Avahi's client and common libraries (`AvahiLibrary`, through CAvahiLoader and
/// CRuntimeLoader): what a missing library or function says and, on the host, which has libavahi-client3 installed
/// (scripts/deps), that every function resolves. Nothing here talks to avahi-daemon.
struct AvahiLibraryTests {
    /// The reason of the `DNSSDUnavailable` that loading `client` and `common` throws, once its code and install
    /// command are checked; nil when it loads or throws something else.
    static func failure(client: String, common: String) -> String? {
        do {
            _ = try AvahiLibrary.load(client: client, common: common)
            return nil
        } catch {
            #expect(error.code == .libraryMissing)
            #expect(error.description.contains(error.reason) && error.description.contains("sudo apt install"))
            return error.reason
        }
    }

    @Test func aMissingLibraryIsNamed() {
        let name = "libpadbridge-no-such-library.so.3"
        let asCommon = Self.failure(client: AvahiLibrary.clientSoname, common: name)
        #expect(asCommon?.hasPrefix(name + ": cannot open shared object file") == true, "\(asCommon ?? "loaded")")
        let asClient = Self.failure(client: name, common: AvahiLibrary.commonSoname)
        #expect(asClient?.hasPrefix(name + ": cannot open shared object file") == true, "\(asClient ?? "loaded")")
    }

    @Test func aLibraryWithoutAvahisFunctionsIsNamedWithTheMissingOne() {
        // libc loads but has none of Avahi's functions: the first one looked up in it is missing.
        let asClient = Self.failure(client: "libc.so.6", common: AvahiLibrary.commonSoname)
        #expect(asClient?.contains("libc.so.6: undefined symbol: avahi_client_new") == true, "\(asClient ?? "loaded")")
        let asCommon = Self.failure(client: AvahiLibrary.clientSoname, common: "libc.so.6")
        #expect(asCommon?.contains("libc.so.6: undefined symbol: avahi_strerror") == true, "\(asCommon ?? "loaded")")
    }

    @Test func theHostsAvahiLoadsWithEveryFunction() throws {
        let library = try AvahiLibrary.shared.get()
        #expect(library.describe(0) == "OK")  // avahi_strerror(AVAHI_OK), from libavahi-common
    }
}
