/// Why an SDL game-controller mapping string could not be read.
public enum SDLMappingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The string lacks the leading `GUID,name,` fields.
    case missingGUIDOrName(mapping: String)
    /// An entry has no `target:source` colon ("leftx").
    case entryWithoutColon(entry: String)
    /// An entry's source is none of SDL's `b<n>`, `a<n>` (with optional `+`/`-` before and `~` after) or
    /// `h<n>.<mask>`.
    case malformedSource(entry: String)

    public var description: String {
        switch self {
        case .missingGUIDOrName(let mapping):
            "SDL mapping \"\(mapping)\" does not start with a GUID and a name (expected \"GUID,name,a:b0,...\")"
        case .entryWithoutColon(let entry):
            "SDL mapping entry \"\(entry)\" has no colon (expected target:source, such as a:b0)"
        case .malformedSource(let entry):
            "SDL mapping entry \"\(entry)\" has a source that is not b<n>, a<n>, +a<n>, -a<n>, a<n>~ or h<n>.<mask>"
        }
    }
}

extension EvdevLayout {
    /// Translates an SDL2 game-controller mapping (`GUID,name,a:b0,b:b1,leftx:a0,righttrigger:+a5,dpup:h0.1,...`)
    /// into evdev codes, numbering the node's controls the way SDL's Linux joystick backend does
    /// (`ConfigJoystick` in `src/joystick/linux/SDL_sysjoystick.c`):
    ///
    /// - buttons `b0, b1, ...`: the present EV_KEY codes from BTN_JOYSTICK (0x120) up to, not including,
    ///   KEY_MAX, then those below BTN_JOYSTICK, each run ascending;
    /// - hats `h0, h1, ...`: the ABS_HAT0X/Y ... ABS_HAT3X/Y pairs with at least one code present, in pair order,
    ///   that SDL takes for digital hats: range -1...1 or no fuzz, flat and resolution (`absoluteInfo`; a pair
    ///   without absinfo counts as digital). Masks: 1 up, 2 right, 4 down, 8 left;
    /// - axes `a0, a1, ...`: the present EV_ABS codes below ABS_MAX, ascending, leaving out digital hats' codes.
    ///
    /// Entries: `+a`/`-a` use one half of an axis, `~` inverts it; an axis source drives an axis target
    /// (`.axis`, or `.halfAxis` for a half), a half axis drives a button (`.buttonBeyondHalf`), a button drives a
    /// button or, for `lefttrigger`/`righttrigger`, the trigger (`.trigger`); hat masks drive d-pad buttons
    /// (`.buttons` when both directions of a hat axis are mapped, else `.buttonBeyondHalf`).
    ///
    /// Skipped, since the model cannot express them or the node lacks them: targets padbridge does not know
    /// (SDL3's `misc2`..., and metadata such as `platform:Linux` or `crc:`), a full axis driving a button,
    /// an inverted half axis driving a button, a button or hat driving a stick, `+leftx`-style half outputs,
    /// combined hat masks, and sources the node does not have. When two entries name one code, the later wins.
    /// Malformed entries throw.
    public init(
        sdlMapping: String, keyCodes: [UInt16], absoluteCodes: [UInt16],
        absoluteInfo: [UInt16: EvdevAbsoluteInfo] = [:]
    ) throws(SDLMappingError) {
        let controls = SDLJoystickControls(keyCodes: keyCodes, absoluteCodes: absoluteCodes, absoluteInfo: absoluteInfo)
        let fields = sdlMapping.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count >= 2 else { throw .missingGUIDOrName(mapping: sdlMapping) }

        var keys: [UInt16: EvdevKeyRole] = [:]
        var absolutes: [UInt16: EvdevAbsoluteRole] = [:]
        var hatButtons: [UInt16: (negative: Button?, positive: Button?)] = [:]

        for field in fields.dropFirst(2) {
            let entry = String(field.filter { $0 != " " })  // SDL ignores spaces inside entries
            if entry.isEmpty { continue }
            guard let colon = entry.firstIndex(of: ":") else { throw .entryWithoutColon(entry: entry) }
            // Targets padbridge does not know, metadata (platform:Linux, crc:...) included, are skipped unread.
            guard let target = SDLMappingTarget(entry[..<colon]) else { continue }
            guard let source = SDLMappingSource(entry[entry.index(after: colon)...]) else {
                throw .malformedSource(entry: entry)
            }

            switch (target, source) {
            case (.button(let button), .button(let index)):
                guard let code = controls.button(index) else { continue }
                keys[code] = .button(button)
            case (.button(let button), .axis(let index, let half, let inverted)):
                guard let code = controls.axis(index), let positiveSide = half, !inverted else { continue }
                absolutes[code] = .buttonBeyondHalf(button, positiveSide: positiveSide)
            case (.button(let button), .hat(let index, let mask)):
                guard let pair = controls.hat(index), let direction = SDLHatDirection(mask: mask) else { continue }
                let code = direction.isVertical ? pair.y : pair.x
                var sides = hatButtons[code] ?? (nil, nil)
                if direction.isPositive { sides.positive = button } else { sides.negative = button }
                hatButtons[code] = sides
            case (.axis(let axis, let halfOutput), .axis(let index, let half, let inverted)):
                guard halfOutput == nil || axis.isTrigger, let code = controls.axis(index) else { continue }
                if let positiveSide = half {
                    absolutes[code] = .halfAxis(axis, positiveSide: positiveSide, inverted: inverted)
                } else {
                    absolutes[code] = .axis(axis, inverted: inverted)
                }
            case (.axis(let axis, _), .button(let index)):
                guard axis.isTrigger, let code = controls.button(index) else { continue }
                keys[code] = .trigger(axis)
            case (.axis, .hat):
                continue
            }
        }
        for (code, sides) in hatButtons {
            switch (sides.negative, sides.positive) {
            case (let negative?, let positive?): absolutes[code] = .buttons(negative: negative, positive: positive)
            case (let negative?, nil): absolutes[code] = .buttonBeyondHalf(negative, positiveSide: false)
            case (nil, let positive?): absolutes[code] = .buttonBeyondHalf(positive, positiveSide: true)
            case (nil, nil): break
            }
        }
        self.init(keys: keys, absolutes: absolutes)
    }
}

/// A node's controls numbered as SDL's Linux joystick backend numbers them (see `EvdevLayout(sdlMapping:...)`).
struct SDLJoystickControls {
    var buttons: [UInt16]
    var axes: [UInt16]
    var hats: [(x: UInt16, y: UInt16)]

    init(keyCodes: [UInt16], absoluteCodes: [UInt16], absoluteInfo: [UInt16: EvdevAbsoluteInfo]) {
        let keys = Set(keyCodes)
        buttons = keys.filter { $0 >= EvdevCode.btnJoystick && $0 < EvdevCode.keyMax }.sorted()
            + keys.filter { $0 < EvdevCode.btnJoystick }.sorted()
        let absolutes = Set(absoluteCodes)
        var digitalHatCodes = Set<UInt16>()
        hats = []
        for x in stride(from: EvdevCode.absHat0X, through: EvdevCode.absHat3Y, by: 2) {
            let y = x + 1
            guard absolutes.contains(x) || absolutes.contains(y) else { continue }
            let infoX = absolutes.contains(x) ? absoluteInfo[x] : nil
            let infoY = absolutes.contains(y) ? absoluteInfo[y] : nil
            guard Self.isDigitalHat(infoX, infoY) else { continue }
            hats.append((x, y))
            digitalHatCodes.formUnion([x, y])
        }
        axes = absolutes.filter { $0 < EvdevCode.absMax && !digitalHatCodes.contains($0) }.sorted()
    }

    /// SDL's `GuessIfAxesAreDigitalHat`, where a missing absinfo cannot rule a hat out.
    private static func isDigitalHat(_ x: EvdevAbsoluteInfo?, _ y: EvdevAbsoluteInfo?) -> Bool {
        func unitRange(_ info: EvdevAbsoluteInfo?) -> Bool { info.map { $0.minimum == -1 && $0.maximum == 1 } ?? true }
        func plain(_ info: EvdevAbsoluteInfo?) -> Bool {
            info.map { $0.fuzz == 0 && $0.flat == 0 && $0.resolution == 0 } ?? true
        }
        return (unitRange(x) && unitRange(y)) || (plain(x) && plain(y))
    }

    func button(_ index: Int) -> UInt16? { buttons.indices.contains(index) ? buttons[index] : nil }
    func axis(_ index: Int) -> UInt16? { axes.indices.contains(index) ? axes[index] : nil }
    func hat(_ index: Int) -> (x: UInt16, y: UInt16)? { hats.indices.contains(index) ? hats[index] : nil }
}

/// The `+` or `-` that may start either side of a mapping entry (a half axis).
enum SDLMappingSign {
    /// True for `+`, false for `-`, nil without a sign; and the text after it.
    static func split(_ text: Substring) -> (positive: Bool?, rest: Substring) {
        guard let sign = text.first, sign == "+" || sign == "-" else { return (nil, text) }
        return (sign == "+", text.dropFirst())
    }
}

/// The left side of a mapping entry.
enum SDLMappingTarget {
    case button(Button)
    /// `halfOutput`: SDL's `+leftx` / `-leftx` (true for `+`), nil for the whole axis.
    case axis(Axis, halfOutput: Bool?)

    init?(_ text: Substring) {
        let (halfOutput, name) = SDLMappingSign.split(text)
        if let axis = Axis(rawValue: String(name)) {
            self = .axis(axis, halfOutput: halfOutput)
        } else if halfOutput == nil, let button = Button(rawValue: String(name)) {
            self = .button(button)
        } else {
            return nil
        }
    }
}

/// The right side of a mapping entry.
enum SDLMappingSource {
    case button(Int)
    /// `half`: true for `+a`, false for `-a`, nil for the whole axis.
    case axis(Int, half: Bool?, inverted: Bool)
    case hat(Int, mask: Int)

    init?(_ text: Substring) {
        var (half, rest) = SDLMappingSign.split(text)
        var inverted = false
        if rest.last == "~" {
            inverted = true
            rest = rest.dropLast()
        }
        guard let kind = rest.first else { return nil }
        let body = rest.dropFirst()
        switch kind {
        case "b":  // SDL reads a sign or `~` around a button and ignores it; so does this
            guard let index = Self.number(body) else { return nil }
            self = .button(index)
        case "a":
            guard let index = Self.number(body) else { return nil }
            self = .axis(index, half: half, inverted: inverted)
        case "h":
            let parts = body.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, let index = Self.number(parts[0]),
                let mask = Self.number(parts[1])
            else { return nil }
            self = .hat(index, mask: mask)
        default:
            return nil
        }
    }

    private static func number(_ digits: Substring) -> Int? {
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }
}

/// One direction of an SDL hat mask; combined masks (3 = up+right, ...) have none.
enum SDLHatDirection {
    case up, right, down, left

    init?(mask: Int) {
        switch mask {
        case 1: self = .up
        case 2: self = .right
        case 4: self = .down
        case 8: self = .left
        default: return nil
        }
    }

    /// Up and down are the hat's Y axis (ABS_HATnY), left and right its X axis.
    var isVertical: Bool { self == .up || self == .down }
    /// Down and right are the positive ends of their axes (evdev's Y grows downwards).
    var isPositive: Bool { self == .down || self == .right }
}
