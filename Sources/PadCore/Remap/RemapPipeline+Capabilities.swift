extension RemapPipeline {
    /// What the virtual pad must expose for a source with `source`'s capabilities, derived through the pipeline
    /// (as evsieve derives a virtual device's capabilities from its maps): every target that some control the
    /// source has can reach in the base map or any layer, the right stick when the gyro drives it and the source
    /// has motion, and the source's touchpad and motion passed on. Layer hold controls reach nothing.
    /// The result's `name` is the target's.
    public func outputCapabilities(from source: VirtualPadCapabilities) -> VirtualPadCapabilities {
        var buttons = ButtonSet()
        var axes: Set<Axis> = []
        var sources: [SourceSlot] = source.buttons.pressed.map(SourceSlot.digital)
        sources += OneSidedSlot.all.filter { source.axes.contains($0.axis) }.map(SourceSlot.oneSided)
        func reach(_ target: OutputSlot) {
            switch target {
            case let .digital(button): buttons.insert(button)
            case let .oneSided(targetSlot): axes.insert(targetSlot.axis)
            case .key, .scroll: break
            }
        }
        for table in tables {
            for slot in sources {
                table.routes[slot.index].forEach(reach)
            }
        }
        for (button, entry) in profile.tapHold where source.buttons.contains(button) {
            (entry.tap + entry.hold).compactMap(OutputSlot.init).forEach(reach)
        }
        for chord in profile.chords where source.buttons.contains(chord.first) && source.buttons.contains(chord.second) {
            chord.targets.compactMap(OutputSlot.init).forEach(reach)
        }
        if profile.gyro != nil, source.motion {
            axes.formUnion([.rightx, .righty])
        }
        return VirtualPadCapabilities(
            name: target.name, buttons: buttons, axes: Array(axes), touchpad: source.touchpad, motion: source.motion)
    }
}
