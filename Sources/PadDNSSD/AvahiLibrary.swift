internal import CAvahiLoader

/// Avahi's client library, loaded at run time by `CAvahiLoader` rather than linked, so that padbridge runs where
/// Avahi is not installed and only the commands that use DNS-SD load it.
struct AvahiLibrary: Sendable {
    /// Debian's libavahi-client3 and libavahi-common3.
    static let clientSoname = "libavahi-client.so.3"
    static let commonSoname = "libavahi-common.so.3"

    /// The process's one load: made by the first caller (a `static let` is initialised once, thread-safely), kept
    /// whether it succeeded or failed, never unloaded.
    static let shared: Result<AvahiLibrary, DNSSDUnavailable> = Result { () throws(DNSSDUnavailable) in
        try load(client: clientSoname, common: commonSoname)
    }

    /// The resolved functions; every one is non-null.
    let functions: CAvahi_Functions

    static func load(client: String, common: String) throws(DNSSDUnavailable) -> AvahiLibrary {
        var functions = CAvahi_Functions()
        var message = [CChar](repeating: 0, count: 512)
        let status = message.withUnsafeMutableBufferPointer { buffer in
            CAvahi_load(client, common, &functions, buffer.baseAddress, buffer.count)
        }
        guard status == 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw DNSSDUnavailable(code: .libraryMissing, reason: reason)
        }
        return AvahiLibrary(functions: functions)
    }

    /// Avahi's text for an error number.
    func describe(_ error: Int32) -> String {
        functions.avahi_strerror(error).map { String(cString: $0) } ?? "Avahi error \(error)"
    }
}

/// Why DNS-SD (announcing, browsing) is not available here, with what to do about it.
public struct DNSSDUnavailable: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// libavahi-client3 is not installed.
        case libraryMissing
        /// avahi-daemon (or the D-Bus system bus it is reached through) is not running.
        case daemonNotRunning
        /// Anything else Avahi refused, in its words.
        case failed
    }

    public var code: Code
    public var reason: String

    public init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String {
        switch code {
        case .libraryMissing:
            "Avahi's client library is not installed (\(reason)); install it: sudo apt install avahi-daemon libavahi-client3"
        case .daemonNotRunning:
            "avahi-daemon is not running (\(reason)); start it: sudo systemctl enable --now avahi-daemon (not "
                + "installed: sudo apt install avahi-daemon)"
        case .failed:
            "Avahi: \(reason)"
        }
    }
}
