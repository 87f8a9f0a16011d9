/// An absolute axis's range as the kernel describes it (`struct input_absinfo`), needed to scale raw values.
public struct EvdevAbsoluteInfo: Sendable, Hashable {
    public var value: Int32
    public var minimum: Int32
    public var maximum: Int32
    public var fuzz: Int32
    public var flat: Int32
    /// Units per millimetre, per g (accelerometer) or per degree per second (gyroscope); 0 when unknown.
    public var resolution: Int32

    public init(value: Int32 = 0, minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32 = 0) {
        self.value = value
        self.minimum = minimum
        self.maximum = maximum
        self.fuzz = fuzz
        self.flat = flat
        self.resolution = resolution
    }
}

/// One kernel input event as read from an event node (`struct input_event`), kept as plain numbers so the pure
/// core can assemble snapshots from it.
public struct EvdevEvent: Sendable, Hashable {
    public var seconds: Int64
    public var microseconds: Int32
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    public init(seconds: Int64 = 0, microseconds: Int32 = 0, type: UInt16, code: UInt16, value: Int32) {
        self.seconds = seconds
        self.microseconds = microseconds
        self.type = type
        self.code = code
        self.value = value
    }

    /// The kernel's timestamp in microseconds.
    public var timestampMicroseconds: Int64 { seconds &* 1_000_000 &+ Int64(microseconds) }
}
