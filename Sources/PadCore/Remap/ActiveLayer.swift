/// The pipeline's layers (`RemapProfile.layers`): a layer is active while its hold control is held (a button after
/// toggles and turbo, or a trigger or stick half beyond its threshold); of several held, the last one pressed. Writes
/// `RemapFrame.activeTable`.
///
/// When the active layer changes, a button held across the change whose mapping differs in the new layer is silenced
/// (`RemapFrame.silenced`) until it is released: it releases what the old mapping pressed and never presses the new
/// target by itself. A button pressed in the same snapshot as the change (together with the hold control, as one
/// report of a real pad can carry both) pressed nothing under the old mapping and follows the new one at once.
struct ActiveLayer: RemapStage {
    /// The hold control of `profile.layers[i]` at index i.
    private let holdControls: [SourceSlot]
    private let tableCount: Int
    /// At `old * tableCount + new`: the buttons whose routes differ between routing tables `old` and `new`.
    private let buttonsRoutedDifferently: [ButtonSet]

    /// Held layers (indices into `holdControls`) in the order they were pressed; the last one is active.
    private var heldLayers: [Int] = []
    private(set) var activeTable = 0
    private(set) var silenced = ButtonSet()

    /// `tables` as `TargetRouting.tables(for: profile)` makes them: index 0 the base map, i + 1 layer i.
    init(profile: RemapProfile, tables: [RoutingTable]) {
        holdControls = profile.layers.compactMap { SourceSlot($0.holdControl) }
        tableCount = tables.count
        var differing: [ButtonSet] = []
        for old in tables {
            for new in tables {
                differing.append(
                    ButtonSet(Button.allCases.filter { button in
                        let index = SourceSlot.digital(button).index
                        return old.routes[index] != new.routes[index]
                    }))
            }
        }
        buttonsRoutedDifferently = differing
    }

    /// No layer: the base map is always in force and nothing is silenced.
    var passesThroughUnchanged: Bool { holdControls.isEmpty }

    mutating func apply(_ frame: inout RemapFrame, atMicroseconds _: UInt64) {
        for (layerIndex, hold) in holdControls.enumerated() {
            let isHeld =
                switch hold {
                case let .digital(button): frame.held.contains(button)
                case let .oneSided(slot): frame.thresholdLatches[slot.index]
                }
            if isHeld, !heldLayers.contains(layerIndex) {
                heldLayers.append(layerIndex)
            } else if !isHeld {
                heldLayers.removeAll { $0 == layerIndex }
            }
        }
        silenced.rawValue &= frame.held.rawValue
        let newTable = heldLayers.last.map { $0 + 1 } ?? 0
        if newTable != activeTable {
            let heldAcross = frame.held.rawValue & ~frame.newlyPressed.rawValue
            silenced.rawValue |= heldAcross & buttonsRoutedDifferently[activeTable * tableCount + newTable].rawValue
            activeTable = newTable
        }
        frame.activeTable = activeTable
        frame.silenced = silenced
    }
}
