/// The pipeline's map (`RemapProfile.map` and each layer's over it): every source routed to its targets through the
/// routing table `ActiveLayer` put in force. A button drives its targets while held (unless silenced, or withheld by
/// `TimedPresses`, which also adds the tap/hold and chord targets); a one-sided source drives a one-sided target by its
/// magnitude and a button or key while beyond its threshold. Writes `RemapFrame.output`'s buttons, sticks and
/// triggers, the keys held in `RemapFrame.desktop` and `RemapFrame.scrollTargets`; keeps no state.
struct TargetRouting: RemapStage {
    /// Index 0 is the base map, index i + 1 is `profile.layers[i]` over the base.
    let tables: [RoutingTable]

    init(tables: [RoutingTable]) { self.tables = tables }

    /// The routing tables for `profile`: the base map over the identity, then each layer over the base. Hold controls
    /// and the sticks on the mouse drive nothing of the virtual pad, in any of them.
    static func tables(for profile: RemapProfile) -> [RoutingTable] {
        var base = RoutingTable.identity
        base.apply(profile.map)
        var tables = [base]
        for layer in profile.layers {
            var table = base
            table.apply(layer.map)
            tables.append(table)
        }
        let holds = profile.layers.compactMap { SourceSlot($0.holdControl) }
        let mouseSticks = profile.sticksOnTheMouse.flatMap { stick in
            [stick.xAxis, stick.yAxis].flatMap { axis in
                StickDirection.allCases.map { SourceSlot.oneSided(OneSidedSlot(axis: axis, direction: $0)) }
            }
        }
        for index in tables.indices {
            for silent in holds + mouseSticks { tables[index].routes[silent.index] = [] }
        }
        return tables
    }

    /// One table, routing every source to itself. Passes every control on as it is, but for a trigger below 0
    /// (out of its range), which comes out as 0: the pass-through in `RemapPipeline.apply` does the same.
    var passesThroughUnchanged: Bool { tables == [.identity] }

    func apply(_ frame: inout RemapFrame, atMicroseconds _: UInt64) {
        let table = tables[frame.activeTable]
        var outputButtons = ButtonSet()
        var outputMagnitudes = SlotMagnitudes()
        var desktopFrame = DesktopFrame()
        var scrollTargets: [ScrollDirection] = []
        func drive(_ targets: [OutputSlot], fraction: Double, exact: (slot: OneSidedSlot, magnitude: Int32)?, pressed: Bool) {
            for target in targets {
                switch target {
                case let .key(code):
                    if pressed { desktopFrame.held[code] = true }
                case let .scroll(direction):
                    if pressed && !scrollTargets.contains(direction) { scrollTargets.append(direction) }
                case let .digital(button):
                    if pressed { outputButtons.insert(button) }
                case let .oneSided(slot):
                    let magnitude: Int32
                    if let exact, exact.slot.fullMagnitude == slot.fullMagnitude {
                        magnitude = exact.magnitude
                    } else {
                        magnitude = Int32((min(1, max(0, fraction)) * Double(slot.fullMagnitude)).rounded())
                    }
                    outputMagnitudes[slot.index] = max(outputMagnitudes[slot.index], magnitude)
                }
            }
        }
        let timing = frame.timing
        let driving =
            (frame.held.rawValue & ~frame.silenced.rawValue & ~timing.withheld.rawValue) | timing.replayed.rawValue
        drive(timing.targets, fraction: 1, exact: nil, pressed: true)
        for button in Button.allCases where driving & button.bit != 0 {
            drive(table.routes[SourceSlot.digital(button).index], fraction: 1, exact: nil, pressed: true)
        }
        for slot in OneSidedSlot.all {
            let magnitude = frame.magnitudes[slot.index]
            let fraction = Double(magnitude) / Double(slot.fullMagnitude)
            drive(
                table.routes[SourceSlot.oneSided(slot).index], fraction: fraction, exact: (slot, magnitude),
                pressed: frame.thresholdLatches[slot.index])
        }

        frame.output.buttons = outputButtons
        for axis in Axis.allCases {
            if axis.isTrigger {
                frame.output[axis] = Int16(outputMagnitudes[OneSidedSlot(axis: axis, direction: .positive).index])
            } else {
                let positive = outputMagnitudes[OneSidedSlot(axis: axis, direction: .positive).index]
                let negative = outputMagnitudes[OneSidedSlot(axis: axis, direction: .negative).index]
                // One side alone is exact (so -32768 and 32767 round-trip); both sides cancel as fractions, so
                // full left and full right make 0, not -1.
                if positive == 0 || negative == 0 {
                    frame.output[axis] = Int16(clamping: positive - negative)
                } else {
                    frame.output[axis] = AnalogScale.stickValue(Double(positive) / 32767 - Double(negative) / 32768)
                }
            }
        }
        frame.desktop = desktopFrame
        frame.scrollTargets = scrollTargets
    }
}

/// Source slot -> target slots.
struct RoutingTable: Hashable, Sendable {
    var routes: [[OutputSlot]]

    static let identity: RoutingTable = {
        var routes = [[OutputSlot]](repeating: [], count: SourceSlot.count)
        for button in Button.allCases { routes[SourceSlot.digital(button).index] = [.digital(button)] }
        for slot in OneSidedSlot.all { routes[SourceSlot.oneSided(slot).index] = [.oneSided(slot)] }
        return RoutingTable(routes: routes)
    }()

    /// Replaces the routes of every source `map` lists. A whole stick axis routes half to half (validated:
    /// its targets are whole stick axes).
    mutating func apply(_ map: [RemapControl: [RemapControl]]) {
        for source in RemapControl.allCases {
            guard let targets = map[source] else { continue }
            if case let .axis(axis) = source, !axis.isTrigger {
                for direction in StickDirection.allCases {
                    let half = SourceSlot.oneSided(OneSidedSlot(axis: axis, direction: direction))
                    routes[half.index] = targets.compactMap { target in
                        guard case let .axis(targetAxis) = target, !targetAxis.isTrigger else { return nil }
                        return .oneSided(OneSidedSlot(axis: targetAxis, direction: direction))
                    }
                }
            } else if let slot = SourceSlot(source) {
                routes[slot.index] = targets.compactMap(OutputSlot.init)
            }
        }
    }
}
