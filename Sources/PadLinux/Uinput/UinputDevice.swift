import CPadLinux
import Glibc
import SystemPackage

/// Owns one `/dev/uinput` descriptor and the virtual input device made through it.
///
/// Set capabilities, `setUp`, `create`, then `write` events and service `readEvents` (force-feedback requests)
/// from the loop. `close()` destroys the device; the raw descriptor never leaves this type except to register it
/// with the `DeviceEventLoop`.
struct UinputDevice: ~Copyable {
    /// The node this owner opens; a `StaticString` so the owner stays trivially destructible (`discard self`).
    let path: StaticString
    private let descriptor: FileDescriptor

    /// Opens the uinput node read-write, non-blocking, close-on-exec.
    init(path: StaticString = "/dev/uinput") throws(DeviceAccessError) {
        self.path = path
        descriptor = try FileDescriptor.openDeviceNode(path)
    }

    /// For registering with the event loop only.
    var descriptorForPolling: FileDescriptor { descriptor }

    func enableEventType(_ type: Int32) throws(DeviceAccessError) {
        try control(.uinputSetEventBit, value: UInt(type))
    }

    func enableKey(_ code: Int32) throws(DeviceAccessError) {
        try control(.uinputSetKeyBit, value: UInt(code))
    }

    func enableRelativeAxis(_ code: Int32) throws(DeviceAccessError) {
        try control(.uinputSetRelBit, value: UInt(code))
    }

    func enableProperty(_ property: Int32) throws(DeviceAccessError) {
        try control(.uinputSetPropertyBit, value: UInt(property))
    }

    func enableForceFeedback(_ code: Int32) throws(DeviceAccessError) {
        try control(.uinputSetForceFeedbackBit, value: UInt(code))
    }

    /// Declares an absolute axis with its range, fuzz and flat (UI_SET_ABSBIT + UI_ABS_SETUP).
    /// `value`: where the axis stands when the device is created (readers' EVIOCGABS shows it from the start).
    func enableAxis(
        _ code: Int32, minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32 = 0,
        value: Int32 = 0
    ) throws(DeviceAccessError) {
        try control(.uinputSetAbsBit, value: UInt(code))
        var setup = uinput_abs_setup()
        setup.code = UInt16(code)
        setup.absinfo = input_absinfo(
            value: value, minimum: minimum, maximum: maximum, fuzz: fuzz, flat: flat, resolution: resolution)
        try withUnsafeMutableBytes(of: &setup) { (buffer) throws(DeviceAccessError) in
            try control(.uinputAbsSetup, buffer.baseAddress)
        }
    }

    func setPhysicalPath(_ phys: String) throws(DeviceAccessError) {
        var bytes = Array(phys.utf8.prefix(63)) + [0]
        let result = bytes.withUnsafeMutableBytes { descriptor.control(.uinputSetPhys, $0.baseAddress) }
        try check(result, .uinputSetPhys)
    }

    /// UI_DEV_SETUP: identity, name (truncated to 79 bytes) and the number of force-feedback effect slots.
    func setUp(name: String, bus: UInt16, vendor: UInt16, product: UInt16, version: UInt16, effectSlots: UInt32)
        throws(DeviceAccessError)
    {
        var setup = uinput_setup()
        setup.id = input_id(bustype: bus, vendor: vendor, product: product, version: version)
        setup.ff_effects_max = effectSlots
        withUnsafeMutableBytes(of: &setup.name) { buffer in
            for (index, byte) in name.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        try withUnsafeMutableBytes(of: &setup) { (buffer) throws(DeviceAccessError) in
            try control(.uinputSetup, buffer.baseAddress)
        }
    }

    func create() throws(DeviceAccessError) {
        try control(.uinputCreate, value: 0)
    }

    /// The sysfs name of the created input device ("input17").
    func systemName() throws(DeviceAccessError) -> String {
        var name = [UInt8](repeating: 0, count: 64)
        let request = IoctlRequest.uinputSysname(length: name.count)
        let result = name.withUnsafeMutableBytes { descriptor.control(request, $0.baseAddress) }
        try check(result, request)
        return String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Writes `events` in one write(2); end them with EV_SYN/SYN_REPORT.
    func write(_ events: [input_event]) throws(DeviceAccessError) {
        try events.withUnsafeBytes { bytes in Result { () throws(DeviceAccessError) in try write(bytes) } }.get()
    }

    /// Writes `bytes` (whole `input_event`s, ending with EV_SYN/SYN_REPORT) in one write(2).
    func write(_ bytes: UnsafeRawBufferPointer) throws(DeviceAccessError) {
        guard !bytes.isEmpty else { return }
        let written: Int
        do {
            written = try descriptor.write(bytes, retryOnInterrupt: true)
        } catch {
            throw .writing("\(path)", error as? Errno ?? .ioError)
        }
        guard written == bytes.count else { throw .shortWrite("\(path)", wrote: written, of: bytes.count) }
    }

    /// Reads the events the kernel queued for the owner (EV_UINPUT requests, EV_FF play/stop/gain). Empty when none
    /// are pending.
    func readEvents() throws(DeviceAccessError) -> [input_event] {
        var events = [input_event](repeating: input_event(), count: 64)
        let count: Int
        do {
            count = try events.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
        } catch let failure as Errno where failure == .resourceTemporarilyUnavailable {
            return []
        } catch {
            throw .reading("\(path)", error as? Errno ?? .ioError)
        }
        return Array(events.prefix(count / MemoryLayout<input_event>.stride))
    }

    /// UI_BEGIN_FF_UPLOAD: fetches the effect a client is uploading (request id from the EV_UINPUT event's value).
    func beginUpload(requestID: UInt32) throws(DeviceAccessError) -> uinput_ff_upload {
        var upload = uinput_ff_upload()
        upload.request_id = requestID
        try withUnsafeMutableBytes(of: &upload) { (buffer) throws(DeviceAccessError) in
            try control(.uinputBeginUpload, buffer.baseAddress)
        }
        return upload
    }

    /// UI_END_FF_UPLOAD: unblocks the client's EVIOCSFF with `upload.retval`.
    func endUpload(_ upload: uinput_ff_upload) throws(DeviceAccessError) {
        var upload = upload
        try withUnsafeMutableBytes(of: &upload) { (buffer) throws(DeviceAccessError) in
            try control(.uinputEndUpload, buffer.baseAddress)
        }
    }

    func beginErase(requestID: UInt32) throws(DeviceAccessError) -> uinput_ff_erase {
        var erase = uinput_ff_erase()
        erase.request_id = requestID
        try withUnsafeMutableBytes(of: &erase) { (buffer) throws(DeviceAccessError) in
            try control(.uinputBeginErase, buffer.baseAddress)
        }
        return erase
    }

    func endErase(_ erase: uinput_ff_erase) throws(DeviceAccessError) {
        var erase = erase
        try withUnsafeMutableBytes(of: &erase) { (buffer) throws(DeviceAccessError) in
            try control(.uinputEndErase, buffer.baseAddress)
        }
    }

    /// Destroys the device (UI_DEV_DESTROY) and closes the descriptor. Readers see the node disappear.
    consuming func close() {
        let descriptor = self.descriptor
        discard self
        _ = descriptor.control(.uinputDestroy, value: 0)
        try? descriptor.close()
    }

    /// Last resort: closing a uinput descriptor destroys its device too.
    deinit { try? descriptor.close() }

    private func check(_ result: Result<CInt, Errno>, _ request: IoctlRequest) throws(DeviceAccessError) {
        if case let .failure(failure) = result { throw .ioctl(request.name, path: "\(path)", failure) }
    }

    private func control(_ request: IoctlRequest, _ argument: UnsafeMutableRawPointer?) throws(DeviceAccessError) {
        if case let .failure(failure) = descriptor.control(request, argument) {
            throw .ioctl(request.name, path: "\(path)", failure)
        }
    }

    private func control(_ request: IoctlRequest, value: UInt) throws(DeviceAccessError) {
        if case let .failure(failure) = descriptor.control(request, value: value) {
            throw .ioctl(request.name, path: "\(path)", failure)
        }
    }
}
