import PadNet
import Testing

/// The control socket's protocol (issue 29): requests read from lines, answers written as lines.
@Suite struct HostControlTests {
    @Test func requestsRoundTripThroughTheirLines() {
        let requests: [HostControlRequest] = [.status, .clients, .revoke(client: "deck \"2\""), .openPairing, .closePairing, .subscribe]
        for (index, request) in requests.enumerated() {
            let parsed = HostControlRequest.parse(Substring(request.line(id: index)))
            #expect(parsed.id == index)
            #expect((try? parsed.request.get()) == request, "\(request.line(id: index))")
        }
    }

    @Test func aLineThatIsNotARequestSaysWhatIsExpected() {
        let cases: [(String, Int?, String)] = [
            ("junk", nil, "one JSON object a line"),
            (#"{"id":4,"request":"reboot"}"#, 4, "unknown request \"reboot\"; known: status, clients, revoke"),
            (#"{"id":5,"request":"revoke"}"#, 5, "revoke needs \"client\""),
            (#"{"id":6}"#, nil, "one JSON object a line"),
        ]
        for (line, id, message) in cases {
            let parsed = HostControlRequest.parse(Substring(line))
            #expect(parsed.id == id, "\(line)")
            guard case let .failure(error) = parsed.request else {
                Issue.record("\(line) parsed")
                continue
            }
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test func answersCarryTheIdAndThePayloadOrTheError() throws {
        let window = PairingWindowStatus(open: true, code: "ZW0AM-N8J6H-B7H6N", secondsLeft: 299)
        let success = HostControlReply.success(id: 7, "pairing", window)
        #expect(success == #"{"id":7,"ok":true,"pairing":{"code":"ZW0AM-N8J6H-B7H6N","open":true,"secondsLeft":299}}"#)
        #expect(try HostControlReply.payload(success, "pairing", as: PairingWindowStatus.self).get() == window)
        let failure = HostControlReply.failure(id: nil, HostControlError("no paired client is named \"tv\""))
        #expect(failure == #"{"ok":false,"error":"no paired client is named \"tv\""}"#)
        #expect(throws: HostControlError("no paired client is named \"tv\"")) {
            try HostControlReply.payload(failure, "revoked", as: [String: String].self).get()
        }
        let event = HostControlReply.event("status", ["a": 1])
        #expect(event == #"{"event":"status","status":{"a":1}}"#)
    }

    @Test func eachConfigDirectoryHasItsOwnSocket() {
        let user = HostControlSocketPath.path(configDirectory: "/home/u/.config/padbridge", runtimeDirectory: "/run/user/1000")
        #expect(user.hasPrefix("/run/user/1000/padbridge/control-") && user.hasSuffix(".socket"))
        #expect(user == HostControlSocketPath.path(configDirectory: "/home/u/.config/padbridge", runtimeDirectory: "/run/user/1000"))
        #expect(user != HostControlSocketPath.path(configDirectory: "/tmp/other", runtimeDirectory: "/run/user/1000"))
        let system = HostControlSocketPath.path(configDirectory: "/var/lib/padbridge", runtimeDirectory: nil)
        #expect(system.hasPrefix("/run/padbridge-serve/control-"), "not in /run/padbridge, the hiding service's")
        #expect(user.count - "/run/user/1000/padbridge/control-.socket".count == 12)
        // One directory, however it is spelled (serve and status may run from different working directories).
        let tmp = HostControlSocketPath.path(configDirectory: "/tmp", runtimeDirectory: "/run/user/1000")
        #expect(HostControlSocketPath.path(configDirectory: "/tmp/./", runtimeDirectory: "/run/user/1000") == tmp)
        #expect(HostControlSocketPath.path(configDirectory: "/var/../tmp", runtimeDirectory: "/run/user/1000") == tmp)
    }
}
