public import PadCore

/// Reads one controller: every event node of it watched on the loop, their events assembled into one
/// `PadSnapshot` (pad, motion and touchpad nodes alike), a frame at a time. What `monitor` prints and `remap`
/// forwards. Loop-confined.
///
/// The first snapshot is the controller's state when reading starts (held buttons, sticks and touch contacts
/// included, the touchpad at its node's current slot), so nothing that happened before is missed. Unplugging any of its nodes ends the reader: `onUnplugged` is called once and every
/// node is closed (grabs end with them).
public final class ControllerReader {
    public let controller: Controller
    /// The controller's state as of its last completed frame.
    public var snapshot: PadSnapshot { assembler.snapshot }
    /// The nodes' identities and capabilities, in `controller.nodes.evdev` order (for evtest-style headers).
    public private(set) var nodeInfo: [EvdevDeviceInfo] = []

    /// Called for every batch of events read from a node, before they are assembled (monitor --raw).
    public var onEvents: ((EvdevNode, [EvdevReading]) -> Void)?
    /// Called when a node's frame completed: the snapshot, and the frame's SYN_REPORT (its kernel timestamp).
    public var onFrame: ((PadSnapshot, EvdevEvent) -> Void)?
    /// Called when the kernel dropped events of a node because this reader fell behind (SYN_DROPPED): the state is
    /// caught up, but presses and releases in between are gone. Once per catch-up.
    public var onEventsDropped: ((EvdevNode) -> Void)?
    /// Called once when a node of the controller went away.
    public var onUnplugged: ((EvdevNode) -> Void)?
    /// Why a DualSense Edge's hidraw node could not be opened for its back buttons (nil: read, or not an Edge);
    /// every other control is read all the same.
    public private(set) var backButtonsUnreadable: DeviceAccessError?

    private var assembler: EvdevSnapshotAssembler
    private var watched: [WatchedEvdevDevice] = []
    private var ended = false
    /// A DualSense Edge's hidraw node, read for the back buttons no event node reports.
    private var hidraw: HidrawDevice?
    private var hidrawWatch: LoopWatch?
    private var reportBuffer: [UInt8] = []

    /// Opens every event node of `controller` and watches it on `loop`. `layout` picks the pad node's layout from
    /// its capabilities (nil when the controller has no pad node). With `grab`, each node is grabbed (EVIOCGRAB) so
    /// only padbridge sees its events.
    public init(
        controller: Controller, grab: Bool, loop: DeviceEventLoop,
        layout: (_ padNode: EvdevDeviceInfo?) -> EvdevLayout
    ) throws(DeviceAccessError) {
        self.controller = controller
        assembler = EvdevSnapshotAssembler(layout: .linuxGamepadConvention, absoluteInfo: [:])
        var absoluteInfo: [EvdevNodeRole: [UInt16: EvdevAbsoluteInfo]] = [:]
        var held: [EvdevNodeRole: [UInt16]] = [:]
        var touchSlots: [EvdevNodeRole: [EvdevTouchSlot]] = [:]
        do throws(DeviceAccessError) {
            for (index, node) in controller.nodes.evdev.enumerated() {
                let device = try EvdevDevice(path: node.path)
                if grab { try device.grab() }
                let info = device.info()
                nodeInfo.append(info)
                absoluteInfo[node.role] = info.absoluteInfo
                held[node.role] = device.pressedKeys() ?? []
                touchSlots[node.role] = device.touchSlots()
                // Events are handled only once the loop runs, after the assembler below is in place.
                // unowned(unsafe): no reference counting per read. Sound because every watch ends in close(),
                // which deinit calls.
                watched.append(
                    try loop.watch(device) { [unowned(unsafe) self, role = node.role] result in
                        self.handle(result, fromNode: index, role: role)
                    })
            }
        } catch {
            close()
            throw error
        }
        let padInfo = zip(controller.nodes.evdev, nodeInfo).first { $0.0.role == .pad }?.1
        assembler = EvdevSnapshotAssembler(layout: layout(padInfo), absoluteInfo: absoluteInfo)
        for node in controller.nodes.evdev {
            assembler.seed(node.role, pressedKeys: held[node.role] ?? [], touchSlots: touchSlots[node.role] ?? [])
        }
        if controller.kind == .dualSenseEdge, let path = controller.nodes.hidraw {
            watchBackButtons(path: path, loop: loop)
        }
    }

    /// Reads a DualSense Edge's hidraw reports for its back buttons (`paddle1`-`paddle4`): hid-playstation makes no
    /// event for them. A node that cannot be opened (no read access) leaves the pad read without them, said once.
    private func watchBackButtons(path: String, loop: DeviceEventLoop) {
        do {
            let device = try HidrawDevice(path: path)
            // unowned(unsafe): as the event nodes' watches, this one ends in close(), which deinit calls.
            hidrawWatch = try loop.makeWatch(device.descriptorForPolling, path: path) { [unowned(unsafe) self] _ in
                self.readBackButtons()
            }
            hidraw = consume device
            reportBuffer = [UInt8](repeating: 0, count: 128)
        } catch {
            backButtonsUnreadable = error
        }
    }

    private func readBackButtons() {
        guard !ended else { return }
        while true {
            let read = reportBuffer.withUnsafeMutableBytes { buffer in
                Result { () throws(DeviceAccessError) in try hidraw?.readInputReport(into: buffer) }
            }
            guard case let .success(count?) = read, count > 0 else {
                // Gone (the event nodes say so) or a failed read: the back buttons stop, the rest goes on.
                if case .failure = read { stopReadingBackButtons() }
                return
            }
            let buttons = reportBuffer.withUnsafeBytes { bytes in
                DualSenseInputReport.edgeBackButtons(UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
            }
            guard let buttons, assembler.showReportButtons(buttons, of: DualSenseInputReport.edgeBackButtonSet)
            else { continue }
            let now = MonotonicInstant.now().microseconds
            onFrame?(
                assembler.snapshot,
                EvdevEvent(
                    seconds: Int64(now / 1_000_000), microseconds: Int32(now % 1_000_000), type: EvdevCode.evSyn,
                    code: EvdevCode.synReport, value: 0))
        }
    }

    private func stopReadingBackButtons() {
        hidrawWatch?.cancel()
        hidrawWatch = nil
        hidraw.take()?.close()
    }

    /// The node comes as its index in `controller.nodes.evdev` and its role: no strings are passed (and counted)
    /// per read.
    private func handle(_ result: EvdevReadResult, fromNode index: Int, role: EvdevNodeRole) {
        guard !ended else { return }
        switch result {
        case let .events(readings):
            if let onEvents { onEvents(controller.nodes.evdev[index], readings) }
            var caughtUp = false
            for reading in readings {
                if reading.isResync && !caughtUp {
                    caughtUp = true
                    onEventsDropped?(controller.nodes.evdev[index])
                }
                if case .frameCompleted = assembler.apply(reading.event, from: role) {
                    onFrame?(assembler.snapshot, reading.event)
                }
            }
        case .unplugged:
            close()
            onUnplugged?(controller.nodes.evdev[index])
        }
    }

    /// Stops reading and closes every node (which ends their grabs). Idempotent.
    public func close() {
        ended = true
        for device in watched { device.close() }
        watched = []
        stopReadingBackButtons()
    }

    deinit { close() }
}
