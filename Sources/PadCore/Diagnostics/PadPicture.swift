/// A picture of a whole pad on a character grid, for `monitor --view`: sticks as a dot in their box with their raw
/// values, triggers as bars, every button (lit while held, and bracketed, so the picture reads the same without
/// colour: `[A]` held, ` A ` not), the d-pad, touchpad contacts, gyro and accelerometer, battery, report rate.
/// With a profile's stick shaping, each stick box also shows its deadzone (`:` cells, the dot's ring within which
/// the stick reads as centred) and a line what the profile makes of both sticks.
/// Pure: a snapshot in, rows of text out; the terminal is someone else's.
public struct PadPicture: Sendable, Hashable {
    public static let minimumWidth = 80
    public static let minimumHeight = 24

    /// What the picture shows besides the snapshot.
    public struct Context: Sendable, Hashable {
        public var title: String
        public var capabilities: Capabilities
        public var reportRate: ReportIntervalStatistics.Summary?
        /// A remap profile's shaping of the physical sticks (`monitor --view --profile`), or nil.
        public var stickShaping: StickShapingPair?
        /// What the profile's virtual keyboard and mouse are doing (`monitor --view --profile`), one line, or nil.
        public var desktopLine: String?

        public init(
            title: String, capabilities: Capabilities, reportRate: ReportIntervalStatistics.Summary?,
            stickShaping: StickShapingPair? = nil
        ) {
            self.title = title
            self.capabilities = capabilities
            self.reportRate = reportRate
            self.stickShaping = stickShaping
        }
    }

    /// How a profile shapes the left and the right physical stick.
    public struct StickShapingPair: Sendable, Hashable {
        public var left: StickShaping
        public var right: StickShaping

        public init(left: StickShaping, right: StickShaping) {
            self.left = left
            self.right = right
        }

        public init(_ profile: RemapProfile) {
            self.init(left: profile.leftStick, right: profile.rightStick)
        }
    }

    /// The rows, each exactly `width` characters (ASCII).
    public private(set) var rows: [String]
    /// Per row, per column: whether the cell is lit (a held button, an active contact).
    public private(set) var lit: [[Bool]]

    public let width: Int
    public let height: Int

    /// The picture for a `width` x `height` window; a smaller window gets one line saying what it needs.
    public init(snapshot: PadSnapshot, context: Context, width: Int, height: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
        var canvas = Canvas(width: self.width, height: self.height)
        if width < Self.minimumWidth || height < Self.minimumHeight {
            // Split over as many rows as it takes: a narrow window still reads all of it.
            let message = Array(
                ("padbridge monitor --view needs a window of at least \(Self.minimumWidth)x\(Self.minimumHeight); "
                    + "this one is \(width)x\(height). q quits.").utf8)
            for (row, start) in stride(from: 0, to: message.count, by: self.width).enumerated() {
                canvas.put(row, 0, String(decoding: message[start..<min(start + self.width, message.count)], as: UTF8.self))
            }
        } else {
            Self.draw(snapshot, context, on: &canvas)
        }
        rows = canvas.cells.map { String(decoding: $0, as: UTF8.self) }
        lit = canvas.lit
    }

    private static func draw(_ pad: PadSnapshot, _ context: Context, on canvas: inout Canvas) {
        let buttons = context.capabilities.buttons
        canvas.put(0, 0, "padbridge monitor  " + context.title)  // put writes other than printable ASCII as '?'
        canvas.put(0, 72, "q quits")

        func button(_ row: Int, _ column: Int, _ label: String, _ which: Button) {
            guard buttons.contains(which) else { return }
            let held = pad.buttons.contains(which)
            canvas.put(row, column, held ? "[\(label)]" : " \(label) ", lit: held)
        }
        func trigger(_ row: Int, _ column: Int, _ label: String, _ value: Int16) {
            let fraction = Double(max(0, value)) / Double(Int16.max)
            let filled = Int((fraction * 20).rounded())
            canvas.put(row, column, "\(label) [" + String(repeating: "#", count: filled)
                + String(repeating: ".", count: 20 - filled) + "] " + NumberText.fixed(fraction, places: 2))
        }
        trigger(2, 2, "LT", pad.leftTrigger)
        trigger(2, 44, "RT", pad.rightTrigger)
        button(3, 5, "LB", .leftshoulder)
        button(3, 47, "RB", .rightshoulder)

        let shaping = context.stickShaping
        stick(pad.leftX, pad.leftY, label: "left", shaping: shaping?.left, row: 5, column: 2, on: &canvas)
        stick(pad.rightX, pad.rightY, label: "right", shaping: shaping?.right, row: 5, column: 62, on: &canvas)
        if let shaping {
            let left = shaping.left.shaped(x: pad.leftX, y: pad.leftY)
            let right = shaping.right.shaped(x: pad.rightX, y: pad.rightY)
            canvas.put(22, 2, "profile L \(left.x),\(left.y) R \(right.x),\(right.y)")
        }
        if let line = context.desktopLine { canvas.put(4, 2, String(line.prefix(76))) }
        button(13, 5, "L3", .leftstick)
        button(13, 65, "R3", .rightstick)

        canvas.put(5, 20, "d-pad")
        button(6, 21, "up", .dpup)
        button(7, 17, "lt", .dpleft)
        button(7, 25, "rt", .dpright)
        button(8, 21, "dn", .dpdown)

        canvas.put(5, 44, "buttons")
        button(6, 46, "Y", .y)
        button(7, 42, "X", .x)
        button(7, 50, "B", .b)
        button(8, 46, "A", .a)

        button(10, 17, "back", .back)
        button(10, 25, "guide", .guide)
        button(10, 34, "start", .start)
        button(11, 17, "touchpad", .touchpad)
        button(11, 30, "misc1", .misc1)
        button(12, 17, "P1", .paddle1)
        button(12, 22, "P2", .paddle2)
        button(12, 27, "P3", .paddle3)
        button(12, 32, "P4", .paddle4)

        if context.capabilities.touchpad { touchpad(pad.touches, on: &canvas) }
        if context.capabilities.motion {
            let gyro = pad.motion.gyroRadiansPerSecond
            let accel = pad.motion.accelMetersPerSecondSquared
            canvas.put(15, 44, "gyro rad/s")
            canvas.put(19, 44, "accel m/s2")
            for (offset, (name, value)) in [("x", gyro.x), ("y", gyro.y), ("z", gyro.z)].enumerated() {
                canvas.put(16 + offset, 44, "\(name) " + signed(value, width: 7) + " " + bar(value, limit: 10))
            }
            for (offset, (name, value)) in [("x", accel.x), ("y", accel.y), ("z", accel.z)].enumerated() {
                canvas.put(20 + offset, 44, "\(name) " + signed(value, width: 7) + " " + bar(value, limit: 20))
            }
        }
        if context.capabilities.battery {
            canvas.put(21, 2, "battery \(pad.battery.percent) %" + (pad.battery.charging ? " charging" : ""))
        }
        if let rate = context.reportRate {
            canvas.put(
                23, 2,
                "reports \(NumberText.fixed(rate.framesPerSecond, places: 1))/s  interval min/avg/max "
                    + "\(NumberText.fixed(rate.minimumIntervalMilliseconds, places: 2))/\(NumberText.fixed(rate.averageIntervalMilliseconds, places: 2))/"
                    + "\(NumberText.fixed(rate.maximumIntervalMilliseconds, places: 2)) ms")
        } else {
            canvas.put(23, 2, "reports: none yet")
        }
    }

    /// A 13x7 box with the stick's dot; the raw values under it. With a profile's shaping: the deadzone as `:`
    /// cells (those whose centre lies within it; the centre cell for any deadzone), its size in the label, and the
    /// dot lit only when the profile lets the stick out of the centre.
    private static func stick(
        _ x: Int16, _ y: Int16, label: String, shaping: StickShaping?, row: Int, column: Int, on canvas: inout Canvas
    ) {
        canvas.put(row + 1, column, "+-----------+")
        for line in 0..<5 { canvas.put(row + 2 + line, column, "|           |") }
        canvas.put(row + 7, column, "+-----------+")
        canvas.put(row + 4, column + 6, ".")
        var moved = x != 0 || y != 0
        if let shaping {
            canvas.put(row, column, "\(label) dz \(NumberText.fixed(shaping.deadzoneFraction, places: 2))")
            if shaping.deadzoneFraction > 0 {
                for cellRow in 0..<5 {
                    for cellColumn in 0..<11 {
                        let (fx, fy) = (Double(cellColumn - 5) / 5, Double(cellRow - 2) / 2)
                        if (fx * fx + fy * fy).squareRoot() <= max(shaping.deadzoneFraction, 0.01) {
                            canvas.put(row + 2 + cellRow, column + 1 + cellColumn, ":")
                        }
                    }
                }
            }
            let shaped = shaping.shaped(x: x, y: y)
            moved = shaped.x != 0 || shaped.y != 0
        } else {
            canvas.put(row, column, "\(label) stick")
        }
        let dotColumn = Int((Double(Int(x) - Int(Int16.min)) / 65535 * 10).rounded())
        let dotRow = Int((Double(Int(y) - Int(Int16.min)) / 65535 * 4).rounded())
        canvas.put(row + 2 + dotRow, column + 1 + dotColumn, "o", lit: moved)
        canvas.put(row + 9, column, "x \(x) y \(y)")
    }

    /// The touchpad as a 34x5 rectangle with each active contact's slot number where it is.
    private static func touchpad(_ touches: TouchContacts, on canvas: inout Canvas) {
        canvas.put(15, 2, "touchpad")
        canvas.put(16, 2, "+--------------------------------+")
        for line in 0..<3 { canvas.put(17 + line, 2, "|                                |") }
        canvas.put(20, 2, "+--------------------------------+")
        var listed: [String] = []
        for (slot, contact) in [touches.first, touches.second].enumerated() where contact.active {
            let column = 3 + Int((min(max(contact.x, 0), 1) * 31).rounded())
            let row = 17 + Int((min(max(contact.y, 0), 1) * 2).rounded())
            canvas.put(row, column, "\(slot)", lit: true)
            listed.append("#\(slot) id \(contact.trackingID) (\(NumberText.fixed(contact.x, places: 2)), \(NumberText.fixed(contact.y, places: 2)))")
        }
        canvas.put(15, 12, listed.isEmpty ? "no contact" : listed.joined(separator: "  "))
    }

    private static func bar(_ value: Double, limit: Double) -> String {
        let half = 5
        let cells = Int((min(max(value / limit, -1), 1) * Double(half)).rounded())
        var text = Array(repeating: Character("."), count: half * 2 + 1)
        text[half] = "|"
        if cells > 0 { for index in 1...cells { text[half + index] = "#" } }
        if cells < 0 { for index in 1...(-cells) { text[half - index] = "#" } }
        return "[" + String(text) + "]"
    }

    private static func signed(_ value: Double, width: Int) -> String {
        let text = (value >= 0 ? "+" : "") + NumberText.fixed(value, places: 2)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// A grid of ASCII cells; writes past an edge are clipped.
    private struct Canvas {
        var cells: [[UInt8]]
        var lit: [[Bool]]

        init(width: Int, height: Int) {
            cells = Array(repeating: Array(repeating: UInt8(ascii: " "), count: width), count: height)
            lit = Array(repeating: Array(repeating: false, count: width), count: height)
        }

        mutating func put(_ row: Int, _ column: Int, _ text: String, lit isLit: Bool = false) {
            guard cells.indices.contains(row) else { return }
            for (offset, byte) in text.utf8.enumerated() {
                let target = column + offset
                guard cells[row].indices.contains(target) else { break }
                cells[row][target] = (0x20..<0x7F).contains(byte) ? byte : UInt8(ascii: "?")
                lit[row][target] = isLit && byte != UInt8(ascii: "[") && byte != UInt8(ascii: "]")
            }
        }
    }
}
