import CPadLinux
import Glibc
import SystemPackage

/// The identity `HIDIOCGRAWINFO` reports for a hidraw node.
public struct HidrawInfo: Sendable, Hashable {
    /// `BUS_USB` (0x03), `BUS_BLUETOOTH` (0x05), ...
    public var bus: UInt32
    public var vendor: UInt16
    public var product: UInt16

    public static let busUSB: UInt32 = 0x03
    public static let busBluetooth: UInt32 = 0x05
}

/// Owns one `/dev/hidrawN` descriptor: reads its identity and writes output reports to the physical pad.
///
/// The raw descriptor never leaves this type. Writing after the pad was unplugged throws a `.gone` error, which is
/// a lifecycle event, not a failure.
struct HidrawDevice: ~Copyable {
    let path: String
    private let descriptor: FileDescriptor

    /// Opens `path` read-write, non-blocking, close-on-exec.
    init(path: String) throws(DeviceAccessError) {
        self.path = path
        descriptor = try FileDescriptor.openDeviceNode(atPath: path)
    }

    /// `HIDIOCGRAWINFO`: bus, vendor, product (the kernel's ids are signed 16-bit: masked to 0xFFFF).
    func rawInfo() throws(DeviceAccessError) -> HidrawInfo {
        var info = hidraw_devinfo()
        let request = IoctlRequest.hidrawInfo
        let result = withUnsafeMutableBytes(of: &info) { descriptor.control(request, $0.baseAddress) }
        if case let .failure(failure) = result { throw .ioctl(request.name, path: path, failure) }
        return HidrawInfo(
            bus: info.bustype, vendor: UInt16(truncatingIfNeeded: Int(info.vendor) & 0xFFFF),
            product: UInt16(truncatingIfNeeded: Int(info.product) & 0xFFFF))
    }

    /// `HIDIOCGFEATURE`: reads feature report `reportID` into `length` bytes (byte 0 = the ID). Returns the bytes the
    /// device returned. Blocks until the device answers (the kernel bounds it).
    func featureReport(_ reportID: UInt8, length: Int) throws(DeviceAccessError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        bytes[0] = reportID
        let request = IoctlRequest.hidrawGetFeature(length: length)
        let result = bytes.withUnsafeMutableBytes { descriptor.control(request, $0.baseAddress) }
        switch result {
        case let .success(count): return Array(bytes.prefix(Int(max(0, min(count, CInt(length))))))
        case let .failure(failure): throw Self.error(request.name, path: path, failure)
        }
    }

    /// `HIDIOCGRDESCSIZE` + `HIDIOCGRDESC`: the device's HID report descriptor.
    func reportDescriptor() throws(DeviceAccessError) -> [UInt8] {
        var size: CInt = 0
        let sizeRequest = IoctlRequest.hidrawDescriptorSize
        if case let .failure(failure) = withUnsafeMutableBytes(of: &size, { descriptor.control(sizeRequest, $0.baseAddress) }) {
            throw Self.error(sizeRequest.name, path: path, failure)
        }
        var report = hidraw_report_descriptor()
        report.size = UInt32(max(0, min(size, CInt(HID_MAX_DESCRIPTOR_SIZE))))
        let request = IoctlRequest.hidrawDescriptor
        if case let .failure(failure) = withUnsafeMutableBytes(of: &report, { descriptor.control(request, $0.baseAddress) }) {
            throw Self.error(request.name, path: path, failure)
        }
        return withUnsafeBytes(of: report.value) { Array($0.prefix(Int(report.size))) }
    }

    /// Reads one input report if one is waiting (the descriptor is non-blocking): nil when none is.
    /// ENODEV/EIO: the pad went away (`.gone`).
    func readInputReport(into buffer: UnsafeMutableRawBufferPointer) throws(DeviceAccessError) -> Int? {
        switch descriptor.readResult(into: buffer) {
        case let .success(count): return count
        case .failure(.resourceTemporarilyUnavailable), .failure(.interrupted): return nil
        case let .failure(failure):
            var error = DeviceAccessError.reading(path, failure)
            if failure == .ioError || failure == .noDevice { error.code = .gone }
            throw error
        }
    }

    /// For registering with the event loop only.
    var descriptorForPolling: FileDescriptor { descriptor }

    /// Writes one output report (byte 0 = report ID) in one write(2). ENODEV and ESHUTDOWN mean the pad went away
    /// (`.gone`); anything else is a write that failed with the pad still there (`.ioFailed`: a USB endpoint's stall
    /// is EPIPE, a Bluetooth link that did not answer ETIMEDOUT, a link in the middle of going EIO), worth another try.
    func write(_ report: [UInt8]) throws(DeviceAccessError) {
        let result = report.withUnsafeBytes { descriptor.writeResult($0) }
        switch result {
        case let .success(written):
            guard written == report.count else { throw .shortWrite(path, wrote: written, of: report.count) }
        case let .failure(failure):
            var error = DeviceAccessError.writing(path, failure)
            error.code = failure == .noDevice || failure == .socketShutdown ? .gone : .ioFailed
            throw error
        }
    }

    /// Closes the descriptor (the pad itself stays as it is).
    consuming func close() {}

    deinit { try? descriptor.close() }

    static func error(_ request: String, path: String, _ failure: Errno) -> DeviceAccessError {
        var error = DeviceAccessError.ioctl(request, path: path, failure)
        if failure == .noDevice { error.code = .gone }
        return error
    }
}

extension IoctlRequest {
    static var hidrawInfo: IoctlRequest { .init(name: "HIDIOCGRAWINFO", value: CPadLinux_HIDIOCGRAWINFO) }
    static var hidrawDescriptorSize: IoctlRequest { .init(name: "HIDIOCGRDESCSIZE", value: CPadLinux_HIDIOCGRDESCSIZE) }
    static var hidrawDescriptor: IoctlRequest { .init(name: "HIDIOCGRDESC", value: CPadLinux_HIDIOCGRDESC) }
    static func hidrawGetFeature(length: Int) -> IoctlRequest {
        .init(name: "HIDIOCGFEATURE", value: CPadLinux_HIDIOCGFEATURE(UInt32(length)))
    }
}

extension Errno {
    /// ENODEV (swift-system spells it `operationNotSupportedByDevice`).
    static var noDevice: Errno { .operationNotSupportedByDevice }
}

extension FileDescriptor {
    /// Opens a device node chosen at run time (a `/dev/hidrawN` or `/dev/input/eventN` the user named), read-write
    /// unless told otherwise, non-blocking, close-on-exec; a failure says what to do about it.
    static func openDeviceNode(
        atPath path: String, access: FileDescriptor.AccessMode = .readWrite
    ) throws(DeviceAccessError) -> FileDescriptor {
        do {
            return try FileDescriptor.open(FilePath(path), access, options: [.nonBlocking, .closeOnExec])
        } catch {
            throw .opening(path, error as? Errno ?? .ioError)
        }
    }
}
