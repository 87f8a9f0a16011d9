public import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import PadCore
import PadJSONLines
import PadLinux
import PadSessions

struct VirtualCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "virtual",
        abstract: "Create a virtual pad fed by JSON lines on standard input; print its feedback as JSON lines.",
        discussion: """
            Input lines (one event each):
              {"type":"button","button":"a","pressed":true}
              {"type":"axis","axis":"leftx","value":-12000}      sticks -32768...32767 (up negative), triggers 0...32767
              {"type":"touch","contact":0,"active":true,"x":0.5,"y":0.25}
              {"type":"motion","gyro":[0,0,0.5],"accel":[0,9.81,0]}   rad/s, m/s²
              {"type":"battery","percent":80,"charging":false}
            Feedback lines on standard output: rumble, lightbar, playerLeds, micLed, trigger.
            When the kernel has made the pad's device nodes, one line "padbridge: ready {...}" goes to standard error.
            Ends on end of input, SIGINT or SIGTERM, releasing every input and destroying the pad.
            """
    )

    @Option(
        name: .long,
        help: "The pad to create: xbox360, dualsense, dualsense-edge, dualshock4, xbox-one (an Xbox Series pad on Bluetooth) switch-pro (a Switch Pro Controller on Bluetooth) or steam-deck (a Steam Deck's controls, read at hidraw).")
    var type: VirtualPadKind

    @Option(name: .long, help: "The device name readers see (default: the real pad's name).")
    var name: String?

    @Option(
        name: .long,
        help: "uhid pads (all but xbox360): the identity seed. The same seed gives the same MAC address on every run (default: random).")
    var seed: String?

    @Option(
        name: .long,
        help: "PlayStation pads only: the bus to present, usb or bluetooth. SDL2 sees touchpad, motion and LEDs only on bluetooth.")
    var bus: HIDTransport?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if !type.isHIDDevice && seed != nil {
            throw ValidationError("--seed applies to uhid pads only (every --type but xbox360).")
        }
        if !type.choosesItsBus && bus != nil {
            throw ValidationError("--bus applies to PlayStation pads only (dualsense, dualsense-edge, dualshock4).")
        }
        if let name, name.isEmpty || name.utf8.count > 79 {
            throw ValidationError("--name must be 1 to 79 bytes long.")
        }
    }

    func run() throws {
        let logger = global.makeLogger(label: "padbridge.virtual")
        // A reader that goes away must not kill us before the pad is released: EPIPE is handled per write.
        signal(SIGPIPE, SIG_IGN)
        let loop = try DeviceEventLoop()
        // Signals first: they must be blocked before any other thread starts.
        var shutdown: (() -> Void)?
        try loop.watchSignals([SIGINT, SIGTERM]) { signal in
            logger.info("received signal \(signal): releasing inputs and destroying the pad")
            if let shutdown { shutdown() } else { loop.stop() }
        }

        // Feedback lines are a by-product: when their reader goes away the pad stays (its input is what drives it).
        var feedbackPrinted = true
        let onFeedback: (FeedbackEvent) -> Void = { event in
            guard feedbackPrinted, !LineOutput.standardOutput.write(FeedbackLines.line(for: event)) else { return }
            feedbackPrinted = false
            StatusOutput.say(LineOutput.readerWentAway("feedback is no longer printed; the pad stays"))
        }

        // End of input before the kernel has made the pad's nodes would destroy a pad nobody could see:
        // finish once it is ready, within a bound (the probe takes well under a second even under emulation).
        var ready = false
        var inputEnded = false
        var readinessDeadline: LoopDeadline?
        let seed = self.seed ?? RandomSeed.make()
        let identity = DualSenseIdentity(seed: seed)
        let onReady: (VirtualPadNodes) -> Void = { [type] nodes in
            ready = true
            readinessDeadline?.cancel()
            readinessDeadline = nil
            StatusOutput.say(ReadyLine.event(kind: type, nodes: nodes, mac: type.isHIDDevice ? identity.uniq : nil))
            if inputEnded { shutdown?() }
        }

        let bus = self.bus ?? .bluetooth
        let pad = try type.createPad(
            name: name, seed: seed, bus: bus, loop: loop, logger: logger, onFeedback: onFeedback, onReady: onReady)
        if type.isHIDDevice {
            logger.info("virtual \(type.displayName) \(identity.uniq) (seed \"\(seed)\", \(bus.rawValue) bus)")
        }
        defer { pad.close() }

        var snapshot = PadSnapshot.neutral
        var lineNumber = 0

        // Shutting down: input stops being read (nothing presses again on top of the release, and its end is no
        // second request), every input is released, the pad kept serving (force-feedback requests, the kernel) for a
        // grace period so readers see the release before the node goes, then the loop stops.
        let ending = ReleaseThenStop(loop: loop) {
            loop.stopReadingStandardInput()
            snapshot = snapshot.released
            do {
                try pad.apply(snapshot)
                return true
            } catch {
                logger.warning("could not release the pad's inputs: \(error)")
                return false
            }
        }
        shutdown = ending.request
        try loop.watchStandardInputLines(
            { line in
                lineNumber += 1
                if line.allSatisfy(\.isWhitespace) { return }
                do throws(JSONLineError) {
                    snapshot.apply(try PadEventLines.event(from: line, current: snapshot))
                } catch {
                    StatusOutput.say(.lineIgnored, "line \(lineNumber): \(error.message); line ignored", ["line": EventValue(lineNumber)])
                }
            },
            onBatchEnd: {
                // The lines of one read are one frame: readers see them together (one SYN_REPORT).
                do {
                    try pad.apply(snapshot)
                } catch {
                    StatusOutput.say(.padFailed, "\(error)")
                    loop.stop()
                }
            },
            onOverlongLine: {
                lineNumber += 1
                StatusOutput.say(
                    .lineIgnored, "line \(lineNumber): longer than \(DeviceEventLoop.maximumLineBytes) bytes (no newline?); "
                        + "line ignored", ["line": EventValue(lineNumber)])
            },
            onEndOfFile: {
                logger.debug("end of input after \(lineNumber) lines")
                inputEnded = true
                if ready {
                    shutdown?()
                    return
                }
                let seconds: UInt64 = 20
                logger.info("end of input before the kernel made the pad's nodes; waiting up to \(seconds) s for it")
                readinessDeadline = loop.deadline(afterMilliseconds: seconds * 1000) {
                    StatusOutput.say(
                        .notReady,
                        "the kernel did not make the pad's device nodes within \(seconds) s"
                            + (type.isHIDDevice ? "; \(type.missingDriverAdvice)" : ""))
                    loop.stop()
                }
            })
        try loop.run()
    }
}

// The value lists are spelled out: swift-argument-parser's defaults build them through string interpolation and
// comparisons on every parse, about 2 M instructions of each start (callgrind), which emulation makes slow.
extension VirtualPadKind: ExpressibleByArgument {
    static var allValueStrings: [String] { allCases.map(\.rawValue) }
    static var allValueDescriptions: [String: String] { [:] }
    var defaultValueDescription: String { rawValue }
}

extension VirtualPadChoice: ExpressibleByArgument {
    init?(argument: String) { self.init(name: argument) }
    static var allValueStrings: [String] { names }
    static var allValueDescriptions: [String: String] { [:] }
    var defaultValueDescription: String { name }
}

extension HIDTransport: ExpressibleByArgument {
    static var allValueStrings: [String] { allCases.map(\.rawValue) }
    static var allValueDescriptions: [String: String] { [:] }
    var defaultValueDescription: String { rawValue }
}

/// The JSON object of the "ready" status line.
enum ReadyLine {
    /// The ready object: what was made, where. `source`: for `remap`, the ID of the physical pad the virtual one stands
    /// for; `desktop`: its virtual keyboard's and mouse's event nodes, where the profile made them. `kind` nil: no
    /// virtual pad (`--as none`).
    static func object(
        kind: VirtualPadKind?, nodes: VirtualPadNodes, mac: String?, source: String? = nil,
        desktop: (keyboard: String?, mouse: String?)? = nil
    ) -> [EventValue.Field] {
        var fields: [EventValue.Field] = [
            .init("kind", .string(kind?.rawValue ?? "none")), .init("eventNodes", EventValue(strings: nodes.eventNodes)),
            .init("hidraw", EventValue(nodes.hidrawNode)), .init("sysfs", EventValue(nodes.sysfsPath)),
            .init("mac", EventValue(mac)),
        ]
        if let source { fields.append(.init("source", .string(source))) }
        if let desktop {
            fields += [.init("keyboard", EventValue(desktop.keyboard)), .init("mouse", EventValue(desktop.mouse))]
        }
        return fields
    }

    /// The ready object as JSON text.
    static func json(
        kind: VirtualPadKind?, nodes: VirtualPadNodes, mac: String?, source: String? = nil,
        desktop: (keyboard: String?, mouse: String?)? = nil
    ) -> String {
        EventValue.object(object(kind: kind, nodes: nodes, mac: mac, source: source, desktop: desktop)).json
    }

    /// The ready event: "ready {OBJECT}" in text; in JSON the object's keys are the event's fields.
    static func event(
        kind: VirtualPadKind?, nodes: VirtualPadNodes, mac: String?, source: String? = nil,
        desktop: (keyboard: String?, mouse: String?)? = nil
    ) -> StatusEvent {
        let fields = object(kind: kind, nodes: nodes, mac: mac, source: source, desktop: desktop)
        return StatusEvent(.ready, "ready " + EventValue.object(fields).json, fields: fields)
    }
}

enum RandomSeed {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 16)
    }
}
