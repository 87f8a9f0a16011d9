/// What the hiding service (`padbridge hide-service`, run as root by systemd) and its clients (`padbridge remap`)
/// agree on: which nodes may be hidden, the protocol on its unix socket, the runtime udev rule that keeps a hidden
/// node hidden, and the record that gives a node back. Pure: the service and the clients do the I/O.
///
/// Why a service: EVIOCGRAB covers a pad's event nodes only; SDL's HIDAPI drivers and Steam read its hidraw node
/// (and still list a grabbed event node), so a game sees the pad twice while remap bridges it. Taking the nodes away
/// from the logged-in user (mode 0000, ACL removed) needs privilege a user's remap does not have.
public enum NodeHiding {
    /// Where the service listens (systemd/padbridge-hide.socket).
    public static let socketPath = "/run/padbridge/hide.socket"
    /// Where the service keeps a record of each node it hid, to give it back after a crash.
    public static let stateDirectory = "/run/padbridge/hidden"
    /// The longest request or reply line.
    public static let maximumLineBytes = 4096
    /// The most nodes one connection may hide.
    public static let maximumNodesPerConnection = 32
    /// The most paths one request may name (a pad has a hidraw node, up to four event nodes and a js node).
    public static let maximumPathsPerRequest = 16
    /// The most connections at once, in all and from one user: one user cannot lock the others out.
    public static let maximumConnections = 64
    public static let maximumConnectionsPerUser = 8
    /// A connection that holds nothing hidden for this long is closed (a client connects to hide, at once).
    public static let idleConnectionMilliseconds: UInt64 = 10_000
    /// The `phys` prefix of a bridge's own virtual pads (`VirtualPadKind.bridgeOutputPhysicalPathPrefix`): never
    /// hidden.
    public static var bridgeOutputPhysicalPathPrefix: String { VirtualPadKind.bridgeOutputPhysicalPathPrefix }
}

/// A device node the service may hide: `/dev/hidrawN`, `/dev/input/eventN` or `/dev/input/jsN` (the joystick
/// interface older games and Wine's joystick API read), spelled exactly so (no other path, no symbolic link, no `..`).
public struct HideableNode: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable, CaseIterable {
        case hidraw
        case event
        /// A joydev node: its `device` in sysfs is the same inputN device as its event node's.
        case joystick

        /// "/dev/hidraw", "/dev/input/event", "/dev/input/js".
        var pathPrefix: String {
            switch self {
            case .hidraw: "/dev/hidraw"
            case .event: "/dev/input/event"
            case .joystick: "/dev/input/js"
            }
        }
        /// "hidraw", "event", "js".
        var namePrefix: String { String(pathPrefix.split(separator: "/").last!) }
    }

    public let kind: Kind
    public let number: Int

    public init?(path: String) {
        guard let kind = Kind.allCases.first(where: { path.hasPrefix($0.pathPrefix) }) else { return nil }
        let digits = path.utf8.dropFirst(kind.pathPrefix.utf8.count)
        guard (1...6).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits.count == 1 || digits.first != 0x30, let number = Int(String(decoding: digits, as: UTF8.self))
        else { return nil }
        self.kind = kind
        self.number = number
    }

    /// "hidraw3", "event5", "js0".
    public var name: String { kind.namePrefix + "\(number)" }
    public var path: String { kind.pathPrefix + "\(number)" }
    public var description: String { path }
    /// The node's device in sysfs, a link into /sys/devices.
    public var sysfsClassPath: String { kind == .hidraw ? "/sys/class/hidraw/\(name)" : "/sys/class/input/\(name)" }
}

/// The service's protocol: lines of text on a unix stream socket. A `hide` request names nodes the client holds open
/// and passes, with the line, one open descriptor of each, in the same order (SCM_RIGHTS): the service acts through
/// those descriptors, and hides a node only if its descriptor was opened for reading (not O_PATH) and is that node.
/// Every node gets one reply line, then `end`.
///
///     hide /dev/hidraw3 /dev/input/event5        ->  hidden /dev/hidraw3
///                                                    refused /dev/input/event5 it is a bridge's virtual pad
///                                                    end
///     show /dev/hidraw3                           ->  shown /dev/hidraw3
///                                                    end
///
/// Closing the connection shows everything it hid (a client killed by SIGKILL included).
public enum NodeHidingMessage: Sendable, Hashable {
    case hide([String])
    case show([String])
    case hidden(String)
    case shown(String)
    case refused(String, reason: String)
    case end

    public var line: String {
        switch self {
        case .hide(let paths): "hide " + paths.joined(separator: " ")
        case .show(let paths): "show " + paths.joined(separator: " ")
        case .hidden(let path): "hidden \(path)"
        case .shown(let path): "shown \(path)"
        case .refused(let path, let reason): "refused \(path) \(reason.onOneLine)"
        case .end: "end"
        }
    }

    /// Reads one line (without its newline); nil for anything that is not a message. Total: never traps.
    public init?(line: Substring) {
        guard line.utf8.count <= NodeHiding.maximumLineBytes else { return nil }
        let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard let keyword = fields.first else { return nil }
        switch keyword {
        case "hide", "show":
            let paths = line.split(separator: " ").dropFirst().map(String.init)
            guard !paths.isEmpty else { return nil }
            self = keyword == "hide" ? .hide(paths) : .show(paths)
        case "hidden" where fields.count == 2: self = .hidden(String(fields[1]))
        case "shown" where fields.count == 2: self = .shown(String(fields[1]))
        case "refused" where fields.count >= 2:
            self = .refused(String(fields[1]), reason: fields.count == 3 ? String(fields[2]) : "")
        case "end" where fields.count == 1: self = .end
        default: return nil
        }
    }
}

/// The runtime udev rule (in /run/udev/rules.d, gone at reboot) that keeps a hidden node hidden when udev processes
/// it again (a `udevadm trigger`, a package's rule reload): it matches the node by its device path, which names the
/// HID device instance (never reused while the system runs) or the port, not by node number alone, and is removed
/// when the node is given back. It sorts after padbridge's and Steam's rules (60-, 70-) and before
/// 73-seat-late.rules, whose uaccess builtin gives the active user of the node's seat an ACL: the node is put on a
/// seat nobody sits at ("padbridge-hidden": udev keeps a device's uaccess tag once it had it, so taking the tag away
/// is not enough), which also keeps logind from giving it an ACL when the active session changes.
public enum HiddenNodeRule {
    public static let directory = "/run/udev/rules.d"
    public static let fileNamePrefix = "72-padbridge-hidden-"
    /// The seat a hidden node is put on: no session is ever active there.
    public static let hiddenSeat = "padbridge-hidden"

    /// One file per hidden node, named by the node and its inode: a node unplugged while hidden and another one given
    /// the same name have a file each.
    public static func fileName(for node: HideableNode, inode: UInt64) -> String {
        "\(fileNamePrefix)\(node.name)-\(inode).rules"
    }

    /// Whether `devpath` (a sysfs device path under /devices) can be matched exactly: no glob characters, quotes or
    /// spaces.
    public static func isMatchable(_ devpath: String) -> Bool {
        devpath.hasPrefix("/devices/") && !devpath.contains("/../")
            && devpath.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || "/:._-+@".utf8.contains(byte)
            }
    }

    public static func text(for node: HideableNode, devpath: String) -> String {
        """
        # padbridge hide-service: \(node.path) is hidden while a bridge holds it (removed when it lets go).
        DEVPATH=="\(devpath)", ENV{ID_SEAT}="\(hiddenSeat)", TAG-="uaccess", OWNER:="root", GROUP:="root", MODE:="0000"

        """
    }
}

/// What a node was before it was hidden (its mode, owner, group and ACL, and whether udev gives the seat's user an
/// ACL on it), kept in a file by the service, so it is given back even after the service died. One line:
///
///     padbridge-hidden 1 path=/dev/hidraw3 devpath=/devices/... device=61187 inode=812 mode=8576 uid=0 gid=0 acl=0200... uaccess=1
///
/// (`acl=-`: it had none; `uaccess` absent: 0). Reading is total.
public struct HiddenNodeRecord: Sendable, Hashable {
    public var node: HideableNode
    public var devpath: String
    /// st_rdev and st_ino: the node is given back only if it is still the same device node.
    public var device: UInt64
    public var inode: UInt64
    /// st_mode (permission bits used), owner and group.
    public var mode: UInt32
    public var uid: UInt32
    public var gid: UInt32
    /// The "system.posix_acl_access" attribute, nil when there was none.
    public var accessACL: [UInt8]?
    /// udev tagged the node "uaccess": with udevd running, the ACL is udev's to set (for whoever sits at the seat
    /// when the node is given back), not the record's.
    public var seatManaged: Bool

    public var identity: DeviceNodeIdentity { DeviceNodeIdentity(device: device, inode: inode) }
    /// The record's file name in the state directory: the node's name and its inode.
    public var fileName: String { "\(node.name)-\(inode).state" }

    public init(
        node: HideableNode, devpath: String, device: UInt64, inode: UInt64, mode: UInt32, uid: UInt32, gid: UInt32,
        accessACL: [UInt8]?, seatManaged: Bool = false
    ) {
        self.node = node
        self.devpath = devpath
        self.device = device
        self.inode = inode
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.accessACL = accessACL
        self.seatManaged = seatManaged
    }

    public static let magic = "padbridge-hidden 1"

    public var line: String {
        "\(Self.magic) path=\(node.path) devpath=\(devpath) device=\(device) inode=\(inode) mode=\(mode) uid=\(uid) "
            + "gid=\(gid) acl=\(accessACL.map { HexBytes.encode($0) } ?? "-") uaccess=\(seatManaged ? 1 : 0)\n"
    }

    public init?(line: Substring) {
        guard line.hasPrefix(Self.magic + " "), line.utf8.count <= 2 * NodeHiding.maximumLineBytes else { return nil }
        var values: [Substring: Substring] = [:]
        for field in line.dropFirst(Self.magic.count + 1).split(separator: " ") {
            guard let equals = field.firstIndex(of: "="), values[field[..<equals]] == nil else { return nil }
            values[field[..<equals]] = field[field.index(after: equals)...]
        }
        guard let path = values["path"], let node = HideableNode(path: String(path)),
            let devpath = values["devpath"].map(String.init), HiddenNodeRule.isMatchable(devpath),
            let device = values["device"].flatMap({ UInt64($0) }), let inode = values["inode"].flatMap({ UInt64($0) }),
            let mode = values["mode"].flatMap({ UInt32($0) }), let uid = values["uid"].flatMap({ UInt32($0) }),
            let gid = values["gid"].flatMap({ UInt32($0) }), let acl = values["acl"],
            [nil, "0", "1"].contains(values["uaccess"])
        else { return nil }
        let accessACL: [UInt8]?
        if acl == "-" {
            accessACL = nil
        } else {
            guard let bytes = HexBytes.decode(acl) else { return nil }
            accessACL = bytes
        }
        self.init(
            node: node, devpath: devpath, device: device, inode: inode, mode: mode, uid: uid, gid: gid,
            accessACL: accessACL, seatManaged: values["uaccess"] == "1")
    }
}

/// Which device node a descriptor or a path is: its device number and inode (`st_rdev`, `st_ino`). A node unplugged
/// and another one given the same name is another node.
public struct DeviceNodeIdentity: Sendable, Hashable, CustomStringConvertible {
    public var device: UInt64
    public var inode: UInt64
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
    public var description: String { "device \(device) inode \(inode)" }
}

/// Which nodes the hiding service hides: a game controller's, never a keyboard's or a mouse's (nor anything else a
/// user needs, a FIDO key's hidraw node among them). Pure: the service reads the bitmaps and descriptors from sysfs.
public enum HidingEligibility {
    /// Why an event node may not be hidden, or nil when it may: a keyboard or a mouse never; a gamepad or joystick,
    /// or another input device of the same parent device as one (a pad's motion or touchpad node), may.
    /// `siblings`: the other input devices of the node's parent device (its HID device or USB interface).
    public static func refusal(
        eventNode capabilities: InputDeviceCapabilities, siblings: [InputDeviceCapabilities]
    ) -> String? {
        if capabilities.isKeyboard { return "it is a keyboard; only game controllers are hidden" }
        if capabilities.isMouse { return "it is a mouse; only game controllers are hidden" }
        if capabilities.isJoystick || siblings.contains(where: \.isJoystick) { return nil }
        return "it is not a game controller's node; only game controllers are hidden"
    }

    /// Why a hidraw node may not be hidden, or nil when it may: its report descriptor declares a joystick, gamepad
    /// or multi-axis controller, or the kernel made a gamepad or joystick input device of its HID device.
    public static func refusal(
        hidrawDescriptor descriptor: [UInt8], inputDevices: [InputDeviceCapabilities]
    ) -> String? {
        if HIDReportDescriptorSummary(descriptor).declaresGameController || inputDevices.contains(where: \.isJoystick) {
            return nil
        }
        return "it is not a game controller's hidraw node; only game controllers are hidden"
    }
}
