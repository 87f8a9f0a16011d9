/// Builds one controller's `PadSnapshot` from the kernel events of its event nodes: the pad node (buttons, sticks,
/// triggers, d-pad, through an `EvdevLayout`), the touchpad node (multitouch slots) and the motion node
/// (accelerometer and gyroscope, scaled by their resolution).
///
/// Each node's events are a frame ended by its own SYN_REPORT; changes are held per node and land in `snapshot`
/// only when that node's frame ends, so a read that stops mid-frame never shows half a frame. After a SYN_DROPPED
/// the reader hands on a catch-up: the device's whole state read back by libevdev, ended by a SYN_REPORT. It is
/// applied like any other events, on top of the frame that was cut short, and sets every key and axis. Nothing is
/// lost: the next frame is the device's full state. (A motion node with a sensor clock shows its catch-up only with
/// its next sample, which carries the time: a sample shown with another's time would put the gap into the next
/// integration step of whoever integrates gyro by MSC_TIMESTAMP.)
public struct EvdevSnapshotAssembler: Sendable {
    /// The state as of the last completed frame of every node.
    public private(set) var snapshot: PadSnapshot

    private let layout: EvdevLayout
    private let padAxes: [UInt16: EvdevAbsoluteInfo]
    /// The pad node's absolute axes by code (0...ABS_MAX): what `layout` makes of each, and its range (the
    /// per-event lookups as array reads, not dictionary lookups).
    private let padAbsoluteRoles: [(role: EvdevAbsoluteRole, info: EvdevAbsoluteInfo)?]
    private let touchpadAxes: [UInt16: EvdevAbsoluteInfo]
    private let motionAxes: [UInt16: EvdevAbsoluteInfo]
    /// Pending state per node; only the fields the node drives are taken from it when its frame ends.
    private var padPending: PadSnapshot
    private var touchPending: PadSnapshot
    private var motionPending: PadSnapshot
    private var touchSlot: Int = 0
    /// Nodes between a SYN_DROPPED and the SYN_REPORT that ends the catch-up (a bit per role).
    private var resyncing: UInt8 = 0
    /// False from a motion node's SYN_DROPPED until its next MSC_TIMESTAMP: the catch-up's values have no sample
    /// time (libevdev reads no EV_MSC back), so a node with a sensor clock shows them only with its next sample's.
    private var motionSampleTimeKnown = true
    /// Whether the pad node reports the touchpad click (an SDL mapping may say so); otherwise the touchpad node
    /// does (hid-playstation: BTN_LEFT there).
    private let padDrivesTouchpadButton: Bool
    /// Buttons no event node reports, read from the pad's hidraw reports instead (a DualSense Edge's back
    /// buttons): `reportButtonMask` says which, `reportButtons` which of them are pressed. Kept over the pad node's
    /// frames.
    private var reportButtons = ButtonSet()
    private var reportButtonMask = ButtonSet()

    /// `absoluteInfo` holds each node's absolute axes (from EVIOCGABS) keyed by the node's role.
    public init(layout: EvdevLayout, absoluteInfo: [EvdevNodeRole: [UInt16: EvdevAbsoluteInfo]]) {
        self.layout = layout
        let padAxes = absoluteInfo[.pad] ?? [:]
        self.padAxes = padAxes
        padAbsoluteRoles = (0...Self.absoluteCodeMaximum).map { code in
            layout.absolutes[code].map { ($0, padAxes[code] ?? EvdevAbsoluteInfo(minimum: -32768, maximum: 32767)) }
        }
        touchpadAxes = absoluteInfo[.touchpad] ?? [:]
        motionAxes = absoluteInfo[.motion] ?? [:]
        padDrivesTouchpadButton = layout.keys.values.contains(.button(.touchpad))
        snapshot = .neutral
        padPending = .neutral
        touchPending = .neutral
        motionPending = .neutral
    }

    /// Sets the starting state from a node's current kernel state (pressed keys and the absolute values in its
    /// absinfo; for a touchpad, the contacts in `touchSlots` and the node's current slot, the value of its
    /// ABS_MT_SLOT), so a button held or a finger down when reading starts (or when a pad comes back) is not missed,
    /// and slot values the kernel sends without an ABS_MT_SLOT land on the slot it means.
    public mutating func seed(
        _ role: EvdevNodeRole, pressedKeys: some Sequence<UInt16>, touchSlots: [EvdevTouchSlot] = []
    ) {
        for code in pressedKeys {
            apply(EvdevEvent(type: EvdevCode.evKey, code: code, value: 1), from: role)
        }
        if role == .touchpad {
            for contact in touchSlots where contact.trackingID >= 0 && (0..<TouchContacts.count).contains(contact.slot) {
                touchSlot = contact.slot
                applyTouch(code: EvdevCode.absMTTrackingID, value: contact.trackingID)
                applyTouch(code: EvdevCode.absMTPositionX, value: contact.x)
                applyTouch(code: EvdevCode.absMTPositionY, value: contact.y)
            }
            touchSlot = Int(touchpadAxes[EvdevCode.absMTSlot]?.value ?? 0)
        }
        let axes: [UInt16: EvdevAbsoluteInfo] =
            switch role {
            case .pad: padAxes
            case .motion: motionAxes
            case .touchpad, .other: [:]
            }
        for (code, info) in axes.sorted(by: { $0.key < $1.key }) {
            apply(EvdevEvent(type: EvdevCode.evAbs, code: code, value: info.value), from: role)
        }
        commit(role)
    }

    /// What one event did.
    public enum Outcome: Sendable, Hashable {
        /// Held until the node's frame ends.
        case pending
        /// The node's frame ended; `snapshot` is up to date.
        case frameCompleted(resynced: Bool)
        /// The kernel dropped events on this node (its buffer overflowed); the catch-up (full state) follows.
        case dropped
    }

    /// Applies one event read from the node with `role`.
    @discardableResult
    public mutating func apply(_ event: EvdevEvent, from role: EvdevNodeRole) -> Outcome {
        switch event.type {
        case EvdevCode.evSyn:
            switch event.code {
            case EvdevCode.synReport:
                let wasResyncing = resyncing & Self.bit(role) != 0
                resyncing &= ~Self.bit(role)
                if role != .motion || motionSampleTimeKnown || snapshot.motion.timestampMicroseconds == 0 {
                    commit(role)
                }
                if role == .motion { motionSampleTimeKnown = true }
                return .frameCompleted(resynced: wasResyncing)
            case EvdevCode.synDropped:
                resyncing |= Self.bit(role)
                if role == .motion { motionSampleTimeKnown = false }
                return .dropped
            default:
                return .pending
            }
        case EvdevCode.evKey:
            applyKey(code: event.code, pressed: event.value != 0, from: role)
        case EvdevCode.evAbs:
            applyAbsolute(code: event.code, value: event.value, from: role)
        case EvdevCode.evMsc where role == .motion && event.code == EvdevCode.mscTimestamp:
            motionPending.motion.timestampMicroseconds = UInt64(UInt32(bitPattern: event.value))
            motionSampleTimeKnown = true
        default:
            break
        }
        return .pending
    }

    /// ABS_MAX: absolute axis codes run 0...0x3f.
    static let absoluteCodeMaximum: UInt16 = 0x3f

    private static func bit(_ role: EvdevNodeRole) -> UInt8 {
        switch role {
        case .pad: 1
        case .motion: 2
        case .touchpad: 4
        case .other: 8
        }
    }

    private mutating func commit(_ role: EvdevNodeRole) {
        switch role {
        case .pad:
            let touchpadClick = snapshot[.touchpad]
            snapshot.buttons = ButtonSet(
                rawValue: padPending.buttons.rawValue & ~reportButtonMask.rawValue | reportButtons.rawValue)
            if !padDrivesTouchpadButton { snapshot[.touchpad] = touchpadClick }
            for axis in Axis.allCases { snapshot[axis] = padPending[axis] }
        case .touchpad:
            snapshot.touches = touchPending.touches
            if !padDrivesTouchpadButton { snapshot[.touchpad] = touchPending[.touchpad] }
        case .motion:
            snapshot.motion = motionPending.motion
        case .other:
            break
        }
    }

    /// Shows `buttons` for the buttons in `mask`, which no event node reports (the pad's hidraw reports do): they
    /// land in `snapshot` at once and stay over the pad node's frames. Returns whether `snapshot` changed.
    public mutating func showReportButtons(_ buttons: ButtonSet, of mask: ButtonSet) -> Bool {
        let pressed = ButtonSet(rawValue: buttons.rawValue & mask.rawValue)
        reportButtonMask = mask
        guard pressed != reportButtons else { return false }
        reportButtons = pressed
        snapshot.buttons = ButtonSet(rawValue: snapshot.buttons.rawValue & ~mask.rawValue | pressed.rawValue)
        return true
    }

    private mutating func applyKey(code: UInt16, pressed: Bool, from role: EvdevNodeRole) {
        switch role {
        case .pad:
            switch layout.keys[code] {
            case .button(let button)?: padPending[button] = pressed
            case .trigger(let axis)?: padPending[axis] = pressed ? axis.range.upperBound : 0
            case nil: break
            }
        case .touchpad:
            if code == EvdevCode.btnMouseLeft { touchPending[.touchpad] = pressed }
        case .motion, .other:
            break
        }
    }

    private mutating func applyAbsolute(code: UInt16, value: Int32, from role: EvdevNodeRole) {
        switch role {
        case .pad:
            guard code <= Self.absoluteCodeMaximum, let (target, info) = padAbsoluteRoles[Int(code)] else { return }
            switch target {
            case .axis(let axis, let inverted):
                padPending[axis] = Self.scale(value, from: info, onto: axis, inverted: inverted)
            case .buttons(let negative, let positive):
                padPending[negative] = value < 0
                padPending[positive] = value > 0
            case .halfAxis(let axis, let positiveSide, let inverted):
                padPending[axis] = Self.scaleHalf(value, from: info, onto: axis, positiveSide: positiveSide, inverted: inverted)
            case .buttonBeyondHalf(let button, let positiveSide):
                let middle = (Int64(info.minimum) + Int64(info.maximum)) / 2
                let half = max(1, (Int64(info.maximum) - Int64(info.minimum)) / 4)
                padPending[button] = positiveSide ? Int64(value) > middle + half : Int64(value) < middle - half
            }
        case .touchpad:
            applyTouch(code: code, value: value)
        case .motion:
            applyMotion(code: code, value: value)
        case .other:
            break
        }
    }

    private mutating func applyTouch(code: UInt16, value: Int32) {
        switch code {
        case EvdevCode.absMTSlot:
            touchSlot = Int(value)
        case EvdevCode.absMTTrackingID:
            var contact = touchPending.touches[touchSlot]
            contact.active = value >= 0
            if value >= 0 { contact.trackingID = UInt8(truncatingIfNeeded: value) }
            touchPending.touches[touchSlot] = contact
        case EvdevCode.absMTPositionX:
            touchPending.touches[touchSlot].x = Self.unit(value, of: touchpadAxes[code])
        case EvdevCode.absMTPositionY:
            touchPending.touches[touchSlot].y = Self.unit(value, of: touchpadAxes[code])
        default:
            break
        }
    }

    private mutating func applyMotion(code: UInt16, value: Int32) {
        guard code <= EvdevCode.absRZ else { return }
        let resolution = Double(max(1, motionAxes[code]?.resolution ?? 1))
        let isGyro = code >= EvdevCode.absRX
        let (axis, sign) = layout.motionAxes.modelAxis(forNodeAxis: Int(code - (isGyro ? EvdevCode.absRX : EvdevCode.absX)))
        let reading = sign * Double(value) / resolution
        if isGyro {
            motionPending.motion.gyroRadiansPerSecond[axis] = reading * Self.radiansPerDegree
        } else {
            motionPending.motion.accelMetersPerSecondSquared[axis] = reading * standardGravityMetersPerSecondSquared
        }
    }

    private static let radiansPerDegree = Double.pi / 180

    /// Maps `value` from the node's range onto the axis's. Triggers: the minimum is 0, the maximum 32767. Sticks: the
    /// centre is exactly 0 (for an even count of values such as 0...255, the upper middle, 128, which is what pads
    /// send at rest), each half scaled on its own onto -32768...0 and 0...32767, so a resting stick reads 0.
    static func scale(_ value: Int32, from info: EvdevAbsoluteInfo, onto axis: Axis, inverted: Bool) -> Int16 {
        let minimum = Int64(info.minimum), maximum = Int64(info.maximum)
        guard maximum > minimum else { return 0 }
        let clamped = min(max(Int64(value), minimum), maximum)
        let result: Int64
        if axis.isTrigger {
            let fraction = inverted ? maximum - clamped : clamped - minimum
            result = fraction * Int64(Int16.max) / (maximum - minimum)
        } else {
            let centre = (minimum + maximum + 1) / 2
            let offset = inverted ? centre - clamped : clamped - centre
            if offset >= 0 {
                let span = inverted ? centre - minimum : maximum - centre
                result = span == 0 ? 0 : offset * Int64(Int16.max) / span
            } else {
                let span = inverted ? maximum - centre : centre - minimum
                result = span == 0 ? 0 : offset * 32768 / span
            }
        }
        return Int16(min(max(result, Int64(Int16.min)), Int64(Int16.max)))
    }

    /// Maps one half of the node's range (centre to the `positiveSide` end) onto the whole axis range; the other
    /// half reads as the centre. `inverted` runs from that end back to the centre.
    static func scaleHalf(
        _ value: Int32, from info: EvdevAbsoluteInfo, onto axis: Axis, positiveSide: Bool, inverted: Bool
    ) -> Int16 {
        let minimum = Double(info.minimum), maximum = Double(info.maximum)
        guard maximum > minimum else { return 0 }
        let middle = (minimum + maximum) / 2
        let reading = Double(value)
        var fraction = positiveSide ? (reading - middle) / (maximum - middle) : (middle - reading) / (middle - minimum)
        fraction = min(max(fraction, 0), 1)
        if inverted { fraction = 1 - fraction }
        let low = Double(axis.range.lowerBound), high = Double(axis.range.upperBound)
        return Int16((low + fraction * (high - low)).rounded())
    }

    /// Maps a touch coordinate onto 0...1 using the axis's absinfo.
    static func unit(_ value: Int32, of info: EvdevAbsoluteInfo?) -> Double {
        guard let info, info.maximum > info.minimum else { return 0 }
        let fraction = Double(Int64(value) - Int64(info.minimum)) / Double(Int64(info.maximum) - Int64(info.minimum))
        return min(max(fraction, 0), 1)
    }
}

/// One multitouch slot of a touchpad node as the kernel holds it (EVIOCGMTSLOTS): where a contact down when reading
/// starts is.
public struct EvdevTouchSlot: Sendable, Hashable {
    public var slot: Int
    /// -1: no contact in the slot.
    public var trackingID: Int32
    public var x: Int32
    public var y: Int32

    public init(slot: Int, trackingID: Int32, x: Int32, y: Int32) {
        self.slot = slot
        self.trackingID = trackingID
        self.x = x
        self.y = y
    }
}
