public import PadCore

/// Feedback for pads padbridge reaches through evdev force feedback (Xbox, Switch and generic pads): rumble as one
/// FF_RUMBLE effect, updated in place; and the player LEDs where the pad's driver makes LED class devices for them: an
/// Xbox 360 pad's ring of lights (xpad, `XboxLedRing`) or a Switch pad's four player lights (hid-nintendo,
/// `NintendoPlayerLights`).
public final class EvdevRumbleSink: PhysicalFeedbackSink {
    private var device: EvdevRumbleDevice?
    private var ring: XpadLedRingDevice?
    private var lights: NintendoPlayerLightDevices?
    /// The lights' LED class devices (the ring's, or the directory of the player lights), when the pad has them and
    /// this process can write them.
    private let lightsPath: String?
    /// Why lights the pad has are not driven: their `brightness` attributes are the kernel's, root's to write unless
    /// a udev rule hands them on; then rumble goes on without them.
    private let lightsUnavailable: DeviceAccessError?
    /// What the player lights showed when opened, as `Feedback.playerLeds` (nil: unknown).
    public let initialPlayerLeds: UInt8?
    private var playing = false

    public init(path: String) throws(DeviceAccessError) {
        device = try EvdevRumbleDevice(path: path)
        var initial: UInt8?
        var opened: String?
        do {
            if let directory = XpadLedRingDevice.ledDirectory(forEventNode: path) {
                ring = try XpadLedRingDevice(ledDirectory: directory)
                opened = directory
            } else if let found = NintendoPlayerLightDevices.lights(forEventNode: path) {
                let devices = try NintendoPlayerLightDevices(ledsDirectory: found.directory, names: found.names)
                let lit = devices.lit
                initial = lit.contains(nil) ? nil : NintendoPlayerLights.playerLeds(lights: lit.compactMap { $0 })
                lights = consume devices
                opened = found.directory
            }
            lightsUnavailable = nil
        } catch {
            lightsUnavailable = error
        }
        lightsPath = opened
        initialPlayerLeds = initial
    }

    public var supported: FeedbackParts { lightsPath == nil ? .rumbleOnly : [.rumble, .playerLeds] }

    /// What the sink drives, for log lines and refusals.
    public var summary: String {
        let kind = ring != nil ? "xpad's LED ring" : "hid-nintendo's player lights"
        if let lightsPath { return "evdev force feedback and \(kind) (\(lightsPath))" }
        if let lightsUnavailable { return "evdev force feedback (rumble only; the pad's lights: \(lightsUnavailable))" }
        return "evdev force feedback (rumble only)"
    }

    public func write(_ feedback: Feedback) throws(DeviceAccessError) {
        if let playerLeds = feedback.playerLeds {
            if ring != nil { try ring!.send(XboxLedRing.command(playerLeds: playerLeds)) }
            if lights != nil { try lights!.show(NintendoPlayerLights.lights(playerLeds: playerLeds)) }
        }
        guard let rumble = feedback.rumble, device != nil else { return }
        if rumble.isOff {
            if playing { try device!.stop() }
            playing = false
        } else {
            try device!.upload(strong: Rumble.word(rumble.strong), weak: Rumble.word(rumble.weak))
            try device!.play()
            playing = true
        }
    }

    public func close() {
        device.take()?.close()
        ring.take()?.close()
        lights.take()?.close()
    }
}
