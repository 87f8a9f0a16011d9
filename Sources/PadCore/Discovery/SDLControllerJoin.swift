/// Joins SDL2's view of the pads with udev's, by device path, and gives generic pads SDL's standard layout.
public enum SDLControllerJoin {
    /// Each controller with the SDL entry whose path is one of its nodes. A generic pad that SDL's database maps
    /// gets the buttons and axes of that mapping as its capabilities (its pad node's codes read from `records`).
    public static func joining(
        _ controllers: [Controller], sdl: [SDLControllerInfo], records: [UdevDeviceRecord]
    ) -> [Controller] {
        controllers.map { controller in
            var joined = controller
            guard let view = sdl.first(where: { controller.nodes.allPaths.contains($0.path) }) else { return joined }
            joined.sdl = view
            guard controller.kind == .generic, let pad = controller.nodes.evdev(.pad),
                let input = records.first(where: { $0.devnode == pad.path })?.ancestors.first(where: {
                    $0.subsystem == "input"
                })
            else { return joined }
            let codes = InputDeviceCapabilities(udevProperties: input.properties)
            let layout = layout(
                for: joined, padKeyCodes: codes.keys.codes, padAbsoluteCodes: codes.absolutes.codes)
            let inputs = layout.inputs(keyCodes: codes.keys.codes, absoluteCodes: codes.absolutes.codes)
            joined.capabilities.buttons = inputs.buttons
            joined.capabilities.axes = inputs.axes
            return joined
        }
    }

    /// The layout to read a controller's pad node with: the built-in one of a known kind; for a generic pad, SDL's
    /// mapping when SDL has one that translates, else the kernel's gamepad convention.
    public static func layout(
        for controller: Controller, padKeyCodes: [UInt16], padAbsoluteCodes: [UInt16],
        padAbsoluteInfo: [UInt16: EvdevAbsoluteInfo] = [:]
    ) -> EvdevLayout {
        if let builtIn = EvdevLayout.builtIn(for: controller.kind, bus: controller.bus) { return builtIn }
        if let mapping = controller.sdl?.mapping,
            let layout = try? EvdevLayout(
                sdlMapping: mapping, keyCodes: padKeyCodes, absoluteCodes: padAbsoluteCodes,
                absoluteInfo: padAbsoluteInfo)
        {
            return layout
        }
        return .linuxGamepadConvention
    }
}
