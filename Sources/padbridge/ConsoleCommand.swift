import ArgumentParser
import Dispatch
import Glibc
import PadConsole
import PadNet
import PadNetLinux

struct ConsoleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "A web page for the running host: pairing, clients (revoke), their pads drawn live, the link.",
        discussion: """
            A separate process that talks to the serve only through its control socket (found as `status` finds \
            it). Its address carries a token in the fragment (http://127.0.0.1:48101/#token=...), which the browser \
            never sends: the page keeps it for the tab and sends it in a header with every request; no cookie is set. \
            The address with the token is printed when standard output is a terminal; otherwise (a service, whose \
            output goes to the journal) only the plain address is, and `padbridge console --print-url` prints the \
            whole one. The token is kept in console-token in the config directory (mode 0600; delete it for a new \
            one). Changes (pairing, revoke) are taken only from the console's own page. It listens on loopback, where \
            it answers only programs of its own user and root (and, started with sudo, of the user who ran sudo), \
            unless --listen names another address; then anybody who can reach it and has the token can pair and \
            revoke. The systemd user unit padbridge-console.service runs it (systemctl --user enable --now \
            padbridge-console).
            """)

    static let defaultListen = "127.0.0.1:48101"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where the page listens, ADDRESS:PORT or [IPv6]:PORT (default \(defaultListen); port 0: any free port).",
            valueName: "address:port"))
    var listen: String?

    @Flag(
        name: .customLong("print-url"),
        help: ArgumentHelp(
            "Print the running console's address with its token (read from console-token) and exit; --listen gives its port.",
            discussion: "The service prints only the plain address, so that the token does not land in the journal."))
    var printURL = false

    @OptionGroup var control: ControlSocketOptions

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let (address, port) = try Self.parse(listen ?? Self.defaultListen)
        // The token is the console user's, in their own config directory (the system service's is root's).
        let tokenDirectory = control.system ? try TrustStore.resolveDirectory(nil) : try control.store().directory
        if printURL {
            guard port != 0 else {
                throw ValidationError("--print-url --listen \(address):0: give the port the console listens on (it printed it)")
            }
            let token: String
            do { token = try ConsoleToken.readExisting(inDirectory: tokenDirectory) } catch { throw CommandFailure("\(error)") }
            LineOutput.standardOutput.write(Self.address(host: Self.shown(address), port: Int(port), token: token))
            return
        }
        let target = try control.target()
        let token: String
        do { token = try ConsoleToken.loadOrCreate(inDirectory: tokenDirectory) } catch { throw CommandFailure("\(error)") }

        let broadcast = ConsoleBroadcast()
        let host = ControlSocketConsoleHost(path: target.path, whose: target.whose)
        guard host.follow(into: broadcast) else { throw CommandFailure("cannot start the thread that follows the serve") }
        let handler = ConsoleRequestHandler(access: ConsoleAccess(token: token), host: host)
        let server: ConsoleHTTPServer
        do {
            server = try ConsoleHTTPServer(
                address: address, port: Int(port), handler: handler, broadcast: broadcast,
                logger: global.makeLogger(label: "padbridge.console"))
        } catch {
            throw CommandFailure("the console cannot listen on \(address):\(port): \(error)"
                + (port == 48101 ? "; is another console running? Give another --listen port" : ""))
        }
        let isLoopback = SocketAddress.isLoopback(host: address)
        let shownAddress = Self.shown(address)
        let actualPort = server.port ?? Int(port)
        if !isLoopback {
            StatusOutput.say(.notOnlyLoopback, """
                WARNING: the console listens on \(shownAddress):\(actualPort), not only on loopback: anyone \
                on that network who has the token can pair clients and revoke them. The page is plain HTTP (the token \
                crosses the network readable); prefer the default, or an SSH tunnel: ssh -L 48101:127.0.0.1:48101 THIS-HOST
                """)
        }
        let shownHost = address == "0.0.0.0" || address == "::" ? Self.hostName() ?? shownAddress : shownAddress
        let output = LineOutput.standardOutput
        // The token only to a terminal: a service's standard output goes to the journal, which keeps it.
        if isatty(STDOUT_FILENO) == 1 {
            output.write("padbridge: console for \(target.whose) at \(Self.address(host: shownHost, port: actualPort, token: token))")
        } else {
            var options = actualPort == 48101 ? "" : " --listen \(shownAddress):\(actualPort)"
            if let directory = control.configDirectory { options += " --config-dir \(directory)" }
            if control.system { options += " --system" }
            output.write("padbridge: console for \(target.whose) at \(Self.address(host: shownHost, port: actualPort, token: nil)) "
                + "(the address with its token: padbridge console --print-url\(options))")
        }
        output.write("padbridge: its serve's control socket: \(target.path); the token is in \(tokenDirectory)/\(ConsoleToken.fileName)")

        // SIGINT and SIGTERM end it cleanly (status 0): it holds nothing a person would miss, the serve keeps running.
        let endings = [SIGINT, SIGTERM].map { (number: Int32) -> any DispatchSourceSignal in
            _ = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                StatusOutput.say(.consoleStopped, "console stopped")
                server.close()
            }
            source.resume()
            return source
        }
        defer { endings.forEach { $0.cancel() } }
        try server.waitUntilClosed()
    }

    /// `http://HOST:PORT/`, with `#token=TOKEN` when given: in the fragment, which browsers never send to a server.
    static func address(host: String, port: Int, token: String?) -> String {
        "http://\(host):\(port)/" + (token.map { "#token=\($0)" } ?? "")
    }

    /// An address as it stands before `:PORT` (IPv6 in brackets).
    static func shown(_ address: String) -> String {
        address.contains(Character(":")) ? "[\(address)]" : address
    }

    /// This machine's name (for the address a wildcard listen prints).
    static func hostName() -> String? {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count) == 0 else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `ADDRESS:PORT` or `[IPv6]:PORT`.
    static func parse(_ text: String) throws -> (address: String, port: UInt16) {
        let address: Substring
        let portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            address = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(after: close)...].dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            address = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            throw ValidationError("--listen \(text): give ADDRESS:PORT, such as \(defaultListen)")
        }
        guard !address.isEmpty, let port = UInt16(portText) else {
            throw ValidationError("--listen \(text): give ADDRESS:PORT, such as \(defaultListen)")
        }
        return (String(address), port)
    }
}
