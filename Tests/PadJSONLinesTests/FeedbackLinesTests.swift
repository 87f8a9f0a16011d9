import PadCore
import PadJSONLines
import Testing

@Suite struct FeedbackLinesTests {
    @Test(arguments: [
        (FeedbackEvent.rumble(Rumble(strong: 0.5, weak: 0.25)), #"{"type":"rumble","strong":0.5,"weak":0.25}"#),
        (.rumble(.off), #"{"type":"rumble","strong":0,"weak":0}"#),
        (.rumble(Rumble(strong: 0.5, weak: 0, leftTrigger: 0.25, rightTrigger: 0)),
         #"{"type":"rumble","strong":0.5,"weak":0,"leftTrigger":0.25,"rightTrigger":0}"#),
        (.lightbar(LightbarColor(red: 255, green: 0, blue: 64)), #"{"type":"lightbar","red":255,"green":0,"blue":64}"#),
        (.playerLeds(mask: 4), #"{"type":"playerLeds","mask":4}"#),
        (.micLed(on: true), #"{"type":"micLed","on":true}"#),
        (.trigger(.left, .off), #"{"type":"trigger","trigger":"left","effect":{"mode":"off"},"raw":"0500000000000000000000"}"#),
    ])
    func printsTheDocumentedLines(event: FeedbackEvent, line: String) throws {
        #expect(FeedbackLines.line(for: event) == line)
        #expect(try FeedbackLines.event(from: line) == event)
    }

    @Test func triggerMotorsAreOptionalOnInputAndOutOfRangeOnesAreRefused() throws {
        #expect(try FeedbackLines.event(from: #"{"type":"rumble","strong":1,"weak":1,"rightTrigger":0.5}"#)
            == .rumble(Rumble(strong: 1, weak: 1, rightTrigger: 0.5)))
        #expect(throws: JSONLineError.self) {
            try FeedbackLines.event(from: #"{"type":"rumble","strong":1,"weak":1,"leftTrigger":2}"#)
        }
    }

    @Test func triggerLinesCarryTheBlockAndReadBackFromIt() throws {
        let effect = try TriggerEffect.weapon(startZone: 2, endZone: 6, strength: 8)
        let line = FeedbackLines.line(for: .trigger(.right, effect))
        #expect(line.contains(#""mode":"weapon""#))
        #expect(line.contains(#""raw":"\#(effect.block.hex)""#))
        #expect(try FeedbackLines.event(from: line) == .trigger(.right, effect))
    }

    @Test func rumbleFractionsSurviveTheLine() throws {
        for byte in 0...255 {
            let rumble = Rumble(strong: Double(byte) / 255, weak: Double(255 - byte) / 255)
            let back = try FeedbackLines.event(from: FeedbackLines.line(for: .rumble(rumble)))
            guard case let .rumble(read) = back else {
                Issue.record("not a rumble: \(back)")
                return
            }
            #expect(Rumble.byte(read.strong) == UInt8(byte))
            #expect(Rumble.byte(read.weak) == UInt8(255 - byte))
        }
    }

    @Test(arguments: [
        (#"{"type":"rumble","strong":2,"weak":0}"#, "allowed 0...1"),
        (#"{"type":"lightbar","red":256,"green":0,"blue":0}"#, "allowed 0...255"),
        (#"{"type":"trigger","trigger":"middle","raw":"05"}"#, #"unknown trigger "middle""#),
        (#"{"type":"trigger","trigger":"left","raw":"05"}"#, "22 hex digits"),
        (#"{"type":"playerLeds","mask":32}"#, "allowed 0...31"),
    ])
    func rejectsWhatIsOutOfRange(line: String, fragment: String) {
        #expect {
            _ = try FeedbackLines.event(from: line)
        } throws: { error in
            (error as? JSONLineError)?.message.contains(fragment) == true
        }
    }
}
