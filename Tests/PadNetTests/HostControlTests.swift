import PadCore
import PadNet
import PadNetLinux
import Testing

/// The control socket's protocol (issue 29): requests read from lines, answers written as lines.
@Suite struct HostControlTests {
    @Test func requestsRoundTripThroughTheirLines() {
        let requests: [HostControlRequest] = [.status, .clients, .revoke(client: "deck \"2\""), .openPairing, .closePairing, .subscribe([.status]), .subscribe([.status, .live])]
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

    @Test func subscribeNamesItsEventsAndRefusesUnknownOnes() {
        #expect((try? HostControlRequest.parse(#"{"id":1,"request":"subscribe"}"#).request.get()) == .subscribe([.status]))
        #expect((try? HostControlRequest.parse(#"{"id":1,"request":"subscribe","events":["live"]}"#).request.get()) == .subscribe([.live]))
        guard case let .failure(error) = HostControlRequest.parse(#"{"id":2,"request":"subscribe","events":["live","pads"]}"#).request else {
            Issue.record("an unknown event was taken")
            return
        }
        #expect(error.description == #"unknown event "pads"; known: status, live"#)
    }

    @Test func aLivePadCarriesWhatTheDrawingNeeds() throws {
        var snapshot = PadSnapshot(leftX: -32768, rightTrigger: 32767)
        snapshot.buttons.insert(.a)
        snapshot.buttons.insert(.dpup)
        snapshot.touches[1] = TouchContact(trackingID: 3, active: true, x: 0.25, y: 0.5)
        let pad = HostLivePad(
            client: "laptop", id: "386916c933a1", name: "Wireless Controller", kind: "dualsense", snapshot: snapshot,
            feedback: Feedback(rumble: Rumble(strong: 0.5, weak: 0), lightbar: LightbarColor(red: 0, green: 0x80, blue: 0xff)),
            lingering: false)
        #expect(pad.buttons == ["a", "dpup"])
        #expect(pad.axes == ["leftx": -32768, "lefty": 0, "rightx": 0, "righty": 0, "lefttrigger": 0, "righttrigger": 32767])
        #expect(pad.touches == [HostLiveTouch(x: 0.25, y: 0.5)])
        #expect(pad.rumble == HostLiveRumble(strong: 0.5, weak: 0))
        #expect(pad.lightbar == "#0080ff")
        let line = HostControlReply.event("live", HostLiveState(pads: [pad], clients: []))
        #expect(line.hasPrefix(##"{"event":"live","live":{"clients":[],"pads":[{"axes":{"##))
        #expect(try HostControlReply.payload(line, "live", as: HostLiveState.self).get().pads == [pad])
        // Never set: no rumble, no lightbar (not "off").
        let plain = HostLivePad(client: "c", id: "i", name: "n", kind: "xbox360", snapshot: .neutral, feedback: Feedback(), lingering: true)
        #expect(plain.rumble == nil && plain.lightbar == nil && plain.buttons.isEmpty && plain.touches.isEmpty)
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
