import CPadLinux
import Glibc
import SystemPackage

/// Owns one `/dev/input/eventN` descriptor of a pad with `FF_RUMBLE` and the one rumble effect padbridge keeps on it.
///
/// The effect is uploaded once (id −1: the kernel assigns one), then updated in place with the same id; `play`
/// writes EV_FF(id, 1), `stop` EV_FF(id, 0). Closing erases the effect (EVIOCRMFF); the kernel would also drop it
/// when the descriptor closes.
struct EvdevRumbleDevice: ~Copyable {
    let path: String
    private let descriptor: FileDescriptor
    private var effectID: Int16 = -1

    /// Opens `path` read-write and checks that it declares EV_FF with FF_RUMBLE (`.unsupported` otherwise).
    init(path: String) throws(DeviceAccessError) {
        let opened = try FileDescriptor.openDeviceNode(atPath: path)
        let hasRumble: Bool
        do throws(DeviceAccessError) {
            let hasForceFeedback = try Self.hasBit(Int32(EV_FF), eventType: 0, descriptor: opened, path: path)
            let rumbleBit = try Self.hasBit(Int32(FF_RUMBLE), eventType: Int32(EV_FF), descriptor: opened, path: path)
            hasRumble = hasForceFeedback && rumbleBit
        } catch {
            try? opened.close()
            throw error
        }
        guard hasRumble else {
            try? opened.close()
            throw DeviceAccessError(
                code: .unsupported, path: path, operation: "EVIOCGBIT(EV_FF) (the device has no FF_RUMBLE)")
        }
        self.path = path
        descriptor = opened
    }

    var hasEffect: Bool { effectID >= 0 }

    /// Uploads the rumble effect (first time) or updates it in place, with no end (replay.length 0): padbridge
    /// stops it itself.
    mutating func upload(strong: UInt16, weak: UInt16) throws(DeviceAccessError) {
        var effect = ff_effect()
        effect.type = UInt16(FF_RUMBLE)
        effect.id = effectID
        effect.replay.length = 0
        effect.replay.delay = 0
        effect.u.rumble.strong_magnitude = strong
        effect.u.rumble.weak_magnitude = weak
        let request = IoctlRequest.evdevUploadEffect
        let result = withUnsafeMutableBytes(of: &effect) { descriptor.control(request, $0.baseAddress) }
        if case let .failure(failure) = result { throw HidrawDevice.error(request.name, path: path, failure) }
        effectID = effect.id
    }

    /// EV_FF(id, 1): starts the uploaded effect (again).
    func play() throws(DeviceAccessError) {
        guard effectID >= 0 else { return }
        try writeEvent(type: UInt16(EV_FF), code: UInt16(effectID), value: 1)
    }

    /// EV_FF(id, 0): stops it.
    func stop() throws(DeviceAccessError) {
        guard effectID >= 0 else { return }
        try writeEvent(type: UInt16(EV_FF), code: UInt16(effectID), value: 0)
    }

    /// Stops and erases the effect, then closes the descriptor.
    consuming func close() {}

    deinit {
        if effectID >= 0 {
            _ = try? writeEvent(type: UInt16(EV_FF), code: UInt16(effectID), value: 0)
            _ = descriptor.control(.evdevRemoveEffect, value: UInt(effectID))
        }
        try? descriptor.close()
    }

    private func writeEvent(type: UInt16, code: UInt16, value: Int32) throws(DeviceAccessError) {
        var event = input_event()
        event.type = type
        event.code = code
        event.value = value
        let result = withUnsafeBytes(of: &event) { descriptor.writeResult($0) }
        switch result {
        case let .success(written) where written == MemoryLayout<input_event>.size: return
        case let .success(written): throw .shortWrite(path, wrote: written, of: MemoryLayout<input_event>.size)
        case let .failure(failure):
            var error = DeviceAccessError.writing(path, failure)
            if failure == .noDevice || failure == .ioError { error.code = .gone }
            throw error
        }
    }

    private static func hasBit(_ bit: Int32, eventType: Int32, descriptor: FileDescriptor, path: String)
        throws(DeviceAccessError) -> Bool
    {
        var bits = [UInt8](repeating: 0, count: 32)
        let request = IoctlRequest.evdevBits(eventType: eventType, length: bits.count)
        let result = bits.withUnsafeMutableBytes { descriptor.control(request, $0.baseAddress) }
        if case let .failure(failure) = result { throw HidrawDevice.error(request.name, path: path, failure) }
        return bits[Int(bit) / 8] & (1 << UInt8(bit % 8)) != 0
    }
}
