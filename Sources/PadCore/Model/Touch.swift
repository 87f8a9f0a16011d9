/// The touch surface a finger is on. A PlayStation pad has one touchpad; a Steam Deck has two trackpads, each
/// tracking one finger (its contacts: 0 on the left trackpad, 1 on the right).
public enum TouchSurface: UInt8, Sendable, Hashable, CaseIterable {
    /// A pad's one touchpad (DualSense, DualShock 4).
    case touchpad = 0
    case leftTrackpad = 1
    case rightTrackpad = 2

    /// The surface as JSON lines and `monitor` name it: "touchpad", "left-trackpad", "right-trackpad".
    public var name: String {
        switch self {
        case .touchpad: "touchpad"
        case .leftTrackpad: "left-trackpad"
        case .rightTrackpad: "right-trackpad"
        }
    }

    public init?(name: String) {
        guard let surface = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = surface
    }
}

/// One finger on a touch surface. Coordinates are normalised within its surface: 0...1 from left to right and top to
/// bottom.
public struct TouchContact: Sendable, Hashable {
    /// The device's tracking id for this finger (DualSense: a 7-bit counter).
    public var trackingID: UInt8
    public var active: Bool
    /// Where the finger is: a pad's touchpad, or one of a Steam Deck's trackpads. Stored in what would be padding
    /// (before `x`), so the snapshot is no larger for it.
    public var surface: TouchSurface
    public var x: Double
    public var y: Double

    @inlinable public init(
        trackingID: UInt8 = 0, active: Bool, surface: TouchSurface = .touchpad, x: Double = 0, y: Double = 0
    ) {
        self.trackingID = trackingID
        self.active = active
        self.surface = surface
        self.x = x
        self.y = y
    }

    public static let lifted = TouchContact(active: false)
}

/// The two contacts a DualSense or DualShock 4 touchpad tracks, or a Steam Deck's two trackpads (one each), stored
/// inline.
public struct TouchContacts: Sendable, Hashable {
    public static let count = 2
    public var first: TouchContact
    public var second: TouchContact

    @inlinable public init(first: TouchContact = .lifted, second: TouchContact = .lifted) {
        self.first = first
        self.second = second
    }

    /// `index` is 0 or 1; any other index reads as lifted and ignores writes.
    @inlinable public subscript(index: Int) -> TouchContact {
        get {
            switch index {
            case 0: first
            case 1: second
            default: .lifted
            }
        }
        set {
            switch index {
            case 0: first = newValue
            case 1: second = newValue
            default: break
            }
        }
    }
}

extension TouchContacts {
    /// These contacts as a pad with one touchpad shows them (a virtual DualSense or DualShock 4): a finger on a
    /// Steam Deck's left trackpad lands on the touchpad's left half, one on its right trackpad on the right half
    /// (x halved, y kept); fingers on the touchpad stay as they are.
    @inlinable public var onOneTouchpad: TouchContacts {
        guard first.surface != .touchpad || second.surface != .touchpad else { return self }
        return TouchContacts(first: first.onOneTouchpad, second: second.onOneTouchpad)
    }

    /// These contacts as a Steam Deck shows them: the left trackpad's finger as contact 0, the right's as contact
    /// 1. A finger on a touchpad's left half goes to the left trackpad, on its right half to the right one (x
    /// doubled within the half); where both fingers fall on one half, the first one there wins.
    @inlinable public var onTwoTrackpads: TouchContacts {
        var left = TouchContact.lifted, right = TouchContact.lifted
        left.surface = .leftTrackpad
        right.surface = .rightTrackpad
        for contact in [first, second] where contact.active {
            let placed = contact.onTrackpads
            if placed.surface == .leftTrackpad, !left.active {
                left = placed
            } else if placed.surface == .rightTrackpad, !right.active {
                right = placed
            }
        }
        return TouchContacts(first: left, second: right)
    }
}

extension TouchContact {
    @inlinable var onOneTouchpad: TouchContact {
        var placed = self
        switch surface {
        case .touchpad: return self
        case .leftTrackpad: placed.x = x / 2
        case .rightTrackpad: placed.x = 0.5 + x / 2
        }
        placed.surface = .touchpad
        return placed
    }

    @inlinable var onTrackpads: TouchContact {
        guard surface == .touchpad else { return self }
        var placed = self
        if x < 0.5 {
            placed.surface = .leftTrackpad
            placed.x = x * 2
        } else {
            placed.surface = .rightTrackpad
            placed.x = min(1, (x - 0.5) * 2)
        }
        return placed
    }
}
