public import Logging
public import PadCore

/// A pad padbridge shows to the system. Confined to the thread of the `DeviceEventLoop` it was created with.
public protocol VirtualPad: AnyObject {
    var kind: VirtualPadKind { get }
    /// Shows `snapshot` to readers, writing only what changed since the last apply (state-based: whatever is not
    /// pressed in `snapshot` is released).
    func apply(_ snapshot: PadSnapshot) throws(DeviceAccessError)
    /// Releases everything (sends the neutral state and SYN), then destroys the device. Idempotent; deinit calls it.
    func close()
}

extension VirtualPadKind {
    /// Creates a virtual pad of this kind: `VirtualXbox360Pad.create` or a `UhidVirtualPad` with the kind's
    /// emulation. `seed` is a uhid pad's identity (its MAC) and `bus` the transport of a PlayStation pad; an Xbox
    /// 360 pad has neither and ignores them, an Xbox Series pad and a Switch Pro Controller are on Bluetooth whatever `bus` says.
    public func createPad(
        name: String?, seed: String, bus: HIDTransport, physicalPath: String? = nil, loop: DeviceEventLoop,
        logger: Logger, onFeedback: @escaping (FeedbackEvent) -> Void,
        onReady: @escaping (VirtualPadNodes) -> Void
    ) throws(DeviceAccessError) -> any VirtualPad {
        switch self {
        case .xbox360:
            try VirtualXbox360Pad.create(
                name: name, physicalPath: physicalPath, loop: loop, logger: logger, onFeedback: onFeedback,
                onReady: onReady)
        case .dualSense, .dualSenseEdge:
            try UhidVirtualPad.create(
                EmulatedDualSense(
                    edge: self == .dualSenseEdge, name: name, seed: seed, transport: bus, physicalPath: physicalPath),
                loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
        case .dualShock4:
            try UhidVirtualPad.create(
                EmulatedDualShock4(name: name, seed: seed, transport: bus, physicalPath: physicalPath),
                loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
        case .xboxOne:
            try UhidVirtualPad.create(
                EmulatedXboxOneBluetooth(name: name, seed: seed, physicalPath: physicalPath),
                loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
        case .switchPro:
            try UhidVirtualPad.create(
                EmulatedSwitchPro(name: name, seed: seed, physicalPath: physicalPath),
                loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
        case .steamDeck:
            try UhidVirtualPad.create(
                EmulatedSteamDeck(name: name, seed: seed, physicalPath: physicalPath),
                loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
        }
    }
}
