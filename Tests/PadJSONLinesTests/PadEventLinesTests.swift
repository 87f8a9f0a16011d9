import PadCore
import PadJSONLines
import PadTestSupport
import Testing

@Suite struct PadEventLinesTests {
    @Test(arguments: [
        (#"{"type":"button","button":"a","pressed":true}"#, PadEvent.button(.a, pressed: true)),
        (#"{"type":"button","button":"paddle4","pressed":false}"#, .button(.paddle4, pressed: false)),
        (#"{"type":"axis","axis":"leftx","value":-12000}"#, .axis(.leftx, value: -12000)),
        (#"{"type":"axis","axis":"righttrigger","value":32767}"#, .axis(.righttrigger, value: 32767)),
        (
            #"{"type":"touch","contact":0,"active":true,"x":0.5,"y":0.25}"#,
            .touch(contact: 0, TouchContact(active: true, x: 0.5, y: 0.25))
        ),
        (
            #"{"type":"touch","contact":1,"active":true,"x":0.5,"y":0.25,"surface":"right-trackpad"}"#,
            .touch(contact: 1, TouchContact(active: true, surface: .rightTrackpad, x: 0.5, y: 0.25))
        ),
        (
            #"{"type":"motion","gyro":[0,0,0.5],"accel":[0,9.81,0]}"#,
            .motion(
                MotionSample(
                    gyroRadiansPerSecond: Vector3(x: 0, y: 0, z: 0.5),
                    accelMetersPerSecondSquared: Vector3(x: 0, y: 9.81, z: 0)))
        ),
        (
            #"{"type":"battery","percent":80,"charging":false}"#,
            .battery(BatteryState(percent: 80, charging: false))
        ),
    ])
    func readsTheDocumentedLines(line: String, expected: PadEvent) throws {
        #expect(try PadEventLines.event(from: line) == expected)
    }

    @Test(arguments: [
        (#"{"type":"button","button":"q","pressed":true}"#, #"unknown button "q""#),
        (#"{"type":"button","button":"a"}"#, #"missing "pressed""#),
        (#"{"type":"button","button":"a","pressed":1}"#, "expected true or false"),
        (#"{"type":"axis","axis":"lefttrigger","value":-1}"#, "allowed 0...32767"),
        (#"{"type":"axis","axis":"leftx","value":40000}"#, "allowed -32768...32767"),
        (#"{"type":"axis","axis":"leftx","value":1.5}"#, "out of range"),
        (#"{"type":"touch","contact":2,"active":true}"#, "allowed 0 or 1"),
        (#"{"type":"touch","contact":0,"active":true,"x":1.5}"#, #""x" 1.5 is out of range"#),
        (#"{"type":"motion","gyro":[0,0]}"#, "three finite numbers"),
        (#"{"type":"motion"}"#, "needs \"gyro\""),
        (#"{"type":"battery","percent":101}"#, "allowed 0...100"),
        (#"{"type":"wiggle"}"#, #"unknown type "wiggle""#),
        (#"{"button":"a"}"#, #"missing "type""#),
        ("not json", "not valid JSON"),
        ("", "not valid JSON"),
    ])
    func explainsWhatIsWrong(line: String, fragment: String) {
        #expect {
            _ = try PadEventLines.event(from: line)
        } throws: { error in
            (error as? JSONLineError)?.message.contains(fragment) == true
        }
    }

    @Test func partialMotionAndTouchKeepTheRest() throws {
        var current = PadSnapshot.neutral
        current.motion.accelMetersPerSecondSquared = Vector3(x: 0, y: 9.81, z: 0)
        current.touches.first = TouchContact(trackingID: 3, active: true, x: 0.1, y: 0.2)
        let motion = try PadEventLines.event(from: #"{"type":"motion","gyro":[1,2,3]}"#, current: current)
        #expect(
            motion
                == .motion(
                    MotionSample(
                        gyroRadiansPerSecond: Vector3(x: 1, y: 2, z: 3),
                        accelMetersPerSecondSquared: Vector3(x: 0, y: 9.81, z: 0))))
        let lift = try PadEventLines.event(from: #"{"type":"touch","contact":0,"active":false}"#, current: current)
        #expect(lift == .touch(contact: 0, TouchContact(trackingID: 3, active: false, x: 0.1, y: 0.2)))
    }

    /// What `monitor --json` prints, `virtual` reads back to the same event.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func printedLinesReadBackToTheSameEvents(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        var old = PadSnapshot.neutral
        for _ in 0..<300 {
            var new = old
            new[Button.allCases.randomElement(using: &generator)!] = Bool.random(using: &generator)
            let axis = Axis.allCases.randomElement(using: &generator)!
            new[axis] = Int16.random(in: axis.range, using: &generator)
            new.touches[Int.random(in: 0...1, using: &generator)] = TouchContact(
                trackingID: UInt8.random(in: 0...127, using: &generator), active: Bool.random(using: &generator),
                x: Double(Int.random(in: 0...1919, using: &generator)) / 1919,
                y: Double(Int.random(in: 0...1079, using: &generator)) / 1079)
            new.motion = MotionSample(
                gyroRadiansPerSecond: Vector3(x: Double(Int.random(in: -500...500, using: &generator)) / 64, y: 0.5, z: -2),
                accelMetersPerSecondSquared: Vector3(x: 0, y: 9.80665, z: -0.125),
                timestampMicroseconds: UInt64.random(in: 0...4_000_000_000, using: &generator))
            for event in SnapshotDiff.events(from: old, to: new) {
                let line = PadEventLines.line(for: event)
                let back = try PadEventLines.event(from: line, current: old)
                #expect(closeEnough(back, event), "\(line)")
            }
            old = new
        }
    }

    private func closeEnough(_ a: PadEvent, _ b: PadEvent) -> Bool {
        switch (a, b) {
        case let (.touch(c1, t1), .touch(c2, t2)):
            return c1 == c2 && t1.active == t2.active && t1.trackingID == t2.trackingID && abs(t1.x - t2.x) < 1e-6
                && abs(t1.y - t2.y) < 1e-6
        case let (.motion(m1), .motion(m2)):
            let g1 = m1.gyroRadiansPerSecond
            let g2 = m2.gyroRadiansPerSecond
            return abs(g1.x - g2.x) < 1e-6 && abs(g1.y - g2.y) < 1e-6 && abs(g1.z - g2.z) < 1e-6
                && m1.accelMetersPerSecondSquared == m2.accelMetersPerSecondSquared
                && m1.timestampMicroseconds == m2.timestampMicroseconds
        default:
            return a == b
        }
    }

    @Test func aTrackpadsFingerNamesItsSurfaceBothWays() throws {
        let event = PadEvent.touch(contact: 0, TouchContact(trackingID: 4, active: true, surface: .leftTrackpad, x: 0.5, y: 1))
        let line = PadEventLines.line(for: event)
        #expect(line.hasSuffix(#""id":4,"surface":"left-trackpad"}"#), "\(line)")
        #expect(try PadEventLines.event(from: line) == event)
        #expect(!PadEventLines.line(for: .touch(contact: 0, TouchContact(active: true))).contains("surface"))
        #expect(throws: JSONLineError.self) {
            try PadEventLines.event(from: #"{"type":"touch","contact":0,"active":true,"surface":"middle"}"#)
        }
    }
}
