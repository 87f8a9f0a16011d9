import ArgumentParser
import Dispatch
import FlyingFox
import Glibc
import PadConsole
import PadNet
import Synchronization

struct ConsoleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "A web page for the running host: pairing, clients (revoke), their pads drawn live, the link.",
        discussion: """
            A separate process that talks to the serve only through its control socket (found as `status` finds \
            it). It prints the page's address with a token (http://127.0.0.1:48101/?token=...); the token is kept in \
            console-token in the config directory (mode 0600; delete it for a new one) and every request needs it. \
            Changes (pairing, revoke) are taken only from the console's own page. It listens on loopback unless \
            --listen names another address; then anybody who can reach it and has the token can pair and revoke. \
            The systemd user unit padbridge-console.service runs it (systemctl --user enable --now \
            padbridge-console).
            """)

    static let defaultListen = "127.0.0.1:48101"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where the page listens, ADDRESS:PORT or [IPv6]:PORT (default \(defaultListen); port 0: any free port).",
            valueName: "address:port"))
    var listen: String?

    @OptionGroup var control: ControlSocketOptions

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let log = ConsoleServerLog(logger: global.makeLogger(label: "padbridge.console"))
        let (address, port) = try Self.parse(listen ?? Self.defaultListen)
        let target = try control.target()
        // The token is the console user's, in their own config directory (the system service's is root's).
        let tokenDirectory = control.system ? try TrustStore.resolveDirectory(nil) : try control.store().directory
        let token: String
        do { token = try ConsoleToken.loadOrCreate(inDirectory: tokenDirectory) } catch { throw CommandFailure("\(error)") }

        let broadcast = ConsoleBroadcast()
        let host = ControlSocketConsoleHost(path: target.path, whose: target.whose)
        guard host.follow(into: broadcast) else { throw CommandFailure("cannot start the thread that follows the serve") }
        let handler = ConsoleRequestHandler(access: ConsoleAccess(token: token), host: host, broadcast: broadcast)
        let server: HTTPServer
        do {
            server = address.contains(":")
                ? HTTPServer(address: try .inet6(ip6: address, port: port), logger: log, handler: handler)
                : HTTPServer(address: try .inet(ip4: address, port: port), logger: log, handler: handler)
        } catch {
            throw CommandFailure("--listen \(address): not an IP address (\(error))")
        }

        let failure = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let output = LineOutput.standardOutput
        let warnings = LineOutput.standardError
        let isLoopback = address.hasPrefix("127.") || address == "::1"
        Task.detached {
            let running = Task { try await server.run() }
            do {
                try await server.waitUntilListening(timeout: 5)
                let actualPort: UInt16 =
                    switch await server.listeningAddress {
                    case let .ip4(_, port), let .ip6(_, port): port
                    default: port
                    }
                let shownAddress = address.contains(":") ? "[\(address)]" : address
                let shownHost = isLoopback || address == "0.0.0.0" || address == "::" ? Self.hostName(for: shownAddress, isLoopback: isLoopback) : shownAddress
                if !isLoopback {
                    warnings.write("""
                        padbridge: WARNING: the console listens on \(shownAddress):\(actualPort), not only on loopback: \
                        anyone on that network who has the token can pair clients and revoke them. The page is plain \
                        HTTP (the token crosses the network readable); prefer the default, or an SSH tunnel: \
                        ssh -L 48101:127.0.0.1:48101 THIS-HOST
                        """)
                }
                output.write("padbridge: console for \(target.whose) at http://\(shownHost):\(actualPort)/?token=\(token)")
                output.write("padbridge: its serve's control socket: \(target.path); the token is in \(tokenDirectory)/\(ConsoleToken.fileName)")
                try await running.value
            } catch {
                failure.withLock { $0 = "the console cannot listen on \(address):\(port): \(error)" }
                running.cancel()
            }
            done.signal()
        }
        // SIGINT and SIGTERM end it cleanly (status 0): it holds nothing a person would miss, the serve keeps running.
        let endings = [SIGINT, SIGTERM].map { (number: Int32) -> any DispatchSourceSignal in
            _ = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                LineOutput.standardError.write("padbridge: console stopped")
                Glibc.exit(0)
            }
            source.resume()
            return source
        }
        done.wait()
        endings.forEach { $0.cancel() }
        if let problem = failure.withLock({ $0 }) {
            throw CommandFailure(problem + (port == 48101 ? "; is another console running? Give another --listen port" : ""))
        }
    }

    /// The address as a person types it: loopback as `127.0.0.1`, a wildcard as this machine's name.
    static func hostName(for address: String, isLoopback: Bool) -> String {
        if isLoopback { return address }
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count) == 0 else { return address }
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
