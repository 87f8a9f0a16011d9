/// How a pad node's evdev codes map onto padbridge's SDL-named model. Known kinds have built-in layouts
/// (xpad's and hid-playstation's differ: xpad's BTN_X/BTN_NORTH is the left face button `x`, hid-playstation's
/// BTN_NORTH is the triangle `y`); generic pads get theirs from SDL's mapping string.
public struct EvdevLayout: Sendable, Hashable {
    /// EV_KEY code -> what it drives.
    public var keys: [UInt16: EvdevKeyRole]
    /// EV_ABS code -> what it drives.
    public var absolutes: [UInt16: EvdevAbsoluteRole]
    /// How the driver's motion node points its axes (see `EvdevMotionAxes`).
    public var motionAxes: EvdevMotionAxes

    public init(
        keys: [UInt16: EvdevKeyRole], absolutes: [UInt16: EvdevAbsoluteRole], motionAxes: EvdevMotionAxes = .model
    ) {
        self.keys = keys
        self.absolutes = absolutes
        self.motionAxes = motionAxes
    }
}

/// How a driver's motion node points its axes, onto the model's (`MotionSample`, SDL's sensor axes: x to the pad's
/// right, y up out of its face, z toward the player; gyro about the same axes, right-handed). The gyro and the
/// accelerometer share the frame: ABS_X/ABS_Y/ABS_Z are acceleration, ABS_RX/ABS_RY/ABS_RZ rotation about them.
public enum EvdevMotionAxes: Sendable, Hashable {
    /// The model's own axes (hid-playstation, hid-sony, and a bridge's virtual pads).
    case model
    /// hid-nintendo's: x toward the triggers (away from the player), y to the left, z up out of the face. So the
    /// model's x is −y, its y is z and its z is −x (a rotation: lengths and handedness are kept).
    case nintendo

    /// Where the node's axis `index` (0 for X/RX, 1 for Y/RY, 2 for Z/RZ) lands in the model: its index, and
    /// the sign the reading takes there.
    public func modelAxis(forNodeAxis index: Int) -> (index: Int, sign: Double) {
        // (A switch, not a table: this runs for every motion event, and an array literal here would be built each time.)
        switch (self, index) {
        case (.model, _): (index, 1)
        case (.nintendo, 0): (2, -1)
        case (.nintendo, 1): (0, -1)
        case (.nintendo, _): (1, 1)
        }
    }
}

public enum EvdevKeyRole: Sendable, Hashable {
    case button(Button)
    /// A digital trigger: pressed is the axis at its maximum, released at 0.
    case trigger(Axis)
}

public enum EvdevAbsoluteRole: Sendable, Hashable {
    /// Scaled from the node's absinfo range onto the axis's range (sticks centred, triggers 0 at the minimum).
    case axis(Axis, inverted: Bool)
    /// A hat axis: negative presses `negative`, positive presses `positive` (ABS_HAT0X: dpleft/dpright).
    case buttons(negative: Button, positive: Button)
    /// Part of an analog axis drives a button: pressed beyond half of the range on that side.
    case buttonBeyondHalf(Button, positiveSide: Bool)
    /// One half of an analog axis drives `axis` (SDL's `+a5` / `-a5`): from the centre to the `positiveSide` end
    /// of the absinfo range maps onto the whole output range of a trigger (0 at the centre) or of a stick;
    /// the other half is ignored. `inverted` (SDL's `~`) runs it from that end back to the centre instead.
    case halfAxis(Axis, positiveSide: Bool, inverted: Bool)
}
