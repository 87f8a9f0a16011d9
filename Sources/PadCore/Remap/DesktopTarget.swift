/// A key of the virtual keyboard, by its evdev code (`KEY_SPACE` = 57), with the name a profile gave it
/// (`space`). Two keys are the same key when their codes are. Names are resolved outside the core (PadProfiles
/// asks libevdev), so the core needs no key table.
public struct KeyboardKey: Sendable, Hashable {
    public let code: UInt16
    /// The profile's spelling, without `key:` (`leftctrl`).
    public let name: String

    public init(code: UInt16, name: String) {
        self.code = code
        self.name = name
    }

    public static func == (left: KeyboardKey, right: KeyboardKey) -> Bool { left.code == right.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The codes a keyboard key may have: the kernel's keyboard keys (`KEY_ESC` 1 to `KEY_MICMUTE` 248) and its
    /// later keys (`KEY_OK` 0x160 up to, not including, `BTN_TRIGGER_HAPPY` 0x2c0): never a mouse, joystick or pad
    /// button, which would make desktops take the keyboard for something else.
    public static func isKeyboardCode(_ code: UInt16) -> Bool { (1...0xff).contains(code) || (0x160..<0x2c0).contains(code) }

    /// Keys a desktop treats as modifiers (ctrl, shift, alt, meta): pressed before the other keys of a combo and
    /// released after them, each group in its own report, so a program sees ctrl down before c.
    public static let modifierCodes: Set<UInt16> = [29, 42, 54, 56, 97, 100, 125, 126]
}

/// A button of the virtual mouse (`mouse:left`).
public enum MouseButton: String, Sendable, Hashable, CaseIterable {
    case left, right, middle, side, extra

    /// Its evdev code (`BTN_LEFT` 0x110 ... `BTN_EXTRA` 0x114).
    public var code: UInt16 {
        switch self {
        case .left: 0x110
        case .right: 0x111
        case .middle: 0x112
        case .side: 0x113
        case .extra: 0x114
        }
    }
}

/// A direction of the virtual mouse's wheel (`scroll:up`).
public enum ScrollDirection: String, Sendable, Hashable, CaseIterable {
    case up, down, left, right
}

/// An output on the virtual keyboard or mouse: what `key:`, `mouse:` and `scroll:` targets name. Each is digital:
/// a button, trigger or stick half drives it as it would a pad button.
public enum DesktopTarget: Sendable, Hashable {
    case key(KeyboardKey)
    case mouseButton(MouseButton)
    /// One wheel notch when pressed, then repeated while held (`DesktopFrame.scrollRepeat`).
    case scroll(ScrollDirection)

    public static let keyPrefix = "key:"
    public static let mousePrefix = "mouse:"
    public static let scrollPrefix = "scroll:"

    /// The profile's spelling: `key:space`, `mouse:left`, `scroll:up`.
    public var name: String {
        switch self {
        case let .key(key): Self.keyPrefix + key.name
        case let .mouseButton(button): Self.mousePrefix + button.rawValue
        case let .scroll(direction): Self.scrollPrefix + direction.rawValue
        }
    }

    /// Reads `mouse:NAME` and `scroll:NAME`; `key:NAME` needs the kernel's key names (see `init(name:keyCode:)`).
    public init?(name: String, keyCode: (String) -> UInt16?) {
        if name.hasPrefix(Self.mousePrefix) {
            guard let button = MouseButton(rawValue: String(name.dropFirst(Self.mousePrefix.count))) else { return nil }
            self = .mouseButton(button)
        } else if name.hasPrefix(Self.scrollPrefix) {
            guard let direction = ScrollDirection(rawValue: String(name.dropFirst(Self.scrollPrefix.count))) else { return nil }
            self = .scroll(direction)
        } else if name.hasPrefix(Self.keyPrefix) {
            let keyName = String(name.dropFirst(Self.keyPrefix.count))
            guard let code = keyCode(keyName), KeyboardKey.isKeyboardCode(code) else { return nil }
            self = .key(KeyboardKey(code: code, name: keyName))
        } else {
            return nil
        }
    }

    /// Whether the name is spelled as a desktop target (whatever follows the prefix).
    public static func looksLikeDesktopTarget(_ name: String) -> Bool {
        [keyPrefix, mousePrefix, scrollPrefix].contains { name.hasPrefix($0) }
    }

    public var needsKeyboard: Bool { if case .key = self { true } else { false } }
    public var needsMouse: Bool { !needsKeyboard }
}

/// Which evdev key codes are held: 1024 bits inline (no allocation per frame), enough for every `KEY_`/`BTN_` code.
public struct EvdevKeyBits: Sendable, Hashable {
    private var words = SIMD16<UInt64>()

    public init() {}

    public subscript(code: UInt16) -> Bool {
        get { code < 1024 && words[Int(code >> 6)] & (1 << UInt64(code & 63)) != 0 }
        set {
            guard code < 1024 else { return }
            if newValue { words[Int(code >> 6)] |= 1 << UInt64(code & 63) } else { words[Int(code >> 6)] &= ~(1 << UInt64(code & 63)) }
        }
    }

    public var isEmpty: Bool { words == SIMD16() }

    /// Calls `body` with each code held in one of `self` and `other` but not both, ascending, and whether `self`
    /// holds it; allocates nothing.
    public func forEachDifference(from other: EvdevKeyBits, _ body: (UInt16, Bool) throws -> Void) rethrows {
        let difference = words ^ other.words
        guard difference != SIMD16() else { return }
        for index in 0..<16 {
            var word = difference[index]
            while word != 0 {
                let code = UInt16(index * 64 + word.trailingZeroBitCount)
                try body(code, self[code])
                word &= word - 1
            }
        }
    }

    /// The held codes, ascending.
    public var codes: [UInt16] {
        var result: [UInt16] = []
        for index in 0..<16 {
            var word = words[index]
            while word != 0 {
                result.append(UInt16(index * 64 + word.trailingZeroBitCount))
                word &= word - 1
            }
        }
        return result
    }
}

/// What a remap gives the virtual keyboard and mouse for one frame: the keys and mouse buttons held (state: what is
/// not held is released), and the relative movement since the previous frame (events: given once).
public struct DesktopFrame: Sendable, Hashable {
    /// Keyboard keys and mouse buttons held, by evdev code.
    public var held = EvdevKeyBits()
    /// Pointer movement in mouse counts (x right, y down).
    public var pointerX: Int32 = 0
    public var pointerY: Int32 = 0
    /// Wheel movement in the kernel's high-resolution units, 120 per notch (positive: up, as `REL_WHEEL`).
    public var wheel: Int32 = 0
    /// Horizontal wheel movement, 120 per notch (positive: right, as `REL_HWHEEL`).
    public var horizontalWheel: Int32 = 0

    public init() {}

    /// One notch of the wheel, in `wheel`'s units.
    public static let unitsPerNotch: Int32 = 120
}
