import Glibc
public import PadCore
import SystemPackage

/// A client's hold on the hiding service (`NodeHidingService`): asks it to hide a pad's nodes, which this lease
/// holds open itself (the service hides only nodes the asking process holds), and gives them back when released,
/// by closing the connection, as a process that is killed does. Loop-confined.
public final class NodeHidingLease {
    /// The service's answer to the request: the nodes hidden now, and those refused, with why.
    public struct Answer: Sendable, Hashable {
        public var hidden: [String] = []
        public var refused: [String: String] = [:]
        /// Nodes this process may not open: the user's programs cannot open them either, nothing to hide.
        public var notOpenToThisUser: [String] = []
    }

    public let paths: [String]
    private let loop: DeviceEventLoop
    private var socket: UnixStreamSocket?
    private var watch: LoopWatch?
    private var holders: [FileDescriptor] = []
    private var lines = StreamLines()
    private var answer = Answer()
    private let onAnswer: (Answer) -> Void
    private let onServiceGone: () -> Void
    private var answered = false

    /// The joystick nodes (`/dev/input/jsN`, made by joydev when it is loaded) of the input devices at
    /// `inputSyspaths`: nodes of a pad besides its event and hidraw ones, which older games and Wine's joystick API
    /// read. In sysfs they are the input device's children, beside its event node.
    public static func joystickNodes(ofInputDevices inputSyspaths: [String]) -> [String] {
        inputSyspaths.flatMap { syspath in
            SysfsInputDevices.directoryEntries(syspath)
                .filter { HideableNode(path: "/dev/input/\($0)")?.kind == .joystick }
                .sorted(by: SysfsInputDevices.naturalOrder)
                .map { "/dev/input/\($0)" }
        }
    }

    /// Connects to the service at `socketPath` and asks it to hide `paths` (those this process can open; the others
    /// are refused here). Throws when the service cannot be reached (not installed, not running): `.missingDevice`
    /// (no socket there) or another code with the cause. `onAnswer` runs once, on the loop; `onServiceGone` when the
    /// service closes the connection after that (its nodes are visible again).
    public init(
        hiding paths: [String], socketPath: String = NodeHiding.socketPath, loop: DeviceEventLoop,
        onAnswer: @escaping (Answer) -> Void, onServiceGone: @escaping () -> Void
    ) throws(DeviceAccessError) {
        self.paths = paths
        self.loop = loop
        self.onAnswer = onAnswer
        self.onServiceGone = onServiceGone
        var held: [String] = []
        for path in paths {
            do {
                holders.append(try FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .closeOnExec]))
                held.append(path)
            } catch Errno.permissionDenied {
                answer.notOpenToThisUser.append(path)
            } catch {
                answer.refused[path] = "padbridge cannot open it (\(error))"
            }
        }
        let socket = try UnixStreamSocket.connected(to: socketPath)
        // The service acts only on the descriptors passed with the request, one per path, in the same order.
        if !held.isEmpty
            && !socket.send(NodeHidingMessage.hide(held).line + "\n", passing: holders.map(\.rawValue))
        {
            throw DeviceAccessError(code: .ioFailed, path: socketPath, operation: "send")
        }
        let descriptor = socket.descriptor
        self.socket = consume socket
        watch = try loop.makeWatch(descriptor, path: socketPath) { [weak self] _ in self?.read() }
        if held.isEmpty { loop.deferWork { [weak self] in self?.finishAnswer() } }
    }

    private func read() {
        while true {
            guard let received = socket?.receive() else { return }
            switch received {
            case .none:
                return
            case .closed:
                let wasAnswered = answered
                close()
                // A connection that hid nothing is closed by the service after a while; nothing comes back then.
                if !wasAnswered {
                    finishAnswer(serviceGone: true)
                } else if !answer.hidden.isEmpty {
                    onServiceGone()
                }
                return
            case .bytes(let bytes, _):
                for line in lines.append(bytes) {
                    switch NodeHidingMessage(line: line) {
                    case .hidden(let path)?: answer.hidden.append(path)
                    case .refused(let path, let reason)?: answer.refused[path] = reason
                    case .end?: finishAnswer()
                    default: break
                    }
                }
            }
        }
    }

    private func finishAnswer(serviceGone: Bool = false) {
        guard !answered else { return }
        answered = true
        if serviceGone {
            for path in paths where !answer.hidden.contains(path) && answer.refused[path] == nil {
                answer.refused[path] = "the hiding service closed the connection"
            }
        }
        onAnswer(answer)
    }

    /// Gives the nodes back (the service sees the connection close) and closes the nodes held. Idempotent.
    public func close() {
        watch?.cancel()
        watch = nil
        socket.take()?.close()
        for holder in holders { try? holder.close() }
        holders = []
    }

    deinit { close() }
}
