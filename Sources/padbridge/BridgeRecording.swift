import Glibc
import Logging
import PadCore
import PadJSONLines
import PadLinux

/// `remap --record FILE` and `connect --record FILE`: both sides of one bridged pad in one recording. The
/// physical pad's nodes (their events as the bridge reads them: a grabbed node's events reach only the grabbing
/// handle), its hidraw input reports, the virtual pad's event nodes when they are on this machine
/// (`side=virtual`), the feedback games send the virtual pad (`f ... virtual`; over a link, as the host relays it)
/// and what of it reached the physical pad (`f ... physical`). It covers the pad until it is unplugged.
/// Loop-confined.
final class BridgeRecording {
    let path: String
    /// Written under a temporary name until the recording starts: a bridge that fails before (a grab refused) leaves
    /// an earlier recording of that name as it was.
    private let file: RecordingFile
    private var recorder: PadRecorder?
    /// The physical pad's hidraw node, read by `prepare` before the bridge runs.
    private var hidraw: (controller: Fingerprint, declaration: HidrawDeclaration?)?
    /// The physical pad's event nodes by path: their index in the recording.
    private var indexByPath: [String: Int] = [:]

    init(path: String) throws {
        self.path = path
        file = try RecordingFile(path: path)
        file.onWriteFailed = { StatusOutput.say($0) }
    }

    /// Reads the pad's hidraw node (its descriptor and feature reports: a request to the pad each, up to seconds
    /// unanswered over Bluetooth) before the bridge runs, so that starting the recording later does not stall it.
    func prepare(_ controller: Controller, logger: Logger) {
        hidraw = (controller.fingerprint, RecordCommand.hidrawDeclaration(of: controller, for: path, logger: logger))
    }

    /// Starts recording `controller` (read by its bridge) and the virtual pad's `virtualNodes`; once only.
    func start(controller: Controller, virtualNodes: [String], loop: DeviceEventLoop, logger: Logger) {
        guard recorder == nil else { return }
        if hidraw?.controller != controller.fingerprint { prepare(controller, logger: logger) }
        let physicalNodes = controller.nodes.evdev
        let nodes =
            physicalNodes.map { PadRecorder.EvdevNode(path: $0.path, role: $0.role.rawValue, events: .supplied) }
            + virtualNodes.map { PadRecorder.EvdevNode(path: $0, role: "", side: .virtual) }
        do {
            recorder = try PadRecorder(
                identity: RecordedPadIdentity(controller), evdevNodes: nodes, hidraw: hidraw?.declaration,
                loop: loop, logger: logger, output: PadRecordingTextOutput(write: file.write),
                onUnplugged: { [path] in
                    StatusOutput.say(.recordingEnded, "\(path): the recording ends here (a pad went away)", ["file": .string(path)])
                })
            try file.commit()
        } catch {
            recorder?.close()
            recorder = nil
            StatusOutput.say(.notRecording, "not recording to \(path): \(error)", ["file": .string(path)])
            return
        }
        indexByPath = Dictionary(uniqueKeysWithValues: physicalNodes.enumerated().map { ($1.path, $0) })
        StatusOutput.say(
            .recording,
            "recording \(controller.name) [\(controller.fingerprint)]"
                + (virtualNodes.isEmpty ? "" : " and its virtual pad") + " to \(path)",
            [
                "pad": .string(controller.fingerprint.rawValue), "name": .string(controller.name), "file": .string(path),
                "virtualNodes": EventValue(strings: virtualNodes),
            ])
    }

    /// Events the bridge read from a node of the physical pad (a pad that came back has other nodes: not recorded).
    func physicalEvents(_ node: EvdevNode, _ readings: [EvdevReading]) {
        guard let index = indexByPath[node.path] else { return }
        recorder?.recordEvents(readings, node: index)
    }

    /// Feedback a game sent the virtual pad.
    func gameFeedback(_ event: FeedbackEvent) {
        recorder?.recordFeedback(line: FeedbackLines.line(for: event), side: .virtual)
    }

    /// Feedback written to the physical pad.
    func reachedPad(_ feedback: Feedback) {
        for event in feedback.events { recorder?.recordFeedback(line: FeedbackLines.line(for: event), side: .physical) }
    }

    /// Records what the nodes still hold and closes the file (a recording that never started leaves no file, and an
    /// earlier one of its name as it was). Idempotent.
    func finish() {
        guard let recorder else { return file.close() }
        self.recorder = nil
        recorder.finish()
        file.close()
        StatusOutput.say(
            .recorded, "recorded \(recorder.entryCount) entries to \(path)",
            ["entries": EventValue(recorder.entryCount), "file": .string(path)])
    }
}
