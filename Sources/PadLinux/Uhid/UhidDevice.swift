import CPadLinux
import Glibc
import SystemPackage

/// Owns one `/dev/uhid` descriptor and the HID device created through it.
///
/// The kernel adds the device from a worker after `create`, so the owner must already be servicing the
/// descriptor (GET_REPORT requests arrive during the driver's probe). `close()` destroys the device.
struct UhidDevice: ~Copyable {
    /// The node this owner opens; a `StaticString` so the owner stays trivially destructible (`discard self`).
    let path: StaticString
    private let descriptor: FileDescriptor

    /// Opens the uhid node read-write, non-blocking, close-on-exec.
    init(path: StaticString = "/dev/uhid") throws(DeviceAccessError) {
        self.path = path
        descriptor = try FileDescriptor.openDeviceNode(path)
    }

    /// For registering with the event loop only.
    var descriptorForPolling: FileDescriptor { descriptor }

    /// Writes one complete event (see `UhidRequest`).
    func send(_ event: [UInt8]) throws(DeviceAccessError) {
        let written: Int
        do {
            written = try event.withUnsafeBytes { try descriptor.write($0, retryOnInterrupt: true) }
        } catch {
            throw .writing("\(path)", error as? Errno ?? .ioError)
        }
        guard written == event.count else { throw .shortWrite("\(path)", wrote: written, of: event.count) }
    }

    /// The next queued event, or nil when none is pending. Each read(2) returns exactly one event.
    func nextEvent() throws(DeviceAccessError) -> UhidEvent? {
        let size = Int(CPadLinux_UHID_EVENT_SIZE)
        let result = withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer in
            descriptor.readResult(into: buffer).map { count in
                UhidEvent.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
        }
        switch result {
        case let .success(event): return event
        case .failure(.resourceTemporarilyUnavailable): return nil
        case let .failure(failure): throw .reading("\(path)", failure)
        }
    }

    /// Destroys the device (UHID_DESTROY) and closes the descriptor.
    consuming func close() {
        let descriptor = self.descriptor
        discard self
        _ = UhidRequest.destroy().withUnsafeBytes { try? descriptor.write($0, retryOnInterrupt: true) }
        try? descriptor.close()
    }

    /// Last resort: closing a uhid descriptor destroys its device too.
    deinit { try? descriptor.close() }
}
