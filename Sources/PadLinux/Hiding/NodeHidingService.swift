import CPadLinux
import Glibc
public import Logging
public import PadCore
import SystemPackage

/// The hiding service (`padbridge hide-service`, root, started by systemd through its socket): takes a pad's nodes
/// away from everyone but root for as long as a client that holds them open asks, and gives them back when it lets
/// go, its connection included (a client killed by SIGKILL too).
///
/// What it checks (docs/hiding.md): a client passes, with its request, an open descriptor of each node
/// (SCM_RIGHTS). A node is hidden only when that descriptor was opened for reading (not `O_PATH`, not write-only),
/// is the node the path names now (`st_rdev` and `st_ino` of both), is a game controller's (never a keyboard's, a
/// mouse's or anything else's: `HidingEligibility`), and is not a bridge's own virtual pad. The service acts through
/// the descriptor (`fchown`, `fremovexattr`, `fchmod`), never through a path, and reads no other process's files.
///
/// A node is hidden by its owner and group set to root, its ACL removed and its mode set to 0000 (open descriptors
/// keep working: the bridge that holds it keeps reading it), plus a runtime udev rule matching its device path so
/// udev processing it again keeps it so (`HiddenNodeRule`). Given back, the rule goes and udevd sets the node's
/// permissions from its rules, for whoever sits at the seat then; without udevd the record of what it was
/// (`HiddenNodeRecord`, also what a service that died gives back when it starts again) is put back.
///
/// One user cannot lock others out or hold the loop: at most `NodeHiding.maximumConnectionsPerUser` connections a
/// user, a connection holding nothing hidden closed after `NodeHiding.idleConnectionMilliseconds`, one line served
/// per connection per turn of the loop, at most `NodeHiding.maximumPathsPerRequest` paths a request, a client that
/// does not read its replies dropped, and udev's refresh off the loop (`UdevRefreshQueue`). Loop-confined.
public final class NodeHidingService {
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let stateDirectory: String
    private let rulesDirectory: String
    private let udevRefresh: UdevRefreshQueue
    private var listener: UnixStreamSocket?
    private var listenerWatch: LoopWatch?
    private var connections: [Int: Connection] = [:]
    private var nextConnection = 0
    /// Hidden nodes by identity: what they were, the descriptor the service acts through, who holds them hidden.
    private var hidden: [DeviceNodeIdentity: HiddenNode] = [:]

    private final class HiddenNode {
        let record: HiddenNodeRecord
        let descriptor: PassedDescriptor
        var holders: Set<Int>

        init(record: HiddenNodeRecord, descriptor: PassedDescriptor, holder: Int) {
            self.record = record
            self.descriptor = descriptor
            holders = [holder]
        }
    }

    private final class Connection {
        let id: Int
        let socket: UnixStreamSocket
        var watch: LoopWatch?
        let pid: pid_t
        let uid: uid_t
        var lines = StreamLines()
        /// Descriptors passed and not yet taken by a `hide` line, in the order they came.
        var passed: [PassedDescriptor] = []
        /// The nodes it holds hidden, by the path it named.
        var nodes: [String: DeviceNodeIdentity] = [:]
        var idleDeadline: LoopDeadline?
        var serveScheduled = false

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
        udevRefresh = UdevRefreshQueue(loop: loop, logger: logger)
        for directory in [stateDirectory, rulesDirectory] {
            do throws(FileError) {
                try TextFile.makeDirectories(directory, permissions: [.ownerReadWriteExecute, .groupReadExecute, .otherReadExecute])
            } catch {
                throw DeviceAccessError(
                    code: DeviceAccessError.code(for: error.cause), path: directory, operation: "mkdir", cause: error.cause)
            }
        }
        giveBackLeftovers()
        let descriptor = listener.descriptor
        self.listener = consume listener
        listenerWatch = try loop.makeWatch(descriptor, path: "hiding service socket") { [weak self] _ in self?.acceptAll() }
    }

    /// Gives every hidden node back and stops serving. Idempotent.
    public func close() {
        listenerWatch?.cancel()  // before the listener closes (LoopWatch)
        listenerWatch = nil
        listener.take()?.close()
        for id in connections.keys.sorted() { disconnect(id) }
    }

    deinit { close() }

    // MARK: Connections

    private func acceptAll() {
        while let socket = listener?.accept() {
            guard let peer = socket.peer() else { continue }
            let fromUser = connections.values.count { $0.uid == peer.uid }
            if connections.count >= NodeHiding.maximumConnections || fromUser >= NodeHiding.maximumConnectionsPerUser {
                let limit =
                    fromUser >= NodeHiding.maximumConnectionsPerUser
                    ? "too many connections from uid \(peer.uid) (at most \(NodeHiding.maximumConnectionsPerUser))"
                    : "too many clients (at most \(NodeHiding.maximumConnections))"
                _ = socket.send(NodeHidingMessage.refused("-", reason: limit).line + "\n")
                logger.notice("refused a connection from pid \(peer.pid): \(limit)")
                continue
            }
            nextConnection += 1
            let connection = Connection(id: nextConnection, socket: socket, pid: peer.pid, uid: peer.uid)
            do {
                connection.watch = try loop.makeWatch(connection.socket.descriptor, path: "hiding client") {
                    [weak self, id = connection.id] _ in self?.serve(id)
                }
            } catch {
                logger.warning("cannot watch a client: \(error)")
                continue
            }
            connections[connection.id] = connection
            armIdleDeadline(connection)
            logger.debug("client connected", metadata: ["pid": "\(peer.pid)", "uid": "\(peer.uid)"])
        }
    }

    /// A connection that holds nothing hidden is closed after a while: it would only take a place.
    private func armIdleDeadline(_ connection: Connection) {
        connection.idleDeadline = loop.deadline(afterMilliseconds: NodeHiding.idleConnectionMilliseconds) {
            [weak self, id = connection.id] in
            guard let self, let connection = self.connections[id], connection.nodes.isEmpty else { return }
            self.logger.debug("closing an idle client", metadata: ["pid": "\(connection.pid)"])
            self.disconnect(id)
        }
    }

    /// One line a turn: reads only when no whole line is waiting, answers at most one, and comes back next turn
    /// for the rest (a client writing lines nonstop delays the others by one line each turn at most).
    private func serve(_ id: Int) {
        guard let connection = connections[id] else { return }
        connection.serveScheduled = false
        if !connection.lines.hasLine {
            switch connection.socket.receive() {
            case .none:
                return
            case .closed:
                return disconnect(id)
            case .bytes(let bytes, let descriptors):
                connection.passed += descriptors
                connection.lines.add(bytes)
                if connection.lines.overflowed || connection.passed.count > NodeHiding.maximumPathsPerRequest {
                    logger.notice("dropping pid \(connection.pid): a line too long or too many descriptors")
                    return disconnect(id)
                }
            }
        }
        guard let line = connection.lines.nextLine() else { return }
        if connection.lines.overflowed { return disconnect(id) }
        guard answer(line, from: connection) else {
            logger.notice("dropping pid \(connection.pid): it does not read its replies")
            return disconnect(id)
        }
        if connection.lines.hasLine && !connection.serveScheduled {
            connection.serveScheduled = true
            loop.deferWork { [weak self] in self?.serve(id) }
        }
    }

    private func disconnect(_ id: Int) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        connection.watch?.cancel()
        connection.idleDeadline?.cancel()
        let released = connection.nodes.sorted { $0.key < $1.key }.compactMap { release($0.value, from: id) }
        giveBack(released)
        logger.debug("client gone", metadata: ["pid": "\(connection.pid)", "gave back": "\(released.count)"])
    }

    /// Answers one line; false when the reply could not be sent (the client does not read).
    private func answer(_ line: Substring, from connection: Connection) -> Bool {
        var replies: [NodeHidingMessage] = []
        var hiddenNow: [HiddenNode] = []
        var released: [HiddenNode] = []
        switch NodeHidingMessage(line: line) {
        case .hide(let paths)?:
            let descriptors = connection.passed
            connection.passed = []
            if paths.count > NodeHiding.maximumPathsPerRequest {
                replies.append(.refused("-", reason: "at most \(NodeHiding.maximumPathsPerRequest) paths a request"))
            } else if descriptors.count != paths.count {
                replies.append(
                    .refused(
                        "-",
                        reason: "pass an open descriptor of each node with the request (SCM_RIGHTS): "
                            + "\(paths.count) path(s), \(descriptors.count) descriptor(s)"))
            } else {
                for (path, descriptor) in zip(paths, descriptors) {
                    switch hide(path, through: descriptor, for: connection) {
                    case .success(let node):
                        if let node { hiddenNow.append(node) }
                        replies.append(.hidden(path))
                    case .failure(let refusal):
                        replies.append(.refused(path, reason: refusal.reason))
                    }
                }
            }
        case .show(let paths)?:
            for path in paths.prefix(NodeHiding.maximumPathsPerRequest) {
                guard let identity = connection.nodes.removeValue(forKey: path) else {
                    replies.append(.refused(path, reason: "this client did not hide it"))
                    continue
                }
                if let node = release(identity, from: connection.id) { released.append(node) }
                replies.append(.shown(path))
            }
            if connection.nodes.isEmpty { armIdleDeadline(connection) }
        default:
            connection.passed = []
            replies.append(.refused("-", reason: "not a request (hide PATH... or show PATH...)"))
        }
        udevRefresh.request(
            hiddenNow.map { node in
                .init(devpath: node.record.devpath) { [logger] in
                    logger.info(
                        "udev sees \(node.record.node.path) hidden",
                        metadata: ["event": "udevSeesHidden", "node": "\(node.record.node.path)"])
                }
            })
        giveBack(released)
        return connection.socket.send((replies + [.end]).map { $0.line + "\n" }.joined())
    }

    // MARK: Hiding and giving back

    struct Refusal: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Hides `path` for `connection`, acting through `descriptor`; the node when it was hidden now (nil: it already
    /// was).
    private func hide(
        _ path: String, through descriptor: PassedDescriptor, for connection: Connection
    ) -> Result<HiddenNode?, Refusal> {
        guard let node = HideableNode(path: path) else {
            return .failure(Refusal("only /dev/hidrawN and /dev/input/eventN nodes are hidden"))
        }
        let flags = CPadLinux_descriptorStatusFlags(descriptor.rawValue)
        guard flags >= 0, flags & CPadLinux_O_PATH == 0 else {
            return .failure(Refusal("the descriptor passed is an O_PATH one: open the node for reading"))
        }
        guard flags & CPadLinux_O_ACCMODE != CPadLinux_O_WRONLY else {
            return .failure(Refusal("the descriptor passed was not opened for reading"))
        }
        var opened = stat()
        var named = stat()
        guard fstat(descriptor.rawValue, &opened) == 0, opened.st_mode & S_IFMT == S_IFCHR else {
            return .failure(Refusal("the descriptor passed is not a device node"))
        }
        guard lstat(path, &named) == 0, named.st_mode & S_IFMT == S_IFCHR, named.st_rdev == opened.st_rdev,
            named.st_ino == opened.st_ino
        else {
            return .failure(Refusal("the descriptor passed is not the node \(path) names"))
        }
        let identity = DeviceNodeIdentity(device: UInt64(opened.st_rdev), inode: UInt64(opened.st_ino))
        if connection.nodes[path] == identity { return .success(nil) }
        guard connection.nodes.count < NodeHiding.maximumNodesPerConnection else {
            return .failure(Refusal("one client hides at most \(NodeHiding.maximumNodesPerConnection) nodes"))
        }
        guard let devpath = Self.devicePath(of: node), HiddenNodeRule.isMatchable(devpath) else {
            return .failure(Refusal("its device is not in sysfs"))
        }
        if Self.isBridgeOutput(node) { return .failure(Refusal("it is a padbridge bridge's own virtual pad")) }
        if let reason = Self.eligibilityRefusal(node) { return .failure(Refusal(reason)) }
        if let entry = hidden[identity] {
            entry.holders.insert(connection.id)
            connection.nodes[path] = identity
            connection.idleDeadline = nil
            return .success(nil)
        }
        let record = HiddenNodeRecord(
            node: node, devpath: devpath, device: identity.device, inode: identity.inode,
            mode: UInt32(opened.st_mode), uid: opened.st_uid, gid: opened.st_gid,
            accessACL: Self.accessACL(of: descriptor), seatManaged: Self.udevGivesSeatAccess(to: identity))
        do throws(FileError) {
            try TextFile.write(record.line, to: statePath(record))
        } catch {
            return .failure(Refusal("\(error)"))
        }
        do throws(FileError) {
            try TextFile.write(HiddenNodeRule.text(for: node, devpath: devpath), to: rulePath(record))
        } catch {
            removeFile(statePath(record))
            return .failure(Refusal("\(error)"))
        }
        // Owner first: once root owns it, changing its ACL and mode needs no capability beyond CAP_CHOWN.
        let owned = fchown(descriptor.rawValue, 0, 0) == 0
        let removed = owned ? CPadLinux_removeAccessACLOf(descriptor.rawValue) : -EPERM
        guard owned, removed == 0 || removed == -ENODATA, fchmod(descriptor.rawValue, 0) == 0 else {
            let reason = Errno(rawValue: removed < 0 && removed != -ENODATA ? -removed : errno)
            let entry = HiddenNode(record: record, descriptor: descriptor, holder: connection.id)
            giveBack([entry])
            return .failure(Refusal("cannot change its permissions: \(reason)"))
        }
        let entry = HiddenNode(record: record, descriptor: descriptor, holder: connection.id)
        hidden[identity] = entry
        connection.nodes[path] = identity
        connection.idleDeadline = nil
        logger.info(
            "hid \(path) for pid \(connection.pid) (uid \(connection.uid))",
            metadata: ["event": "nodeHidden", "node": "\(path)", "pid": "\(connection.pid)", "uid": "\(connection.uid)"])
        return .success(entry)
    }

    /// `id` lets go of the node; the node when nobody holds it hidden any more: to be given back.
    private func release(_ identity: DeviceNodeIdentity, from id: Int) -> HiddenNode? {
        guard let entry = hidden[identity] else { return nil }
        entry.holders.remove(id)
        guard entry.holders.isEmpty else { return nil }
        hidden[identity] = nil
        return entry
    }

    /// Gives nodes back: their rules and records removed, each node's owner, group and mode put back through the
    /// descriptor held, and its ACL: with udevd running, udev sets it on the nodes it gives the seat's user (tagged
    /// "uaccess"), for whoever sits at the seat now (not whoever did when the node was hidden); the record's ACL
    /// otherwise. Then udevd processes them again (off the loop), and a node an event processed under the old rule
    /// hid again meanwhile gets its owner, group and mode back once more.
    private func giveBack(_ nodes: [HiddenNode]) {
        guard !nodes.isEmpty else { return }
        let udevd = UdevRefreshQueue.udevdRuns
        for node in nodes {
            removeFile(rulePath(node.record))
            removeFile(statePath(node.record))
            restore(node.record, through: node.descriptor.rawValue, acl: !(udevd && node.record.seatManaged))
        }
        guard udevd else {
            for node in nodes {
                logger.info("gave back \(node.record.node.path)", metadata: ["event": "nodeGivenBack", "node": "\(node.record.node.path)"])
                node.descriptor.close()
            }
            return
        }
        udevRefresh.request(
            nodes.map { node in
                .init(devpath: node.record.devpath) { [weak self] in
                    self?.confirmGivenBack(node.record, through: node.descriptor.rawValue)
                    node.descriptor.close()
                }
            })
    }

    /// After udev's refresh: owner, group and mode as given back (an event processed under the removed rule before
    /// udevd re-read its rules would have hidden the node again).
    private func confirmGivenBack(_ record: HiddenNodeRecord, through fd: Int32) {
        var status = stat()
        if fd >= 0, fstat(fd, &status) == 0,
            status.st_mode & 0o7777 != record.mode & 0o7777 || status.st_uid != record.uid || status.st_gid != record.gid
        {
            logger.notice("\(record.node.path) was hidden again while udev re-read its rules; giving it back again")
            restore(record, through: fd, acl: false)
        }
        logger.info("gave back \(record.node.path)", metadata: ["event": "nodeGivenBack", "node": "\(record.node.path)"])
    }

    /// Puts back what the node was, through a descriptor of it (also an O_PATH one: through /proc/self/fd, which
    /// names the node itself, not a path to it).
    private func restore(_ record: HiddenNodeRecord, through fd: Int32, acl: Bool) {
        let path = record.node.path
        let node = "/proc/self/fd/\(fd)"
        // The mode before the ACL (with an ACL, the mode's group bits are its mask, which the ACL then sets), and
        // both while root owns the node: changing another owner's node would need CAP_FOWNER, which the unit does
        // not give. The owner last.
        if chmod(node, mode_t(record.mode & 0o7777)) != 0 { logger.warning("cannot give \(path) its mode back") }
        if acl, let entries = record.accessACL {
            let result = entries.withUnsafeBytes { CPadLinux_setAccessACL(node, $0.baseAddress, UInt($0.count)) }
            if result != 0 { logger.warning("cannot give \(path) its ACL back") }
        }
        if chown(node, record.uid, record.gid) != 0 { logger.warning("cannot give \(path) its owner back") }
    }

    /// What a service that died left hidden: its rules removed; each node still the one hidden (same device, same
    /// inode) given back as `giveBack` does.
    private func giveBackLeftovers() {
        var records: [HiddenNodeRecord] = []
        for name in SysfsInputDevices.directoryEntries(stateDirectory) where name.hasSuffix(".state") {
            let path = "\(stateDirectory)/\(name)"
            if let text = try? TextFile.contents(atPath: path),
                let record = HiddenNodeRecord(line: Substring(text.split(separator: "\n").first ?? ""))
            {
                records.append(record)
                logger.notice("giving back \(record.node.path), left hidden by an earlier run")
            }
            removeFile(path)
        }
        for name in SysfsInputDevices.directoryEntries(rulesDirectory) where name.hasPrefix(HiddenNodeRule.fileNamePrefix) {
            removeFile("\(rulesDirectory)/\(name)")
        }
        var nodes: [HiddenNode] = []
        for record in records {
            // O_PATH: the node is mode 0000 now; a path descriptor pins the inode, so the check and the change are
            // made on one node.
            let fd = open(record.node.path, CPadLinux_O_PATH | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            let descriptor = PassedDescriptor(FileDescriptor(rawValue: fd))
            var status = stat()
            guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFCHR,
                DeviceNodeIdentity(device: UInt64(status.st_rdev), inode: UInt64(status.st_ino)) == record.identity
            else { continue }
            nodes.append(HiddenNode(record: record, descriptor: descriptor, holder: 0))
        }
        giveBack(nodes)
    }

    /// Whether udev tagged the node "uaccess" (its database, /run/udev/data/cMAJOR:MINOR): then the seat's user gets
    /// an ACL on it from udev.
    static func udevGivesSeatAccess(to identity: DeviceNodeIdentity) -> Bool {
        let major = CPadLinux_deviceMajor(identity.device)
        let minor = CPadLinux_deviceMinor(identity.device)
        guard let database = try? TextFile.contents(atPath: "/run/udev/data/c\(major):\(minor)") else { return false }
        return database.split(separator: "\n").contains { $0 == "G:uaccess" || $0 == "Q:uaccess" }
    }

    private func statePath(_ record: HiddenNodeRecord) -> String { "\(stateDirectory)/\(record.fileName)" }
    private func rulePath(_ record: HiddenNodeRecord) -> String {
        "\(rulesDirectory)/\(HiddenNodeRule.fileName(for: record.node, inode: record.inode))"
    }

    // MARK: Checks

    /// Why the node may not be hidden (not a game controller's), from its device's capabilities or report
    /// descriptor in sysfs; nil when it may.
    static func eligibilityRefusal(_ node: HideableNode) -> String? {
        switch node.kind {
        case .event, .joystick:
            guard let input = SysfsInputDevices.resolvedPath("\(node.sysfsClassPath)/device") else {
                return "its input device is not in sysfs"
            }
            let own = capabilities(ofInputDevice: input)
            let parts = input.split(separator: "/", omittingEmptySubsequences: false)
            var siblings: [InputDeviceCapabilities] = []
            // Siblings share a real parent device (a HID device, a USB interface). uinput devices all hang under
            // /sys/devices/virtual/input: each stands alone there.
            if parts.count > 2, parts[parts.count - 2] == "input",
                parts.dropLast().joined(separator: "/") != "/sys/devices/virtual/input"
            {
                let directory = parts.dropLast().joined(separator: "/")
                for name in SysfsInputDevices.directoryEntries(directory)
                where name.hasPrefix("input") && "\(directory)/\(name)" != input {
                    siblings.append(capabilities(ofInputDevice: "\(directory)/\(name)"))
                }
            }
            return HidingEligibility.refusal(eventNode: own, siblings: siblings)
        case .hidraw:
            guard let device = SysfsInputDevices.resolvedPath("\(node.sysfsClassPath)/device") else {
                return "its HID device is not in sysfs"
            }
            let descriptor = (try? TextFile.bytes(atPath: "\(device)/report_descriptor")) ?? []
            let inputs = SysfsInputDevices.directoryEntries("\(device)/input").filter { $0.hasPrefix("input") }
                .map { capabilities(ofInputDevice: "\(device)/input/\($0)") }
            return HidingEligibility.refusal(hidrawDescriptor: descriptor, inputDevices: inputs)
        }
    }

    /// An inputN device's bitmaps, from its uevent file.
    static func capabilities(ofInputDevice path: String) -> InputDeviceCapabilities {
        var properties: [String: String] = [:]
        for line in (SysfsInputDevices.readAttribute("\(path)/uevent") ?? "").split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return InputDeviceCapabilities(udevProperties: properties)
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
        case .event, .joystick:
            phys = SysfsInputDevices.readAttribute("\(node.sysfsClassPath)/device/phys")
        case .hidraw:
            phys = SysfsInputDevices.readAttribute("\(node.sysfsClassPath)/device/uevent")?.split(separator: "\n")
                .first { $0.hasPrefix("HID_PHYS=") }.map { String($0.dropFirst("HID_PHYS=".count)) }
        }
        return phys?.hasPrefix(NodeHiding.bridgeOutputPhysicalPathPrefix) ?? false
    }

    static func accessACL(of descriptor: PassedDescriptor) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let length = buffer.withUnsafeMutableBytes {
            CPadLinux_getAccessACLOf(descriptor.rawValue, $0.baseAddress, UInt($0.count))
        }
        return length > 0 ? Array(buffer.prefix(Int(length))) : nil
    }

    /// Removes a record or rule file; a failure is logged (a rule left behind keeps hiding its node whenever udev
    /// processes it again, so the log says which file to delete).
    private func removeFile(_ path: String) {
        do throws(FileError) {
            try TextFile.remove(atPath: path)
        } catch {
            logger.warning("\(error): delete it by hand")
        }
    }
}
