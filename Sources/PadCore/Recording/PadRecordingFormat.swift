/// The text form of a `PadRecording`: one line per fact, fields separated by single spaces, versioned by its first
/// line, so a recording compresses well, diffs line by line and greps by its first word.
///
///     padbridge-recording 1
///     # anything after '#' at the start of a line is a comment; blank lines are ignored
///     pad id=b43f9de35e24 kind=dualSense bus=bluetooth vendor=054c product=0ce6 version=8100 serial=e2:4c:82:d3:87:c8 name=DualSense%20Wireless%20Controller
///     evdev 0 side=physical role=pad path=/dev/input/event3 bus=0005 vendor=054c product=0ce6 version=8100 name=...
///     evdev-props 0 6
///     evdev-codes 0 1 304 305 307
///     evdev-abs 0 0 value=128 min=0 max=255 fuzz=0 flat=0 resolution=0
///     hidraw 1 side=physical path=/dev/hidraw0 descriptor=05010905a101...
///     hidraw-feature 1 5 05fdff...   a feature report the device answered: NODE ID HEX (byte 0 = the ID)
///     e 1500 0 1 304 1          event: MICROSECONDS NODE TYPE CODE VALUE
///     r 1510 1 31a18080...       hidraw input report: MICROSECONDS NODE HEX
///     f 2000 physical {"type":"rumble",...}   feedback: MICROSECONDS SIDE JSON-LINE (the rest of the line)
///
/// Times are microseconds after the recording started, never decreasing. Numbers in `evdev` identities are hex
/// (as `list` prints ids); codes, types and values are decimal, as the kernel's headers number them. Text values
/// (`name`, `path`, `phys`, `uniq`, `serial`) escape '%', '=', space, control characters and non-ASCII bytes as
/// `%XX`. Reading is total: any text gives a recording or a `TextLineError` naming the line.
public enum PadRecordingFormat {
    public static let magic = "padbridge-recording"
    public static let version = 1

    /// The largest report and descriptor a line may hold (the kernel's HID_MAX_BUFFER_SIZE, HID_MAX_DESCRIPTOR_SIZE).
    public static let maximumReportBytes = 16384
    public static let maximumDescriptorBytes = 4096
    /// Node numbers a recording may use.
    public static let nodeIndexes = 0..<64

    // MARK: Writing

    /// The header: the version line, the pad, and every node's declarations.
    public static func header(of recording: PadRecording) -> String {
        var lines = ["\(magic) \(version)"]
        let identity = recording.identity
        var pad = [
            "pad", "id=\(escaped(identity.id))", "kind=\(identity.kind.rawValue)", "bus=\(identity.bus.rawValue)",
            "vendor=\(NumberText.hex4(identity.vendor))", "product=\(NumberText.hex4(identity.product))", "version=\(NumberText.hex4(identity.version))",
        ]
        if let serial = identity.serial { pad.append("serial=\(escaped(serial))") }
        pad.append("name=\(escaped(identity.name))")
        lines.append(pad.joined(separator: " "))
        for node in recording.evdevNodes.sorted(by: { $0.index < $1.index }) {
            var fields = [
                "evdev", "\(node.index)", "side=\(node.side.rawValue)", "role=\(escaped(node.role))",
                "path=\(escaped(node.path))", "bus=\(NumberText.hex4(node.bus))", "vendor=\(NumberText.hex4(node.vendor))",
                "product=\(NumberText.hex4(node.product))", "version=\(NumberText.hex4(node.version))",
            ]
            if let phys = node.phys { fields.append("phys=\(escaped(phys))") }
            if let uniq = node.uniq { fields.append("uniq=\(escaped(uniq))") }
            fields.append("name=\(escaped(node.name))")
            lines.append(fields.joined(separator: " "))
            if !node.properties.isEmpty {
                lines.append((["evdev-props", "\(node.index)"] + node.properties.sorted().map(String.init)).joined(separator: " "))
            }
            for (type, codes) in node.codes.sorted(by: { $0.key < $1.key }) where !codes.isEmpty {
                lines.append((["evdev-codes", "\(node.index)", "\(type)"] + codes.sorted().map(String.init)).joined(separator: " "))
            }
            for (code, info) in node.absoluteInfo.sorted(by: { $0.key < $1.key }) {
                lines.append(
                    "evdev-abs \(node.index) \(code) value=\(info.value) min=\(info.minimum) max=\(info.maximum) "
                        + "fuzz=\(info.fuzz) flat=\(info.flat) resolution=\(info.resolution)")
            }
        }
        for node in recording.hidrawNodes.sorted(by: { $0.index < $1.index }) {
            lines.append(
                "hidraw \(node.index) side=\(node.side.rawValue) path=\(escaped(node.path)) "
                    + "descriptor=\(HexBytes.encode(node.reportDescriptor))")
            for (id, report) in node.featureReports.sorted(by: { $0.key < $1.key }) {
                lines.append("hidraw-feature \(node.index) \(id) \(HexBytes.encode(report))")
            }
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// One entry's line, newline included.
    public static func line(_ entry: RecordedEntry) -> String {
        switch entry {
        case .evdev(let time, let node, let type, let code, let value): "e \(time) \(node) \(type) \(code) \(value)\n"
        case .hidrawInput(let time, let node, let report): "r \(time) \(node) \(HexBytes.encode(report))\n"
        case .feedback(let time, let side, let line):
            "f \(time) \(side.rawValue) \(line.onOneLine)\n"
        }
    }

    public static func text(of recording: PadRecording) -> String {
        header(of: recording) + recording.entries.map(line).joined()
    }

    // MARK: Reading

    public static func recording(from text: String) throws(TextLineError) -> PadRecording {
        var reader = Reader()
        var number = 0
        // Split on the byte: as Characters, "\r\n" is one grapheme that is not "\n".
        var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }  // the newline that ends the last line
        for rawLine in lines {
            number += 1
            let line = Substring(rawLine.last == UInt8(ascii: "\r") ? rawLine.dropLast() : rawLine)
            if line.isEmpty || line.first == "#" { continue }
            do {
                try reader.read(line)
            } catch {
                throw TextLineError(line: number, problem: error.problem)
            }
        }
        guard let recording = reader.finished() else {
            throw TextLineError(
                line: max(1, number), problem: reader.sawVersion ? "no `pad` line" : "not a padbridge recording (no `\(magic) \(version)` line)")
        }
        return recording
    }

    // MARK: Escaping

    static func escaped(_ text: String) -> String {
        var out: [UInt8] = []
        for byte in text.utf8 {
            if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "%") || byte == UInt8(ascii: "=") {
                out.append(UInt8(ascii: "%"))
                out.append(contentsOf: HexBytes.encode([byte]).uppercased().utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unescaped(_ text: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%") {
                guard bytes.count >= 2,
                    let value = HexBytes.decode(String(decoding: bytes.prefix(2), as: UTF8.self))
                else { return nil }
                out.append(contentsOf: value)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}

extension String {
    /// The text with each CR and LF as a space, so that it cannot end a line of a line-oriented file. By scalar:
    /// "\r\n" is one Character, equal to neither "\r" nor "\n".
    var onOneLine: String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }))
    }
}

/// A problem with one line, before the line number is known.
struct LineProblem: Error {
    var problem: String
    init(_ problem: String) { self.problem = problem }
}

/// The parser's state: lines read so far.
private struct Reader {
    var sawVersion = false
    var identity: RecordedPadIdentity?
    var evdevNodes: [Int: RecordedEvdevNode] = [:]
    var hidrawNodes: [Int: RecordedHidrawNode] = [:]
    var entries: [RecordedEntry] = []
    var lastTime: Int64 = 0

    func finished() -> PadRecording? {
        guard sawVersion, let identity else { return nil }
        return PadRecording(
            identity: identity, evdevNodes: evdevNodes.values.sorted { $0.index < $1.index },
            hidrawNodes: hidrawNodes.values.sorted { $0.index < $1.index }, entries: entries)
    }

    mutating func read(_ line: Substring) throws(LineProblem) {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        let keyword = fields[0]
        guard sawVersion else {
            guard keyword == PadRecordingFormat.magic, fields.count == 2 else {
                throw LineProblem("not a padbridge recording: it must start with `\(PadRecordingFormat.magic) 1`")
            }
            guard fields[1] == "\(PadRecordingFormat.version)" else {
                throw LineProblem(
                    "format version \(fields[1]) is not one this padbridge reads (it reads \(PadRecordingFormat.version)); "
                        + "a newer padbridge wrote it")
            }
            sawVersion = true
            return
        }
        switch keyword {
        case "e": try readEvent(fields)
        case "r": try readReport(fields)
        case "f": try readFeedback(line)
        case "pad": try readPad(fields)
        case "evdev": try readEvdevNode(fields)
        case "evdev-props": try readProperties(fields)
        case "evdev-codes": try readCodes(fields)
        case "evdev-abs": try readAbsolute(fields)
        case "hidraw": try readHidrawNode(fields)
        case "hidraw-feature": try readFeature(fields)
        case PadRecordingFormat.magic: throw LineProblem("a second version line")
        default:
            throw LineProblem(
                "unknown line `\(keyword.prefix(32))` (expected pad, evdev, evdev-props, evdev-codes, evdev-abs, hidraw, hidraw-feature, e, r or f)")
        }
    }

    // MARK: Header lines

    mutating func readPad(_ fields: [Substring]) throws(LineProblem) {
        guard identity == nil else { throw LineProblem("a second `pad` line") }
        guard entries.isEmpty else { throw LineProblem("`pad` after the first event: the header comes first") }
        var pairs = try Self.pairs(fields.dropFirst(), allowed: ["id", "kind", "bus", "vendor", "product", "version", "serial", "name"])
        guard let kind = ControllerKind(rawValue: try pairs.required("kind")) else {
            throw LineProblem("kind must be one of \(ControllerKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let bus = ControllerBus(rawValue: try pairs.required("bus")) else {
            throw LineProblem("bus must be usb, bluetooth, virtual or other")
        }
        identity = RecordedPadIdentity(
            id: try pairs.required("id"), name: try pairs.required("name"), kind: kind, bus: bus,
            vendor: try pairs.hex("vendor"), product: try pairs.hex("product"), version: try pairs.hex("version"),
            serial: pairs.values["serial"])
    }

    mutating func readEvdevNode(_ fields: [Substring]) throws(LineProblem) {
        let index = try headerNode(fields, arity: 2...)
        var pairs = try Self.pairs(
            fields.dropFirst(2),
            allowed: ["side", "role", "path", "bus", "vendor", "product", "version", "phys", "uniq", "name"])
        guard let side = RecordedSide(rawValue: try pairs.required("side")) else {
            throw LineProblem("side must be physical or virtual")
        }
        evdevNodes[index] = RecordedEvdevNode(
            index: index, side: side, role: try pairs.required("role"), path: try pairs.required("path"),
            name: try pairs.required("name"), bus: try pairs.hex("bus"), vendor: try pairs.hex("vendor"),
            product: try pairs.hex("product"), version: try pairs.hex("version"), phys: pairs.values["phys"],
            uniq: pairs.values["uniq"])
    }

    mutating func readProperties(_ fields: [Substring]) throws(LineProblem) {
        let index = try declaredEvdevNode(fields)
        let properties = try fields.dropFirst(2).map { (field) throws(LineProblem) in
            try Self.number(field, UInt16.self, in: 0...0x1F, what: "an input property")
        }
        evdevNodes[index]!.properties = Array(Set(properties)).sorted()
    }

    mutating func readCodes(_ fields: [Substring]) throws(LineProblem) {
        let index = try declaredEvdevNode(fields)
        guard fields.count >= 3 else { throw LineProblem("expected `evdev-codes NODE TYPE CODE...`") }
        let type = try Self.number(fields[2], UInt16.self, in: 1...0x1F, what: "an event type")
        let codes = try fields.dropFirst(3).map { (field) throws(LineProblem) in
            try Self.number(field, UInt16.self, in: 0...0x2FF, what: "an event code")
        }
        guard !codes.isEmpty else { throw LineProblem("expected `evdev-codes NODE TYPE CODE...` with at least one code") }
        evdevNodes[index]!.codes[type, default: []] = Array(Set(codes + (evdevNodes[index]!.codes[type] ?? []))).sorted()
    }

    mutating func readAbsolute(_ fields: [Substring]) throws(LineProblem) {
        let index = try declaredEvdevNode(fields)
        guard fields.count >= 3 else { throw LineProblem("expected `evdev-abs NODE CODE value=.. min=.. max=..`") }
        let code = try Self.number(fields[2], UInt16.self, in: 0...0x3F, what: "an absolute axis code")
        var pairs = try Self.pairs(fields.dropFirst(3), allowed: ["value", "min", "max", "fuzz", "flat", "resolution"])
        evdevNodes[index]!.absoluteInfo[code] = EvdevAbsoluteInfo(
            value: try pairs.integer("value"), minimum: try pairs.integer("min"), maximum: try pairs.integer("max"),
            fuzz: try pairs.integer("fuzz"), flat: try pairs.integer("flat"), resolution: try pairs.integer("resolution"))
    }

    mutating func readHidrawNode(_ fields: [Substring]) throws(LineProblem) {
        let index = try headerNode(fields, arity: 2...)
        var pairs = try Self.pairs(fields.dropFirst(2), allowed: ["side", "path", "descriptor"])
        guard let side = RecordedSide(rawValue: try pairs.required("side")) else {
            throw LineProblem("side must be physical or virtual")
        }
        hidrawNodes[index] = RecordedHidrawNode(
            index: index, side: side, path: try pairs.required("path"),
            reportDescriptor: try Self.hex(
                pairs.raw["descriptor"] ?? "", limit: PadRecordingFormat.maximumDescriptorBytes, what: "descriptor"))
    }

    mutating func readFeature(_ fields: [Substring]) throws(LineProblem) {
        guard entries.isEmpty else { throw LineProblem("`hidraw-feature` after the first event: the header comes first") }
        guard fields.count == 4 else { throw LineProblem("expected `hidraw-feature NODE ID HEX`") }
        let index = try Self.number(fields[1], Int.self, in: PadRecordingFormat.nodeIndexes, what: "a node number")
        guard hidrawNodes[index] != nil else {
            throw LineProblem("hidraw node \(index) is not declared (a `hidraw \(index) ...` line)")
        }
        let id = try Self.number(fields[2], UInt8.self, in: 1...255, what: "a report ID")
        let report = try Self.hex(fields[3], limit: PadRecordingFormat.maximumReportBytes, what: "feature report")
        guard report.first == id else { throw LineProblem("a feature report starts with its ID (\(id))") }
        hidrawNodes[index]!.featureReports[id] = report
    }

    /// A new node's number, not used before, in the header.
    private func headerNode(_ fields: [Substring], arity: PartialRangeFrom<Int>) throws(LineProblem) -> Int {
        guard identity != nil else { throw LineProblem("a node before the `pad` line") }
        guard entries.isEmpty else { throw LineProblem("a node after the first event: the header comes first") }
        guard arity.contains(fields.count) else { throw LineProblem("expected `\(fields[0]) NODE KEY=VALUE...`") }
        let index = try Self.number(fields[1], Int.self, in: PadRecordingFormat.nodeIndexes, what: "a node number")
        guard evdevNodes[index] == nil, hidrawNodes[index] == nil else {
            throw LineProblem("node \(index) is declared twice")
        }
        return index
    }

    private func declaredEvdevNode(_ fields: [Substring]) throws(LineProblem) -> Int {
        guard entries.isEmpty else { throw LineProblem("`\(fields[0])` after the first event: the header comes first") }
        guard fields.count >= 2 else { throw LineProblem("expected `\(fields[0]) NODE ...`") }
        let index = try Self.number(fields[1], Int.self, in: PadRecordingFormat.nodeIndexes, what: "a node number")
        guard evdevNodes[index] != nil else { throw LineProblem("evdev node \(index) is not declared (an `evdev \(index) ...` line)") }
        return index
    }

    // MARK: Entries

    private mutating func time(_ field: Substring) throws(LineProblem) -> Int64 {
        guard identity != nil else { throw LineProblem("an event before the `pad` line") }
        let time = try Self.number(field, Int64.self, in: 0...Int64(Int32.max) * 1_000_000, what: "a time in microseconds")
        guard time >= lastTime else { throw LineProblem("time \(time) goes back (the line before was at \(lastTime))") }
        lastTime = time
        return time
    }

    mutating func readEvent(_ fields: [Substring]) throws(LineProblem) {
        guard fields.count == 6 else { throw LineProblem("expected `e MICROSECONDS NODE TYPE CODE VALUE`") }
        let time = try time(fields[1])
        let node = try Self.number(fields[2], Int.self, in: PadRecordingFormat.nodeIndexes, what: "a node number")
        guard evdevNodes[node] != nil else { throw LineProblem("event for evdev node \(node), which is not declared") }
        entries.append(
            .evdev(
                microseconds: time, node: node,
                type: try Self.number(fields[3], UInt16.self, in: 0...0x1F, what: "an event type"),
                code: try Self.number(fields[4], UInt16.self, in: 0...0x2FF, what: "an event code"),
                value: try Self.number(fields[5], Int32.self, in: Int32.min...Int32.max, what: "an event value")))
    }

    mutating func readReport(_ fields: [Substring]) throws(LineProblem) {
        guard fields.count == 4 else { throw LineProblem("expected `r MICROSECONDS NODE HEX`") }
        let time = try time(fields[1])
        let node = try Self.number(fields[2], Int.self, in: PadRecordingFormat.nodeIndexes, what: "a node number")
        guard hidrawNodes[node] != nil else { throw LineProblem("report for hidraw node \(node), which is not declared") }
        let report = try Self.hex(fields[3], limit: PadRecordingFormat.maximumReportBytes, what: "report")
        guard !report.isEmpty else { throw LineProblem("an empty report") }
        entries.append(.hidrawInput(microseconds: time, node: node, report: report))
    }

    mutating func readFeedback(_ line: Substring) throws(LineProblem) {
        let fields = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 4 else { throw LineProblem("expected `f MICROSECONDS SIDE JSON`") }
        let time = try time(fields[1])
        guard let side = RecordedSide(rawValue: String(fields[2])) else {
            throw LineProblem("side must be physical or virtual")
        }
        guard !fields[3].contains("\r") else { throw LineProblem("a carriage return inside a feedback line") }
        entries.append(.feedback(microseconds: time, side: side, line: String(fields[3])))
    }

    // MARK: Fields

    struct Pairs {
        var raw: [String: Substring]
        var values: [String: String]

        mutating func required(_ key: String) throws(LineProblem) -> String {
            guard let value = values[key] else { throw LineProblem("missing \(key)=") }
            return value
        }

        mutating func hex(_ key: String) throws(LineProblem) -> UInt16 {
            guard let value = UInt16(try required(key), radix: 16) else {
                throw LineProblem("\(key)= must be 1 to 4 hex digits")
            }
            return value
        }

        mutating func integer(_ key: String) throws(LineProblem) -> Int32 {
            guard let value = Int32(try required(key)) else { throw LineProblem("\(key)= must be a 32-bit integer") }
            return value
        }
    }

    static func pairs(_ fields: ArraySlice<Substring>, allowed: Set<String>) throws(LineProblem) -> Pairs {
        var pairs = Pairs(raw: [:], values: [:])
        for field in fields {
            guard let equals = field.firstIndex(of: "=") else { throw LineProblem("`\(field.prefix(32))` is not KEY=VALUE") }
            let key = String(field[..<equals])
            guard allowed.contains(key) else {
                throw LineProblem("unknown key \(key.prefix(32))= (known: \(allowed.sorted().joined(separator: ", ")))")
            }
            guard pairs.raw[key] == nil else { throw LineProblem("\(key)= twice") }
            let value = field[field.index(after: equals)...]
            guard let text = PadRecordingFormat.unescaped(value) else {
                throw LineProblem("\(key)= has a broken %XX escape or is not UTF-8")
            }
            pairs.raw[key] = value
            pairs.values[key] = text
        }
        return pairs
    }

    static func number<Value: FixedWidthInteger>(
        _ field: Substring, _: Value.Type, in range: ClosedRange<Value>, what: String
    ) throws(LineProblem) -> Value {
        guard field.utf8.count <= 20, let value = Value(field, radix: 10), range.contains(value) else {
            throw LineProblem("`\(field.prefix(24))` is not \(what) (\(range.lowerBound)...\(range.upperBound))")
        }
        return value
    }

    static func number<Value: FixedWidthInteger>(
        _ field: Substring, _ type: Value.Type, in range: Range<Value>, what: String
    ) throws(LineProblem) -> Value {
        try number(field, type, in: range.lowerBound...(range.upperBound - 1), what: what)
    }

    static func hex(_ field: Substring, limit: Int, what: String) throws(LineProblem) -> [UInt8] {
        guard field.utf8.count <= limit * 2, let bytes = HexBytes.decode(field) else {
            throw LineProblem("the \(what) must be an even number of hex digits, at most \(limit) bytes")
        }
        return bytes
    }
}
