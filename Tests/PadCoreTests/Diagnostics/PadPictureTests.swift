import PadCore
import Testing

@Suite("monitor --view's picture of a pad")
struct PadPictureTests {
    static let dualSense = Capabilities(
        buttons: ButtonSet(Button.allCases.filter { ![.misc1, .paddle1, .paddle2, .paddle3, .paddle4].contains($0) }),
        axes: Axis.allCases, touchpad: true, motion: true, rumble: true, lightbar: true, playerLeds: true,
        adaptiveTriggers: true, battery: true)

    static func picture(_ snapshot: PadSnapshot, width: Int = 80, height: Int = 24) -> PadPicture {
        PadPicture(
            snapshot: snapshot,
            context: .init(
                title: "DualSense Wireless Controller [b43f9de35e24]", capabilities: dualSense,
                reportRate: .init(
                    framesPerSecond: 250, eventsPerSecond: 1000, minimumIntervalMilliseconds: 3.9,
                    averageIntervalMilliseconds: 4, maximumIntervalMilliseconds: 4.25)),
            width: width, height: height)
    }

    @Test func aHeldButtonIsBracketedAndLitAndOthersAreNot() {
        var pad = PadSnapshot.neutral
        pad.buttons.insert(.a)
        pad.buttons.insert(.dpup)
        let text = Self.picture(pad).rows.joined(separator: "\n")
        #expect(text.contains("[A]") && text.contains("[up]"))
        #expect(text.contains(" B ") && !text.contains("[B]") && !text.contains("[dn]"))
        let picture = Self.picture(pad)
        let row = picture.rows.firstIndex { $0.contains("[A]") }!
        let column = picture.rows[row].utf8.firstIndex(of: UInt8(ascii: "A"))!
        let offset = picture.rows[row].utf8.distance(from: picture.rows[row].utf8.startIndex, to: column)
        #expect(picture.lit[row][offset], "A is lit")
        #expect(!picture.lit[row][offset - 1], "its bracket is not")
    }

    @Test func sticksShowTheirValuesAndTheDotAtTheEdge() {
        var pad = PadSnapshot.neutral
        pad.leftX = .max
        pad.rightY = .min
        let picture = Self.picture(pad)
        let text = picture.rows.joined(separator: "\n")
        #expect(text.contains("x 32767 y 0") && text.contains("x 0 y -32768"))
        // The left stick's box spans columns 2...14: the dot sits against its right side, on the middle row.
        #expect(picture.rows[9].dropFirst(12).prefix(3) == " o|")
        // The right stick's dot: top row of its box, centre column.
        #expect(picture.rows[7].dropFirst(62).prefix(13) == "|     o     |")
    }

    @Test func triggersAreBarsWithTheirValues() {
        var pad = PadSnapshot.neutral
        pad.rightTrigger = .max / 2
        let text = Self.picture(pad).rows.joined(separator: "\n")
        #expect(text.contains("LT [....................] 0.00"))
        #expect(text.contains("RT [##########..........] 0.50"))
    }

    @Test func touchContactsAndMotionAndBatteryAndRate() {
        var pad = PadSnapshot.neutral
        pad.touches.first = TouchContact(trackingID: 7, active: true, x: 0.5, y: 0.25)
        pad.motion.gyroRadiansPerSecond = Vector3(x: 1.5, y: 0, z: -0.25)
        pad.battery = BatteryState(percent: 80, charging: true)
        let text = Self.picture(pad).rows.joined(separator: "\n")
        #expect(text.contains("#0 id 7 (0.50, 0.25)"))
        #expect(text.contains("x   +1.50") && text.contains("z   -0.25"))
        #expect(text.contains("battery 80 % charging"))
        #expect(text.contains("reports 250.0/s  interval min/avg/max 3.90/4.00/4.25 ms"))
    }

    @Test func everyRowIsTheWindowsWidth() {
        let picture = Self.picture(.neutral, width: 100, height: 30)
        #expect(picture.rows.count == 30 && picture.rows.allSatisfy { $0.utf8.count == 100 })
        #expect(picture.lit.allSatisfy { $0.count == 100 })
    }

    @Test(arguments: [(79, 24), (80, 23), (20, 5)])
    func aSmallWindowIsToldWhatItNeeds(width: Int, height: Int) {
        let text = Self.picture(.neutral, width: width, height: height).rows.joined()
        #expect(text.contains(width >= 60 ? "needs a window of at least 80x24" : "padbridge monitor --view needs"))
        #expect(!text.contains("left stick"))
    }
}

