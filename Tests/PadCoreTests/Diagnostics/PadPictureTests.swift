import PadCore
import Testing

@Suite("monitor --view's picture of a pad")
struct PadPictureTests {
    static let dualSense = Capabilities(
        buttons: ButtonSet(Button.allCases.filter { ![.misc1, .paddle1, .paddle2, .paddle3, .paddle4].contains($0) }),
        axes: Axis.allCases, touchpad: true, motion: true, rumble: true, lightbar: true, playerLeds: true,
        adaptiveTriggers: true, battery: true)

    static func picture(
        _ snapshot: PadSnapshot, width: Int = 80, height: Int = 24, stickShaping: PadPicture.StickShapingPair? = nil
    ) -> PadPicture {
        PadPicture(
            snapshot: snapshot,
            context: .init(
                title: "DualSense Wireless Controller [b43f9de35e24]", capabilities: dualSense,
                reportRate: .init(
                    framesPerSecond: 250, eventsPerSecond: 1000, minimumIntervalMilliseconds: 3.9,
                    averageIntervalMilliseconds: 4, maximumIntervalMilliseconds: 4.25),
                stickShaping: stickShaping),
            width: width, height: height)
    }

    /// The left stick's box interior (5 rows of 11 cells), from the picture's rows.
    static func leftBox(_ picture: PadPicture) -> [String] {
        (7...11).map { String(picture.rows[$0].dropFirst(3).prefix(11)) }
    }

    @Test func aProfilesDeadzoneIsDrawnInTheStickBoxAndItsOutputIsShown() {
        let shaping = PadPicture.StickShapingPair(
            left: StickShaping(deadzoneFraction: 0.5), right: StickShaping(deadzoneFraction: 0.1, invertY: true))
        var pad = PadSnapshot.neutral
        pad.leftX = 9830  // 0.3 of full deflection: inside the left deadzone
        pad.rightY = 16384  // 0.5: outside the right one, inverted by the profile
        let picture = Self.picture(pad, stickShaping: shaping)
        // Cells whose centre is within 0.5 of the middle: the middle row's five around the centre, and the centre
        // cell of the rows above and below (0.5 away); the dot is over one of them, 0.3 right of the centre.
        #expect(Self.leftBox(picture) == [
            "           ",
            "     :     ",
            "   ::::o   ",
            "     :     ",
            "           ",
        ])
        let text = picture.rows.joined(separator: "\n")
        #expect(text.contains("left dz 0.50") && text.contains("right dz 0.10"))
        #expect(text.contains("x 9830 y 0"), "raw values stay")
        let shapedRightY = StickShaping(deadzoneFraction: 0.1, invertY: true).shaped(x: 0, y: 16384).y
        #expect(shapedRightY < -8000 && shapedRightY > -16384, "the deadzone's edge maps to 0, then inverted")
        #expect(text.contains("profile L 0,0 R 0,\(shapedRightY)"))
        // The left dot is not lit: the profile keeps that stick centred; the right one is.
        let leftDotColumn = 3 + 7
        #expect(!picture.lit[9][leftDotColumn])
        let rightDot = picture.rows[6...12].enumerated().compactMap { offset, row -> (Int, Int)? in
            guard let column = Array(row.utf8).dropFirst(62).firstIndex(of: UInt8(ascii: "o")) else { return nil }
            return (6 + offset, column)
        }
        #expect(rightDot.count == 1 && picture.lit[rightDot[0].0][rightDot[0].1])
    }

    @Test func withoutAProfileThereIsNoDeadzoneAndNoProfileLine() {
        var pad = PadSnapshot.neutral
        pad.leftX = 9830
        let picture = Self.picture(pad)
        #expect(Self.leftBox(picture).joined().allSatisfy { $0 == " " || $0 == "o" || $0 == "." })
        #expect(!picture.rows.joined().contains("profile") && picture.rows[5].hasPrefix("  left stick"))
        #expect(picture.lit[9][10], "a moved stick's dot is lit")
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

    @Test func aTitleOutsidePrintableASCIIKeepsEveryRowItsWidth() {
        let picture = PadPicture(
            snapshot: .neutral,
            context: .init(title: "Pad™\té", capabilities: Self.dualSense, reportRate: nil), width: 80, height: 24)
        // One '?' a byte: ™ is three bytes of UTF-8, the tab one, é two.
        #expect(picture.rows[0].hasPrefix("padbridge monitor  Pad?????? "))
        #expect(picture.rows[0].utf8.count == 80 && picture.rows[0].hasSuffix("q quits "))
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

