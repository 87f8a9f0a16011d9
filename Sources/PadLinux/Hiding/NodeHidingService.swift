import CPadLinux
import Glibc
public import Logging
public import PadCore
import SystemPackage

/// The hiding service (`padbridge hide-service`, root, started by systemd through its socket): takes a pad's nodes
/// away from everyone but root for as long as a client that holds them open asks, and gives them back when it lets
/// go, its connection included (a client killed by SIGKILL too).
///
/// A node is hidden by its owner and group set to root, its ACL removed and its mode set to 0000 (open file
/// descriptors keep working: the bridge that holds it keeps reading it), plus a runtime udev rule matching its
/// device path so udev processing it again keeps it so (`HiddenNodeRule`). What it was is kept in a file
/// (`HiddenNodeRecord`), so a service that died gives it back when it starts again.
///
/// A request is honoured only for nodes the requesting process itself holds open (its /proc/PID/fd, PID from
/// SO_PEERCRED), never for a bridge's own virtual pads. Loop-confined.
public final class NodeHidingService {
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let stateDirectory: String
    private let rulesDirectory: String
    private var listener: UnixStreamSocket?
    private var listenerWatch: DeviceEventLoop.WatchToken?
    private var connections: [Int: Connection] = [:]
    private var nextConnection = 0
    /// Hidden nodes by path: what they were, and the connections holding them hidden.
    private var hidden: [String: (record: HiddenNodeRecord, holders: Set<Int>)] = [:]

    /// The most clients at once.
    public static let maximumConnections = 64

    private final class Connection {
        let id: Int
        let socket: UnixStreamSocket
        var watch: DeviceEventLoop.WatchToken?
        let pid: pid_t
        let uid: uid_t
        var lines = StreamLines()
        var nodes: Set<String> = []

        init(id: Int, socket: consuming UnixStreamSocket, pid: pid_t, uid: uid_t) {
            self.id = id
            self.socket = socket
            self.pid = pid
            self.uid = uid
        }
    }

    /// Gives back what an earlier run left hidden, then serves `listener`.
    public init(
        listener: consuming UnixStreamSocket, loop: DeviceEventLoop, logger: Logger,
        stateDirectory: String = NodeHiding.stateDirectory, rulesDirectory: String = HiddenNodeRule.directory
    ) throws(DeviceAccessError) {
        self.loop = loop
        self.logger = logger
        self.stateDirectory = stateDirectory
        self.rulesDirectory = rulesDirectory
        for directory in [stateDirectory, rulesDirectory] { Self.makeDirectory(directory) }
        giveBackLeftovers()
        let descriptor = listener.descriptor
        self.listener = consume listener
        listenerWatch = try loop.watch(descriptor, path: "hiding service socket") { [weak self] _ in self?.acceptAll() }
    }

    /// Gives every hidden node back and stops serving. Idempotent.
    public func close() {
        if let listenerWatch { loop.removeWatch(listenerWatch) }
        listenerWatch = nil
        listener.take()?.close()
        for id in connections.keys.sorted() { disconnect(id) }
    }

    deinit { close() }

    // MARK: Connections

    private func acceptAll() {
        while let socket = listener?.accept() {
            guard let peer = socket.peer() else { continue }
            guard connections.count < Self.maximumConnections else {
                _ = socket.send(NodeHidingMessage.refused("-", reason: "too many clients").line + "\n")
                continue
            }
            nextConnection += 1
            let connection = Connection(id: nextConnection, socket: socket, pid: peer.pid, uid: peer.uid)
            do {
                connection.watch = try loop.watch(connection.socket.descriptor, path: "hiding client") {
                    [weak self, id = connection.id] _ in self?.serve(id)
                }
            } catch {
                logger.warning("cannot watch a client: \(error)")
                continue
            }
            connections[connection.id] = connection
            logger.debug("client connected", metadata: ["pid": "\(peer.pid)", "uid": "\(peer.uid)"])
        }
    }

    private func serve(_ id: Int) {
        guard let connection = connections[id] else { return }
        while true {
            switch connection.socket.receive() {
            case .none:
                return
            case .closed:
                return disconnect(id)
            case .bytes(let bytes):
                let lines = connection.lines.append(bytes)
                if connection.lines.overflowed { return disconnect(id) }
                for line in lines { answer(line, from: connection) }
            }
        }
    }

    private func disconnect(_ id: Int) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        if let watch = connection.watch { loop.removeWatch(watch) }
        let givenBack = connection.nodes.sorted().compactMap { release($0, from: id) }
        giveBack(givenBack)
        logger.debug("client gone", metadata: ["pid": "\(connection.pid)", "gave back": "\(givenBack.count)"])
    }

    private func answer(_ line: Substring, from connection: Connection) {
        var replies: [NodeHidingMessage] = []
        var changed: [String] = []
        var released: [HiddenNodeRecord] = []
        switch NodeHidingMessage(line: line) {
        case .hide(let paths)?:
            for path in paths {
                switch hide(path, for: connection) {
                case .success(let devpath):
                    if let devpath { changed.append(devpath) }
                    replies.append(.hidden(path))
                case .failure(let refusal):
                    replies.append(.refused(path, reason: refusal.reason))
                }
            }
        case .show(let paths)?:
            for path in paths {
                guard connection.nodes.remove(path) != nil else {
                    replies.append(.refused(path, reason: "this client did not hide it"))
                    continue
                }
                if let record = release(path, from: connection.id) { released.append(record) }
                replies.append(.shown(path))
            }
        default:
            replies.append(.refused("-", reason: "not a request (hide PATH... or show PATH...)"))
        }
        refreshUdev(changed)
        giveBack(released)
        _ = connection.socket.send((replies + [.end]).map { $0.line + "\n" }.joined())
    }

    // MARK: Hiding and giving back

    struct Refusal: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Hides `path` for `connection`; the device path to refresh in udev when it was hidden now (nil: it already was).
    private func hide(_ path: String, for connection: Connection) -> Result<String?, Refusal> {
        guard let node = HideableNode(path: path) else {
            return .failure(Refusal("only /dev/hidrawN and /dev/input/eventN nodes are hidden"))
        }
        if connection.nodes.contains(path) { return .success(nil) }
        guard connection.nodes.count < NodeHiding.maximumNodesPerConnection else {
            return .failure(Refusal("one client hides at most \(NodeHiding.maximumNodesPerConnection) nodes"))
        }
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFCHR else {
            return .failure(Refusal("no such device node"))
        }
        guard Self.process(connection.pid, uid: connection.uid, holds: status) else {
            return .failure(Refusal("the requesting process does not hold it open"))
        }
        guard let devpath = Self.devicePath(of: node), HiddenNodeRule.isMatchable(devpath) else {
            return .failure(Refusal("its device is not in sysfs"))
        }
        if Self.isBridgeOutput(node) { return .failure(Refusal("it is a padbridge bridge's own virtual pad")) }
        if hidden[path] != nil {
            hidden[path]!.holders.insert(connection.id)
            connection.nodes.insert(path)
            return .success(nil)
        }
        let record = HiddenNodeRecord(
            node: node, devpath: devpath, device: UInt64(status.st_rdev), inode: UInt64(status.st_ino),
            mode: UInt32(status.st_mode), uid: status.st_uid, gid: status.st_gid, accessACL: Self.accessACL(of: path))
        guard TextFile.write(record.line, to: statePath(node)) else {
            return .failure(Refusal("cannot write \(statePath(node)): \(String(cString: strerror(errno)))"))
        }
        guard TextFile.write(HiddenNodeRule.text(for: node, devpath: devpath), to: rulePath(node)) else {
            unlink(statePath(node))
            return .failure(Refusal("cannot write \(rulePath(node)): \(String(cString: strerror(errno)))"))
        }
        let removed = CPadLinux_removeAccessACL(path)
        guard chown(path, 0, 0) == 0, removed == 0 || removed == -ENODATA, chmod(path, 0) == 0 else {
            let reason = String(cString: strerror(errno))
            giveBack([record])
            return .failure(Refusal("cannot change its permissions: \(reason)"))
        }
        hidden[path] = (record, [connection.id])
        connection.nodes.insert(path)
        logger.info("hid \(path) for pid \(connection.pid) (uid \(connection.uid))")
        return .success(devpath)
    }

    /// `id` lets go of `path`; its record when nobody holds it hidden any more: to be given back.
    private func release(_ path: String, from id: Int) -> HiddenNodeRecord? {
        guard var entry = hidden[path] else { return nil }
        entry.holders.remove(id)
        guard entry.holders.isEmpty else {
            hidden[path] = entry
            return nil
        }
        hidden[path] = nil
        return entry.record
    }

    /// Removes the nodes' rules; once udev has processed them again without (when it runs), puts each node's owner,
    /// group, ACL and mode back, if it is still the node that was hidden (same device, same inode); removes the
    /// records. In that order: an event udev had queued while the rule stood cannot hide a node given back.
    private func giveBack(_ records: [HiddenNodeRecord]) {
        guard !records.isEmpty else { return }
        for record in records { unlink(rulePath(record.node)) }
        refreshUdev(records.map(\.devpath))
        for record in records {
            var status = stat()
            let path = record.node.path
            if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFCHR, UInt64(status.st_rdev) == record.device,
                UInt64(status.st_ino) == record.inode
            {
                if chown(path, record.uid, record.gid) != 0 { logger.warning("cannot give \(path) its owner back") }
                if let acl = record.accessACL {
                    let result = acl.withUnsafeBytes { CPadLinux_setAccessACL(path, $0.baseAddress, UInt($0.count)) }
                    if result != 0 { logger.warning("cannot give \(path) its ACL back") }
                }
                if chmod(path, mode_t(record.mode & 0o7777)) != 0 { logger.warning("cannot give \(path) its mode back") }
                logger.info("gave back \(path)")
            }
            unlink(statePath(record.node))
        }
    }

    /// What a service that died left hidden: given back, its rules removed.
    private func giveBackLeftovers() {
        var records: [HiddenNodeRecord] = []
        for name in SysfsInputDevices.directoryEntries(stateDirectory) where name.hasSuffix(".state") {
            let path = "\(stateDirectory)/\(name)"
            if let text = try? TextFile.contents(atPath: path),
                let record = HiddenNodeRecord(line: Substring(text.split(separator: "\n").first ?? ""))
            {
                records.append(record)
                logger.notice("giving back \(record.node.path), left hidden by an earlier run")
            } else {
                unlink(path)
            }
        }
        for name in SysfsInputDevices.directoryEntries(rulesDirectory) where name.hasPrefix(HiddenNodeRule.fileNamePrefix) {
            unlink("\(rulesDirectory)/\(name)")
        }
        giveBack(records)
    }

    private func statePath(_ node: HideableNode) -> String { "\(stateDirectory)/\(node.name).state" }
    private func rulePath(_ node: HideableNode) -> String { "\(rulesDirectory)/\(HiddenNodeRule.fileName(for: node))" }

    // MARK: udev

    /// When udevd runs: it re-reads the rules, processes each device again (a "change" uevent), and this waits
    /// until it has (`udevadm settle`), so its database follows (a hidden node leaves the logged-in user's seat: no
    /// ACL for it on a session switch) and nothing it had queued changes a node after this service did. Without
    /// udevd the permissions set here are all there is.
    private func refreshUdev(_ devpaths: [String]) {
        guard !devpaths.isEmpty, CPadLinux_unixSocketIsListening("/run/udev/control") != 0 else { return }
        let candidates = ["/usr/bin/udevadm", "/bin/udevadm", "/sbin/udevadm"]
        guard let udevadm = candidates.first(where: { candidate in access(candidate, X_OK) == 0 }) else {
            return logger.warning("udevd runs but no udevadm was found: the hidden nodes' udev rules take effect later")
        }
        func run(_ arguments: [String]) {
            let outcome = try? HelperProcess.run(executable: udevadm, arguments: arguments, timeout: .seconds(10))
            if outcome?.termination != .exited(code: 0) {
                logger.warning(
                    "`udevadm \(arguments.joined(separator: " "))` did not succeed: \(outcome.map { "\($0.termination)" } ?? "not started")")
            }
        }
        run(["control", "--reload"])
        for devpath in devpaths {
            _ = TextFile.write("change", to: "/sys\(devpath)/uevent")
        }
        run(["settle", "--timeout=5"])
    }

    // MARK: Checks

    /// Whether process `pid`, owned by `uid`, has the node with `status` open (one of its /proc/PID/fd links).
    static func process(_ pid: pid_t, uid: uid_t, holds status: stat) -> Bool {
        var owner = stat()
        guard pid > 0, stat("/proc/\(pid)", &owner) == 0, owner.st_uid == uid else { return false }
        let descriptors = "/proc/\(pid)/fd"
        for entry in SysfsInputDevices.directoryEntries(descriptors) {
            var target = stat()
            if stat("\(descriptors)/\(entry)", &target) == 0, target.st_mode & S_IFMT == S_IFCHR,
                target.st_rdev == status.st_rdev, target.st_ino == status.st_ino, target.st_dev == status.st_dev
            {
                return true
            }
        }
        return false
    }

    /// The node's device path under /devices (what udev's DEVPATH is).
    static func devicePath(of node: HideableNode) -> String? {
        guard let resolved = SysfsInputDevices.resolvedPath(node.sysfsClassPath), resolved.hasPrefix("/sys/devices/")
        else { return nil }
        return String(resolved.dropFirst("/sys".count))
    }

    /// Whether the node belongs to a padbridge bridge's own virtual pad (its phys is "padbridge-output/...").
    static func isBridgeOutput(_ node: HideableNode) -> Bool {
        let phys: String?
        switch node.kind {
        case .event:
            phys = SysfsInputDevices.readAttribute("\(node.sysfsClassPath)/device/phys")
        case .hidraw:
            phys = SysfsInputDevices.readAttribute("\(node.sysfsClassPath)/device/uevent")?.split(separator: "\n")
                .first { $0.hasPrefix("HID_PHYS=") }.map { String($0.dropFirst("HID_PHYS=".count)) }
        }
        return phys?.hasPrefix(NodeHiding.bridgeOutputPhysicalPathPrefix) ?? false
    }

    static func accessACL(of path: String) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let length = buffer.withUnsafeMutableBytes { CPadLinux_getAccessACL(path, $0.baseAddress, UInt($0.count)) }
        return length > 0 ? Array(buffer.prefix(Int(length))) : nil
    }

    static func makeDirectory(_ path: String) {
        var built = ""
        for component in path.split(separator: "/") {
            built += "/\(component)"
            mkdir(built, 0o755)
        }
    }
}
