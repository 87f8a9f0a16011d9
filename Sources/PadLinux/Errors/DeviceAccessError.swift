public import SystemPackage

/// Why padbridge could not use a device node, which node, and what to do about it.
///
/// Built in one factory per system call (`opening`, `ioctl`, `reading`, ...), so every error carries the path, the
/// operation and the `Errno`, and the ones a user can fix carry a `Remedy` spelled out in `description`.
public struct DeviceAccessError: Error, CustomStringConvertible, Sendable, Hashable {
    public enum Code: String, Sendable, Hashable {
        /// EACCES / EPERM: the node exists but this user may not open it.
        case permissionDenied
        /// ENOENT / ENXIO: the node (or the kernel module behind it) is not there.
        case missingDevice
        /// EBUSY: another program holds the device exclusively.
        case busy
        /// ENODEV / ESHUTDOWN / EPIPE: the device went away while in use.
        case gone
        /// EINVAL and friends: the kernel rejected what padbridge asked for (a bug, or an unsupported kernel).
        case invalidArgument
        /// Any other failure of a read, write or ioctl.
        case ioFailed
        /// The kernel or system lacks a facility padbridge needs (ENOSYS, ENOTTY, EOPNOTSUPP).
        case unsupported
    }

    /// What the user can do to fix it.
    public enum Remedy: Sendable, Hashable {
        /// Install the udev rule shipped in `udev/` so the logged-in user gets access.
        case installUdevRule(file: String)
        /// /dev/uhid is the padbridge group's, not every logged-in user's: join the group.
        case joinUhidGroup
        /// xpad's LED ring and hid-nintendo's player lights are sysfs attributes (no ACLs there): padbridge's udev
        /// rule gives them to the group input.
        case joinInputGroupForLedRing
        /// Load a kernel module (and make it load at boot).
        case loadKernelModule(String)
        /// Close the program that holds the device (named when it can be told).
        case closeOtherProgram(String?)
        /// The pad's node is not there: connect the pad, or name a node that exists.
        case connectPad
    }

    public var code: Code
    /// The node or sysfs path the operation was about.
    public var path: String
    /// The system call or ioctl that failed, e.g. `open`, `ioctl(UI_DEV_CREATE)`.
    public var operation: String
    public var remedy: Remedy?
    public var cause: Errno?

    public init(code: Code, path: String, operation: String, remedy: Remedy? = nil, cause: Errno? = nil) {
        self.code = code
        self.path = path
        self.operation = operation
        self.remedy = remedy
        self.cause = cause
    }

    public var description: String {
        var message = "\(operation) \(path): \(Self.summary(code))"
        if let cause { message += " (\(cause))" }
        if let remedy { message += ". " + Self.advice(remedy, path: path) }
        return message
    }

    static func summary(_ code: Code) -> String {
        switch code {
        case .permissionDenied: "permission denied"
        case .missingDevice: "no such device"
        case .busy: "device is busy"
        case .gone: "device went away"
        case .invalidArgument: "the kernel rejected the request"
        case .ioFailed: "I/O failed"
        case .unsupported: "not supported by this kernel"
        }
    }

    static func advice(_ remedy: Remedy, path: String) -> String {
        switch remedy {
        case let .installUdevRule(file):
            "To give your user access to \(path), install \(file): "
                + "`sudo install -m644 \(file) /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger` "
                + "(rules that tag devices with uaccess must sort before 73-seat-late.rules, hence the 70- prefix)"
        case .joinUhidGroup:
            Self.uhidAdvice
        case .joinInputGroupForLedRing:
            "An Xbox 360 pad's LED ring and a Switch pad's player lights are set through sysfs, which takes no ACL, so "
                + "the logged-in user's access to the pad does not cover them: padbridge's udev rule (\(udevRuleFile), installed with the package) gives them to "
                + "the group input: `sudo usermod -aG input $USER`, then log in again"
        case let .loadKernelModule(module):
            "The \(module) kernel module is not loaded: run `sudo modprobe \(module)`; to load it at every boot, "
                + "`sudo install -m644 udev/padbridge-modules.conf /etc/modules-load.d/`"
        case let .closeOtherProgram(holder?):
            "\(holder) holds it exclusively: close that program and try again"
        case .connectPad:
            "No pad has this node now: check that it is connected and see the nodes there are with "
                + "`ls -l /dev/input/by-id/ /dev/hidraw*`"
        case .closeOtherProgram(nil):
            "Another program holds it exclusively: close that program (Steam, another bridge, a remapper) and try again; "
                + "`sudo fuser -v \(path)` lists the programs that have it open"
        }
    }
}

extension DeviceAccessError {
    /// The udev rule file the lead ships for uinput, uhid and hidraw access.
    public static let udevRuleFile = "udev/70-padbridge.rules"

    /// How a user gets /dev/uhid (virtual DualSense pads): it is the padbridge group's, an opt-in (docs/install.md).
    public static let uhidAdvice =
        "/dev/uhid (virtual DualSense pads) is given to the padbridge group, not to every logged-in user: "
        + "`sudo usermod -aG padbridge $USER`, then log in again (installed from source: also "
        + "`sudo groupadd --system padbridge` and `sudo install -m644 udev/71-padbridge-service.rules /etc/udev/rules.d/ "
        + "&& sudo udevadm control --reload && sudo udevadm trigger`); why: docs/hiding.md, \"Who gets /dev/uhid\". "
        + "A virtual Xbox 360 pad (--as xbox360) needs only /dev/uinput"

    static func code(for errno: Errno) -> Code {
        switch errno {
        case .permissionDenied, .notPermitted: .permissionDenied
        case .noSuchFileOrDirectory, .noSuchAddressOrDevice: .missingDevice
        case .resourceBusy: .busy
        case .operationNotSupportedByDevice, .socketShutdown, .brokenPipe: .gone
        case .invalidArgument, .badAddress, .fileExists, .noSpace: .invalidArgument
        case .noFunction, .notSupported, .inappropriateIOCTLForDevice: .unsupported
        default: .ioFailed
        }
    }

    /// The kernel module that provides `path`, if it is one of the nodes a module creates.
    static func module(providing path: String) -> String? {
        switch path {
        case "/dev/uinput", "/dev/input/uinput": "uinput"
        case "/dev/uhid": "uhid"
        default: nil
        }
    }

    /// The brightness attribute of a pad's lights that padbridge's udev rule gives to the group input: the LED class
    /// device xpad makes for an Xbox 360 pad's ring (`.../leds/xpadN/brightness`) and hid-nintendo's player lights
    /// (`.../leds/<hid device>:green:player-N/brightness`).
    static func isPadLightAttribute(_ path: String) -> Bool {
        let components = path.split(separator: "/")
        guard components.count >= 3, components[components.count - 3] == "leds", components.last == "brightness" else {
            return false
        }
        let device = components[components.count - 2]
        return device.hasPrefix("xpad") || device.contains(":green:player-")
    }

    /// A node that exists while a pad is connected.
    static func isPadNode(_ path: String) -> Bool {
        path.hasPrefix("/dev/hidraw") || path.hasPrefix("/dev/input/event") || path.hasPrefix("/dev/input/by-")
    }

    static func needsUdevRule(_ path: String) -> Bool {
        path == "/dev/uinput" || path == "/dev/input/uinput" || path == "/dev/uhid" || path.hasPrefix("/dev/hidraw")
            || path.hasPrefix("/dev/input/event")
    }

    /// `open(2)` failed.
    static func opening(_ path: String, _ errno: Errno) -> DeviceAccessError {
        let code = code(for: errno)
        var remedy: Remedy?
        switch code {
        case .permissionDenied where path == "/dev/uhid": remedy = .joinUhidGroup
        case .permissionDenied where isPadLightAttribute(path): remedy = .joinInputGroupForLedRing
        case .permissionDenied where needsUdevRule(path): remedy = .installUdevRule(file: udevRuleFile)
        case .missingDevice:
            remedy = module(providing: path).map(Remedy.loadKernelModule)
                ?? (isPadNode(path) ? .connectPad : nil)
        case .gone where module(providing: path) != nil: remedy = module(providing: path).map(Remedy.loadKernelModule)
        case .busy: remedy = .closeOtherProgram(nil)
        default: break
        }
        // ENODEV on a misc node whose module is missing reads better as "missing".
        let effectiveCode: Code = (code == .gone && module(providing: path) != nil) ? .missingDevice : code
        return DeviceAccessError(code: effectiveCode, path: path, operation: "open", remedy: remedy, cause: errno)
    }

    /// An `ioctl(2)` failed; `request` is its UAPI name, e.g. `UI_DEV_CREATE`.
    static func ioctl(_ request: String, path: String, _ errno: Errno) -> DeviceAccessError {
        let code = code(for: errno)
        let remedy: Remedy? = code == .busy ? .closeOtherProgram(nil) : nil
        return DeviceAccessError(code: code, path: path, operation: "ioctl(\(request))", remedy: remedy, cause: errno)
    }

    /// `read(2)` failed.
    static func reading(_ path: String, _ errno: Errno) -> DeviceAccessError {
        DeviceAccessError(code: code(for: errno), path: path, operation: "read", cause: errno)
    }

    /// `write(2)` failed.
    static func writing(_ path: String, _ errno: Errno) -> DeviceAccessError {
        DeviceAccessError(code: code(for: errno), path: path, operation: "write", cause: errno)
    }

    /// A `write(2)` wrote fewer bytes than one whole event or report; the kernel takes them whole or not at all.
    static func shortWrite(_ path: String, wrote: Int, of expected: Int) -> DeviceAccessError {
        DeviceAccessError(code: .ioFailed, path: path, operation: "write (\(wrote) of \(expected) bytes)")
    }

    /// Creating an event-loop facility (`epoll_create1`, `eventfd`, `timerfd_create`, `signalfd`) failed.
    static func creating(_ facility: String, _ errno: Errno) -> DeviceAccessError {
        DeviceAccessError(code: code(for: errno), path: facility, operation: facility, cause: errno)
    }

    /// Controlling an event-loop facility (`epoll_ctl`, `epoll_wait`, `timerfd_settime`, `pthread_sigmask`) failed.
    static func controlling(_ facility: String, operation: String, _ errno: Errno) -> DeviceAccessError {
        DeviceAccessError(code: code(for: errno), path: facility, operation: operation, cause: errno)
    }
}
