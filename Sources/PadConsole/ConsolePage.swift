public import PadNet
import PadNetLinux
import PadCore

/// The console's HTML. The page itself is a shell with no host data (anyone may fetch it); its script
/// (`ConsoleAssets.script`) fetches the host fragment, rendered here from the serve's `status` answer, with the token,
/// again whenever a `status` event says something changed (so the HTML is written in one place, here). The pads'
/// drawings are the script's, fed by the WebSocket's `live` events.
public enum ConsolePage {
    /// The page: no host data, nothing secret; the script fills it (or says why it cannot: no token, a wrong one).
    public static let shell = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>padbridge console</title>
        <link rel="stylesheet" href="/console.css">
        </head>
        <body>
        <header><h1 id="title">padbridge console</h1><p id="serve-state" role="status"></p><p id="notice" role="alert"></p></header>
        <main>
        <div id="host"><p id="loading">Loading…</p></div>
        <section id="pads" aria-labelledby="pads-heading">
        <h2 id="pads-heading">Pads</h2>
        <p id="no-pads">No pad is forwarded now.</p>
        <div id="pad-list"></div>
        </section>
        </main>
        <script src="/console.js"></script>
        </body>
        </html>

        """

    /// The host's facts, warnings, pairing window and clients.
    public static func hostFragment(status: HostStatus?, problem: String?) -> String {
        guard let status else {
            return """
                <section id="no-serve" class="warning"><h2>No serve answers</h2><p>\(escaped(problem ?? "unknown"))</p>\
                <p>Start the host with <code>padbridge serve</code> (or <code>sudo systemctl start padbridge-serve</code>); \
                this page follows it as soon as it runs.</p></section>
                """
        }
        var html = """
            <section id="host-facts" aria-label="Host" data-name="\(escaped(status.name))">
            <dl>
            <dt>Key</dt><dd><code>\(escaped(status.key))</code></dd>
            <dt>Listening</dt><dd>\(escaped(status.listening))</dd>
            <dt>Announcement</dt><dd>\(escaped(status.announcement))</dd>
            <dt>Up for</dt><dd id="uptime">\(duration(seconds: status.uptimeSeconds))</dd>
            </dl>
            </section>

            """
        let problems = status.devices.filter { !$0.usable }
        if !problems.isEmpty {
            html += #"<section id="devices" class="warning"><h2>Clients' pads cannot be made</h2><ul>"#
            for device in problems {
                html += "<li><code>\(escaped(device.path))</code>: \(escaped(device.finding))"
                if let fix = device.fix { html += "; fix: <code>\(escaped(fix))</code>" }
                html += "</li>"
            }
            html += "</ul></section>\n"
        }
        html += pairing(status.pairing, hostName: status.name)
        html += clients(status.clients)
        return html
    }

    static func pairing(_ window: PairingWindowStatus, hostName: String) -> String {
        if window.open, let code = window.code {
            let left = window.secondsLeft.map { " (<span id=\"pairing-left\">\($0)</span> s left)" } ?? ""
            return """
                <section id="pairing" aria-labelledby="pairing-heading"><h2 id="pairing-heading">Pairing</h2>
                <p>The pairing window is open\(left). On the client, run <code>padbridge pair \(escaped(hostName)) CODE</code> \
                with this code:</p>
                <p class="code"><strong id="pairing-code">\(escaped(code))</strong></p>
                <form method="post" action="/pairing/close"><button id="close-pairing">Close the window</button></form>
                </section>

                """
        }
        return """
            <section id="pairing" aria-labelledby="pairing-heading"><h2 id="pairing-heading">Pairing</h2>
            <p>The pairing window is closed: no new client can pair.</p>
            <form method="post" action="/pairing/open"><button id="open-pairing">Open pairing</button></form>
            </section>

            """
    }

    static func clients(_ clients: [HostClientStatus]) -> String {
        guard !clients.isEmpty else {
            return #"<section id="clients"><h2>Clients</h2><p>No client is paired yet: open pairing, then run "#
                + "<code>padbridge pair</code> on the client.</p></section>\n"
        }
        var html = """
            <section id="clients"><h2>Clients</h2>
            <table>
            <thead><tr><th>Client</th><th>State</th><th>Address</th><th>Last heard</th><th>Round trip</th>\
            <th>Loss to host / to client</th><th>Datagrams in / out a second</th><th>Pads</th><th></th></tr></thead>
            <tbody>

            """
        for client in clients {
            let state = client.connected ? "connected" : (client.address == nil ? "not connected" : "link lost")
            html += """
                <tr class="client" data-key="\(escaped(client.key))">\
                <td><strong>\(escaped(client.name))</strong><br><code class="key">\(escaped(client.key))</code>\
                <br><span class="paired">\(paired(client.pairedSinceEpochSeconds))</span></td>\
                <td class="state \(client.connected ? "connected" : "")">\(state)</td>\
                <td>\(escaped(client.address ?? "–"))</td>\
                <td class="heard">\(client.lastHeardMillisecondsAgo.map { "\($0) ms ago" } ?? "–")</td>\
                <td class="round-trip">\(client.roundTripMicroseconds.map(milliseconds) ?? "–")</td>\
                <td class="loss">\(loss(client))</td>\
                <td class="rate">–</td>\
                <td>\(pads(client.pads))</td>\
                <td><form method="post" action="/clients/revoke"><input type="hidden" name="client" \
                value="\(escaped(client.key))"><button class="revoke" data-client="\(escaped(client.name))">Revoke</button>\
                </form></td></tr>

                """
        }
        return html + "</tbody></table></section>\n"
    }

    static func paired(_ epochSeconds: UInt64?) -> String {
        epochSeconds.map { "paired " + UTCDateText.readable(epochSeconds: $0) } ?? "paired (date not recorded)"
    }

    /// `2.5 % / 0.0 %`, `–` for a figure not known yet.
    static func loss(_ client: HostClientStatus) -> String {
        func percent(_ value: Double?) -> String {
            guard let value else { return "–" }
            let tenths = Int((value * 10).rounded())
            return "\(tenths / 10).\(tenths % 10) %"
        }
        return "\(percent(client.lossToHostPercent)) / \(percent(client.lossToClientPercent))"
    }

    static func pads(_ pads: [HostPadStatus]) -> String {
        guard !pads.isEmpty else { return "none" }
        return "<ul class=\"client-pads\">" + pads.map { pad in
            var item = "<li data-pad=\"\(escaped(pad.id))\">\(escaped(pad.name)) <span class=\"kind\">\(escaped(pad.kind))</span>"
            switch pad.state {
            case .live, .lingering:
                let nodes = (pad.eventNodes + (pad.hidraw.map { [$0] } ?? [])).joined(separator: ", ")
                item += " → \(escaped(pad.virtualKind ?? "?")) <code>\(escaped(nodes))</code> \(pad.state.rawValue)"
            case .notForwarded:
                item += " <span class=\"problem\">not forwarded: \(escaped(pad.problem ?? "unknown"))</span>"
            }
            return item + "</li>"
        }.joined() + "</ul>"
    }

    /// The refusal page: what is wrong and where the right address comes from.
    public static func refused(_ reason: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>padbridge console: refused</title>
        <link rel="stylesheet" href="/console.css"></head>
        <body><main><h1>Refused</h1><p id="refusal">\(escaped(reason))</p>
        <p>The console's address, with its token, is printed by <code>padbridge console</code> when it starts on a
        terminal, and by <code>padbridge console --print-url</code>; the token is in the file <code>console-token</code> in
        padbridge's config directory.</p></main></body></html>

        """
    }

    /// A request the serve refused (revoke an unknown client, ...), with the way back.
    public static func failed(_ what: String, _ error: HostControlError) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>padbridge console: \(escaped(what)) failed</title>
        <link rel="stylesheet" href="/console.css"></head>
        <body><main><h1>\(escaped(what)) failed</h1><p id="failure">\(escaped(error.description))</p>
        <p><a href="/">Back to the console</a></p></main></body></html>

        """
    }

    static func duration(seconds: UInt64) -> String {
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3_600 { return "\(seconds / 60) min \(seconds % 60) s" }
        return "\(seconds / 3_600) h \(seconds % 3_600 / 60) min"
    }

    static func milliseconds(_ microseconds: UInt64) -> String {
        "\(microseconds / 1_000).\(microseconds % 1_000 / 100) ms"
    }

    /// Text made safe for HTML element content and quoted attribute values.
    public static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
