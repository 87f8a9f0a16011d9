/// One finger on a touchpad. Coordinates are normalised: 0...1 from left to right and top to bottom.
public struct TouchContact: Sendable, Hashable {
    /// The device's tracking id for this finger (DualSense: a 7-bit counter).
    public var trackingID: UInt8
    public var active: Bool
    public var x: Double
    public var y: Double

    @inlinable public init(trackingID: UInt8 = 0, active: Bool, x: Double = 0, y: Double = 0) {
        self.trackingID = trackingID
        self.active = active
        self.x = x
        self.y = y
    }

    public static let lifted = TouchContact(active: false)
}

/// The two contacts a DualSense or DualShock 4 touchpad tracks, stored inline.
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
