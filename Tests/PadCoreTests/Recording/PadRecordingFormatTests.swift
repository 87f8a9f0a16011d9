import PadCore
import PadTestSupport
import Testing

@Suite("Recording format: golden text, round trips, errors with their line")
struct PadRecordingFormatTests {
    static let dualSense = PadRecording(
        identity: RecordedPadIdentity(
            id: "b43f9de35e24", name: "DualSense Wireless Controller", kind: .dualSense, bus: .bluetooth,
            vendor: 0x054C, product: 0x0CE6, version: 0x8100, serial: "e2:4c:82:d3:87:c8"),
        evdevNodes: [
            RecordedEvdevNode(
                index: 0, role: "pad", path: "/dev/input/event3", name: "DualSense Wireless Controller", bus: 5,
                vendor: 0x054C, product: 0x0CE6, version: 0x8100, phys: nil, uniq: "e2:4c:82:d3:87:c8",
                codes: [1: [304, 305], 3: [0]],
                absoluteInfo: [0: EvdevAbsoluteInfo(value: 128, minimum: 0, maximum: 255, flat: 0)]),
            RecordedEvdevNode(
                index: 2, side: .virtual, role: "motion", path: "/dev/input/event9", name: "Motion = 100%", bus: 6,
                vendor: 1, product: 2, version: 3, properties: [6],
                absoluteInfo: [3: EvdevAbsoluteInfo(value: -3, minimum: -32768, maximum: 32767, fuzz: 3, flat: 0, resolution: 1024)]),
        ],
        hidrawNodes: [
            RecordedHidrawNode(
                index: 1, path: "/dev/hidraw0", reportDescriptor: [0x05, 0x01, 0x09, 0x05],
                featureReports: [0x09: [0x09, 0xC8, 0x87], 0x05: [0x05, 0xFD]])
        ],
        entries: [
            .evdev(microseconds: 0, node: 0, type: 1, code: 304, value: 1),
            .evdev(microseconds: 0, node: 0, type: 0, code: 0, value: 0),
            .hidrawInput(microseconds: 1500, node: 1, report: [0x31, 0xA1, 0x80]),
            .feedback(microseconds: 2000, side: .physical, line: #"{"type":"rumble","strong":0.5,"weak":0.25}"#),
            .evdev(microseconds: 4000, node: 2, type: 3, code: 3, value: -120),
        ])

    static let golden = """
        padbridge-recording 1
        pad id=b43f9de35e24 kind=dualSense bus=bluetooth vendor=054c product=0ce6 version=8100 serial=e2:4c:82:d3:87:c8 name=DualSense%20Wireless%20Controller
        evdev 0 side=physical role=pad path=/dev/input/event3 bus=0005 vendor=054c product=0ce6 version=8100 uniq=e2:4c:82:d3:87:c8 name=DualSense%20Wireless%20Controller
        evdev-codes 0 1 304 305
        evdev-codes 0 3 0
        evdev-abs 0 0 value=128 min=0 max=255 fuzz=0 flat=0 resolution=0
        evdev 2 side=virtual role=motion path=/dev/input/event9 bus=0006 vendor=0001 product=0002 version=0003 name=Motion%20%3D%20100%25
        evdev-props 2 6
        evdev-abs 2 3 value=-3 min=-32768 max=32767 fuzz=3 flat=0 resolution=1024
        hidraw 1 side=physical path=/dev/hidraw0 descriptor=05010905
        hidraw-feature 1 5 05fd
        hidraw-feature 1 9 09c887
        e 0 0 1 304 1
        e 0 0 0 0 0
        r 1500 1 31a180
        f 2000 physical {"type":"rumble","strong":0.5,"weak":0.25}
        e 4000 2 3 3 -120

        """

    @Test func writesTheDocumentedText() {
        #expect(PadRecordingFormat.text(of: Self.dualSense) == Self.golden)
    }

    /// A feedback line is the rest of its line: each CR or LF inside one becomes a space (a CRLF is one Character, but two scalars).
    @Test func aFeedbackLineStaysOneLine() {
        #expect(PadRecordingFormat.line(.feedback(microseconds: 7, side: .virtual, line: "a\r\nb\nc")) == "f 7 virtual a  b c\n")
    }

    @Test func readsTheDocumentedText() throws {
        #expect(try PadRecordingFormat.recording(from: Self.golden) == Self.dualSense)
    }

    @Test func commentsBlankLinesAndCRLFAreIgnored() throws {
        let text = "# recorded by hand\r\n\r\n" + Self.golden.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try PadRecordingFormat.recording(from: text) == Self.dualSense)
    }

    @Test func randomRecordingsRoundTrip() throws {
        var random = SplitMix64(seed: 0x2EC0_2D1A6)
        for _ in 0..<300 {
            let recording = Self.randomRecording(&random)
            let text = PadRecordingFormat.text(of: recording)
            let again = try PadRecordingFormat.recording(from: text)
            #expect(again == recording, "\(text)")
            if again != recording { return }
        }
    }

    @Test(arguments: [
        ("", 1, "not a padbridge recording"),
        ("padbridge-recording 2\n", 1, "format version 2"),
        ("evemu 1\n", 1, "must start with"),
        ("padbridge-recording 1\n", 1, "no `pad` line"),
        ("padbridge-recording 1\npad id=a kind=dualSense bus=usb vendor=054c product=0ce6 version=1\n", 2, "missing name="),
        ("padbridge-recording 1\npad id=a kind=ps5 bus=usb vendor=1 product=1 version=1 name=x\n", 2, "kind must be"),
        ("padbridge-recording 1\npad id=a kind=generic bus=usb vendor=1 product=1 version=1 name=x\ne 5 0 1 304 1\n", 3,
         "not declared"),
        ("padbridge-recording 1\npad id=a kind=generic bus=usb vendor=1 product=1 version=1 name=x\n"
            + "evdev 0 side=physical role=pad path=/e bus=3 vendor=1 product=2 version=3 name=p\ne 9 0 1 304 1\ne 5 0 1 304 0\n",
         5, "goes back"),
        ("padbridge-recording 1\npad id=a kind=generic bus=usb vendor=1 product=1 version=1 name=x\n"
            + "evdev 0 side=physical role=pad path=/e bus=3 vendor=1 product=2 version=3 name=p\ne 9 0 1 304\n", 4,
         "expected `e MICROSECONDS"),
        ("padbridge-recording 1\npad id=a kind=generic bus=usb vendor=1 product=1 version=1 name=x%4\n", 2, "broken %XX"),
        ("padbridge-recording 1\npad id=a kind=generic bus=usb vendor=1 product=1 version=1 name=x\n"
            + "hidraw 0 side=physical path=/h descriptor=050\n", 3, "hex digits"),
        ("padbridge-recording 1\npad id=a kind=generic bus=usb vendor=1 product=1 version=1 name=x\n"
            + "hidraw 0 side=physical path=/h descriptor=0501\nhidraw-feature 0 5 0901\n", 4, "starts with its ID"),
    ])
    func brokenTextNamesItsLine(text: String, line: Int, problem: String) {
        #expect {
            try PadRecordingFormat.recording(from: text)
        } throws: { error in
            guard let error = error as? TextLineError else { return false }
            return error.line == line && error.problem.contains(problem)
        }
    }

    /// A recording cut anywhere (a full disk, a killed recorder) reads as the part before the cut, or an error
    /// naming the line where the cut fell: never a trap.
    @Test func everyTruncationReadsOrNamesALine() {
        let bytes = Array(Self.golden.utf8)
        for length in 0..<bytes.count {
            let text = String(decoding: bytes.prefix(length), as: UTF8.self)
            do {
                let recording = try PadRecordingFormat.recording(from: text)
                #expect(recording.entries.count <= Self.dualSense.entries.count)
            } catch {
                #expect(error.line >= 1 && error.line <= 18, "cut at \(length): \(error)")
            }
        }
    }

    @Test func randomByteFlipsGiveARecordingOrATypedError() {
        var random = SplitMix64(seed: 0xF11_95)
        let bytes = Array(Self.golden.utf8)
        for _ in 0..<3000 {
            var mutated = bytes
            for _ in 0..<(1 + Int(random.next() % 4)) {
                mutated[Int(random.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            if let recording = try? PadRecordingFormat.recording(from: String(decoding: mutated, as: UTF8.self)) {
                #expect(
                    (try? PadRecordingFormat.recording(from: PadRecordingFormat.text(of: recording))) == recording)
            }
        }
    }

    static func randomRecording(_ random: inout SplitMix64) -> PadRecording {
        func text() -> String {
            String((0..<Int(random.next() % 12)).map { _ in
                Character(Unicode.Scalar(UInt8(truncatingIfNeeded: random.next() % 0x7F + 1)))
            }) + (random.next() % 4 == 0 ? "é =%" : "")
        }
        let evdevCount = Int(random.next() % 3)
        let evdev = (0..<evdevCount).map { index in
            RecordedEvdevNode(
                index: index, side: random.next() % 2 == 0 ? .physical : .virtual, role: "pad", path: text(),
                name: text(), bus: UInt16(truncatingIfNeeded: random.next()), vendor: UInt16(truncatingIfNeeded: random.next()),
                product: 1, version: 2, phys: random.next() % 2 == 0 ? text() : nil, uniq: nil,
                properties: random.next() % 2 == 0 ? [0, 6] : [],
                codes: [1: [304, 305, 310], 3: [0, 1]],
                absoluteInfo: [1: EvdevAbsoluteInfo(
                    value: Int32(truncatingIfNeeded: random.next()), minimum: -5, maximum: Int32(truncatingIfNeeded: random.next()))])
        }
        let hidraw = random.next() % 2 == 0
            ? [RecordedHidrawNode(index: 10, path: text(), reportDescriptor: (0..<Int(random.next() % 40)).map { _ in
                UInt8(truncatingIfNeeded: random.next()) }, featureReports: random.next() % 2 == 0 ? [5: [5, 1, 2], 0x20: [0x20]] : [:])]
            : []
        var time: Int64 = 0
        var entries: [RecordedEntry] = []
        for _ in 0..<Int(random.next() % 30) {
            time += Int64(random.next() % 5000)
            switch random.next() % 3 {
            case 0 where evdevCount > 0:
                entries.append(.evdev(
                    microseconds: time, node: Int(random.next() % UInt64(evdevCount)), type: UInt16(random.next() % 0x20),
                    code: UInt16(random.next() % 0x300), value: Int32(truncatingIfNeeded: random.next())))
            case 1 where !hidraw.isEmpty:
                entries.append(.hidrawInput(microseconds: time, node: 10, report: (0..<(1 + Int(random.next() % 78))).map { _ in
                    UInt8(truncatingIfNeeded: random.next()) }))
            default:
                entries.append(.feedback(microseconds: time, side: .virtual, line: String(String.UnicodeScalarView(text().unicodeScalars.filter { $0 != "\n" && $0 != "\r" }))))
            }
        }
        return PadRecording(
            identity: RecordedPadIdentity(
                id: text(), name: text(), kind: ControllerKind.allCases[Int(random.next() % 7)], bus: .usb, vendor: 1,
                product: 2, version: 3, serial: random.next() % 2 == 0 ? text() : nil),
            evdevNodes: evdev, hidrawNodes: hidraw, entries: entries)
    }
}
