import CPadLinux
import Glibc
import Logging
import PadCore

/// Plays the force feedback games send a uinput device that declared EV_FF: uinput hands uploads, erases and
/// play/stop to the device's owner; this answers them at once, mixes the playing effects like ff-memless
/// (`ForceFeedbackMixer`), honours delays and lengths with a timer, and calls `onRumble` whenever the combined
/// motor output changes. Used by the virtual Xbox 360 pad and by a pad replayed through uinput.
///
/// Confined to the loop's thread. The owner feeds it what the device's descriptor reads
/// (`UinputDevice.serviceForceFeedback`) and calls `close()` before the device goes.
final class UinputForceFeedback {
    /// The effect types it can play, as a device may declare them (FF_RUMBLE and FF_PERIODIC with its waveforms,
    /// and FF_GAIN); others are refused at upload.
    static let playableCodes: Set<Int32> = [FF_RUMBLE, FF_PERIODIC, FF_SINE, FF_TRIANGLE, FF_SQUARE, FF_SAW_UP, FF_SAW_DOWN, FF_GAIN]

    private var mixer = ForceFeedbackMixer()
    private var lastOutput = ForceFeedbackMixer.Output.off
    private var timer: LoopTimer?
    private let logger: Logger
    private let onRumble: (Rumble) -> Void

    init(loop: DeviceEventLoop, logger: Logger, onRumble: @escaping (Rumble) -> Void) throws(DeviceAccessError) {
        self.logger = logger
        self.onRumble = onRumble
        // unowned: close() ends the timer before the player goes.
        timer = loop.makeTimer { [unowned self] in self.update() }
    }

    /// Whether any motor runs now.
    var isRumbling: Bool { lastOutput != .off }

    fileprivate func setGain(_ gain: Int32) { mixer.setGain(UInt16(clamping: gain)) }

    fileprivate func play(effect id: Int, count: Int32, now: MonotonicInstant) {
        mixer.play(id: id, count: count, now: now)
    }

    /// The answer to an upload: 0 when the effect is stored, -EINVAL when it cannot be played.
    fileprivate func upload(_ effect: ff_effect, now: MonotonicInstant) -> Int32 {
        let waveform: ForceFeedbackMixer.Effect.Waveform? =
            switch Int32(effect.type) {
            case FF_RUMBLE: .rumble(strong: effect.u.rumble.strong_magnitude, weak: effect.u.rumble.weak_magnitude)
            case FF_PERIODIC: .periodic(magnitude: effect.u.periodic.magnitude)
            default: nil
            }
        guard let waveform else { return -EINVAL }  // the input core lets through only declared types; be strict anyway
        let stored = ForceFeedbackMixer.Effect(waveform: waveform, length: effect.replay.length, delay: effect.replay.delay)
        let result = mixer.upload(id: Int(effect.id), stored, now: now) ? 0 : -EINVAL
        logger.trace("force-feedback upload", metadata: ["id": "\(effect.id)", "retval": "\(result)"])
        return result
    }

    fileprivate func erase(effect id: Int) { mixer.erase(id: id) }

    /// Recomputes the motors, reports a change, and arms the timer for the next start or end of an effect.
    func update() {
        let now = MonotonicInstant.now()
        mixer.advance(to: now)
        let output = mixer.output(at: now)
        if output != lastOutput {
            lastOutput = output
            onRumble(Rumble(strong: Double(output.strong) / 65535, weak: Double(output.weak) / 65535))
        }
        if let deadline = mixer.nextDeadline(after: now) {
            timer?.schedule(at: deadline)
        } else {
            timer?.cancel()
        }
    }

    /// Stops the timer; a motor still running is reported off. Idempotent.
    func close() {
        timer?.close()
        timer = nil
        if lastOutput != .off {
            lastOutput = .off
            onRumble(.off)
        }
    }
}

extension UinputDevice {
    /// Answers the force-feedback requests among `events` (read from this device) through `player`: uploads and
    /// erases at once (the game's ioctl waits for them), plays, stops and gain. Other events are ignored.
    func serviceForceFeedback(_ events: [input_event], with player: UinputForceFeedback) throws(DeviceAccessError) {
        let now = MonotonicInstant.now()
        for event in events {
            switch (Int32(event.type), Int32(event.code)) {
            case (EV_UINPUT, UI_FF_UPLOAD):
                var upload = try beginUpload(requestID: UInt32(bitPattern: event.value))
                upload.retval = player.upload(upload.effect, now: now)
                try endUpload(upload)
            case (EV_UINPUT, UI_FF_ERASE):
                var erase = try beginErase(requestID: UInt32(bitPattern: event.value))
                player.erase(effect: Int(erase.effect_id))
                erase.retval = 0
                try endErase(erase)
            case (EV_FF, FF_GAIN):
                player.setGain(event.value)
            case (EV_FF, let code) where code < ForceFeedbackMixer.effectSlots:
                player.play(effect: Int(code), count: event.value, now: now)
            default:
                break  // EV_FF/FF_AUTOCENTER, EV_SYN and anything else uinput echoes back.
            }
        }
        player.update()
    }
}
