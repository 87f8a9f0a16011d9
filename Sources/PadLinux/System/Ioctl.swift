import CPadLinux
import Glibc
import SystemPackage

/// An ioctl request: its UAPI name (for error messages) and its number, which comes only from the C shim.
struct IoctlRequest: Sendable {
    let name: String
    let value: UInt

    static var uinputCreate: IoctlRequest { .init(name: "UI_DEV_CREATE", value: CPadLinux_UI_DEV_CREATE) }
    static var uinputDestroy: IoctlRequest { .init(name: "UI_DEV_DESTROY", value: CPadLinux_UI_DEV_DESTROY) }
    static var uinputSetup: IoctlRequest { .init(name: "UI_DEV_SETUP", value: CPadLinux_UI_DEV_SETUP) }
    static var uinputAbsSetup: IoctlRequest { .init(name: "UI_ABS_SETUP", value: CPadLinux_UI_ABS_SETUP) }
    static var uinputSetEventBit: IoctlRequest { .init(name: "UI_SET_EVBIT", value: CPadLinux_UI_SET_EVBIT) }
    static var uinputSetKeyBit: IoctlRequest { .init(name: "UI_SET_KEYBIT", value: CPadLinux_UI_SET_KEYBIT) }
    static var uinputSetRelBit: IoctlRequest { .init(name: "UI_SET_RELBIT", value: CPadLinux_UI_SET_RELBIT) }
    static var uinputSetAbsBit: IoctlRequest { .init(name: "UI_SET_ABSBIT", value: CPadLinux_UI_SET_ABSBIT) }
    static var uinputSetForceFeedbackBit: IoctlRequest { .init(name: "UI_SET_FFBIT", value: CPadLinux_UI_SET_FFBIT) }
    static var uinputSetPropertyBit: IoctlRequest { .init(name: "UI_SET_PROPBIT", value: CPadLinux_UI_SET_PROPBIT) }
    static var uinputSetPhys: IoctlRequest { .init(name: "UI_SET_PHYS", value: CPadLinux_UI_SET_PHYS) }
    static var uinputBeginUpload: IoctlRequest { .init(name: "UI_BEGIN_FF_UPLOAD", value: CPadLinux_UI_BEGIN_FF_UPLOAD) }
    static var uinputEndUpload: IoctlRequest { .init(name: "UI_END_FF_UPLOAD", value: CPadLinux_UI_END_FF_UPLOAD) }
    static var uinputBeginErase: IoctlRequest { .init(name: "UI_BEGIN_FF_ERASE", value: CPadLinux_UI_BEGIN_FF_ERASE) }
    static var uinputEndErase: IoctlRequest { .init(name: "UI_END_FF_ERASE", value: CPadLinux_UI_END_FF_ERASE) }
    static func uinputSysname(length: Int) -> IoctlRequest {
        .init(name: "UI_GET_SYSNAME", value: CPadLinux_UI_GET_SYSNAME(UInt32(length)))
    }

    static var evdevGrab: IoctlRequest { .init(name: "EVIOCGRAB", value: CPadLinux_EVIOCGRAB) }
    static var evdevUploadEffect: IoctlRequest { .init(name: "EVIOCSFF", value: CPadLinux_EVIOCSFF) }
    static var evdevRemoveEffect: IoctlRequest { .init(name: "EVIOCRMFF", value: CPadLinux_EVIOCRMFF) }
    static var evdevID: IoctlRequest { .init(name: "EVIOCGID", value: CPadLinux_EVIOCGID) }
    static var evdevSetClock: IoctlRequest { .init(name: "EVIOCSCLOCKID", value: CPadLinux_EVIOCSCLOCKID) }
    static func evdevName(length: Int) -> IoctlRequest {
        .init(name: "EVIOCGNAME", value: CPadLinux_EVIOCGNAME(UInt32(length)))
    }
    static func evdevUniq(length: Int) -> IoctlRequest {
        .init(name: "EVIOCGUNIQ", value: CPadLinux_EVIOCGUNIQ(UInt32(length)))
    }
    static func evdevPhys(length: Int) -> IoctlRequest {
        .init(name: "EVIOCGPHYS", value: CPadLinux_EVIOCGPHYS(UInt32(length)))
    }
    static func evdevBits(eventType: Int32, length: Int) -> IoctlRequest {
        .init(name: "EVIOCGBIT", value: CPadLinux_EVIOCGBIT(UInt32(eventType), UInt32(length)))
    }
    static func evdevAxis(_ axis: Int32) -> IoctlRequest {
        .init(name: "EVIOCGABS", value: CPadLinux_EVIOCGABS(UInt32(axis)))
    }
    static func evdevKeyState(length: Int) -> IoctlRequest {
        .init(name: "EVIOCGKEY", value: CPadLinux_EVIOCGKEY(UInt32(length)))
    }
}

extension FileDescriptor {
    /// Opens a device node read-write, non-blocking, close-on-exec; a failure says what to do about it
    /// (load the module, install the udev rule).
    static func openDeviceNode(_ path: StaticString) throws(DeviceAccessError) -> FileDescriptor {
        do {
            return try FileDescriptor.open(FilePath("\(path)"), .readWrite, options: [.nonBlocking, .closeOnExec])
        } catch {
            throw .opening("\(path)", error as? Errno ?? .ioError)
        }
    }

    /// The one ioctl entry point with a pointer argument: retries EINTR; EBADF and EFAULT are bugs in padbridge.
    func control(_ request: IoctlRequest, _ argument: UnsafeMutableRawPointer?) -> Result<CInt, Errno> {
        performControl(request) { CPadLinux_ioctlPointer(rawValue, request.value, argument) }
    }

    /// The one ioctl entry point with an integer argument (UI_SET_EVBIT and friends).
    func control(_ request: IoctlRequest, value: UInt) -> Result<CInt, Errno> {
        performControl(request) { CPadLinux_ioctlValue(rawValue, request.value, value) }
    }

    private func performControl(_ request: IoctlRequest, _ call: () -> CInt) -> Result<CInt, Errno> {
        while true {
            let result = call()
            if result >= 0 { return .success(result) }
            let failure = Errno(rawValue: errno)
            switch failure {
            case .interrupted: continue
            case .badFileDescriptor, .badAddress:
                preconditionFailure("ioctl(\(request.name)) on fd \(rawValue): \(failure) — a bug in padbridge")
            default: return .failure(failure)
            }
        }
    }
}

/// Nanoseconds on CLOCK_MONOTONIC, the clock the loop's timerfds use.
public struct MonotonicInstant: Comparable, Hashable, Sendable {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    public init(microseconds: UInt64) { nanoseconds = microseconds &* 1000 }

    public static func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec))
    }

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public func adding(milliseconds: UInt64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: nanoseconds &+ milliseconds &* 1_000_000)
    }

    public var microseconds: UInt64 { nanoseconds / 1000 }
}

extension FileDescriptor {
    /// read(2) with EINTR retried, as a typed result (swift-system throws untyped `Errno`).
    func readResult(into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        do {
            return .success(try read(into: buffer, retryOnInterrupt: true))
        } catch {
            return .failure(error as? Errno ?? .ioError)
        }
    }

    /// write(2) with EINTR retried, as a typed result.
    func writeResult(_ buffer: UnsafeRawBufferPointer) -> Result<Int, Errno> {
        do {
            return .success(try write(buffer, retryOnInterrupt: true))
        } catch {
            return .failure(error as? Errno ?? .ioError)
        }
    }
}
