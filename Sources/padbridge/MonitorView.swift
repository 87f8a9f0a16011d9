import ArgumentParser
import CTerminalView
import Glibc
import PadCore
import PadLinux
import PadProfiles
import SystemPackage

/// `monitor --view`: the pad as a full-screen picture (`PadPicture`) drawn through ncurses. A frame is drawn at
/// most every 16 ms, and only when the pad changed (never per report); the report rate refreshes twice a second.
/// The terminal is given back on every way out: q, SIGINT, SIGTERM, the pad unplugged, an error.
enum MonitorView {
    static let frameMilliseconds: UInt64 = 16
    static let rateMilliseconds: UInt64 = 500

    static func run(
        controller: Controller, grab: Bool, profile: RemapProfile?, loop: DeviceEventLoop
    ) throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw ValidationError("--view draws on a terminal: run it in one (over SSH too), or use monitor without --view.")
        }
        let session = try MonitorSession(controller: controller, output: .view, grab: grab, loop: loop)
        defer { session.finish() }
        guard CTerminalView_begin() == 0 else {
            let term = getenv("TERM").map { String(cString: $0) } ?? "(unset)"
            throw ValidationError("this terminal (TERM=\(term)) is one ncurses does not know; set TERM, e.g. TERM=xterm-256color.")
        }
        defer { CTerminalView_end() }

        let context = PadPicture.Context(
            title: "\(controller.name) [\(controller.fingerprint)]", capabilities: controller.capabilities, reportRate: nil,
            stickShaping: profile.map(PadPicture.StickShapingPair.init))
        let state = State(snapshot: session.snapshot, context: context)
        // A profile that drives a keyboard and mouse runs here too, touching no device: the line shows what it does.
        if let profile, profile.needsVirtualKeyboard || profile.needsVirtualMouse {
            state.desktop = DesktopActivity(pipeline: try RemapPipeline(profile: profile, target: .everything))
            state.context.desktopLine = state.desktop?.line
        }
        let frame = loop.makeTimer {
            state.draw()
        }
        func changed() {
            guard !state.frameDue else { return }
            state.frameDue = true
            let earliest = state.lastDrawn.adding(milliseconds: frameMilliseconds)
            frame.schedule(at: max(earliest, MonotonicInstant.now()))
        }
        session.onSnapshot = { snapshot in
            state.snapshot = snapshot
            if state.desktop != nil {
                state.desktop!.apply(snapshot)
                state.context.desktopLine = state.desktop!.line
            }
            changed()
        }
        func readKeys() {
            while true {
                let key = CTerminalView_key()
                if key < 0 { return }
                if key == CTerminalView_resized() { changed() }
                if key == Int32(UInt8(ascii: "q")) || key == Int32(UInt8(ascii: "Q")) { loop.stop() }
            }
        }
        // A window resize: taken here (the loop's signalfd), so it does not depend on which thread ncurses' own
        // SIGWINCH handler would run on.
        try loop.watchSignals([SIGWINCH]) { _ in
            CTerminalView_followWindowSize()
            changed()
        }
        let keys = try loop.makeWatch(FileDescriptor.standardInput, path: "standard input") { _ in readKeys() }
        defer { keys.cancel() }
        // Twice a second: the report rate, and a window resize that came without a key (SIGWINCH).
        let rate = loop.repeating(everyMilliseconds: rateMilliseconds) {
            state.context.reportRate = session.takeStatistics(overMicroseconds: Int64(rateMilliseconds) * 1000)
            readKeys()
            changed()
        }
        defer { rate.cancel() }
        state.draw()
        try loop.run()
        frame.close()
        CTerminalView_end()
        if let said = session.unpluggedMessage { StatusOutput.say(said) }
    }

    /// What is on screen and what is next; confined to the loop thread (a class: the timers' closures share it).
    final class State {
        var snapshot: PadSnapshot
        var context: PadPicture.Context
        var frameDue = false
        var lastDrawn = MonotonicInstant(nanoseconds: 0)
        var desktop: DesktopActivity?

        init(snapshot: PadSnapshot, context: PadPicture.Context) {
            self.snapshot = snapshot
            self.context = context
        }

        func draw() {
            frameDue = false
            lastDrawn = MonotonicInstant.now()
            var rows: Int32 = 0
            var columns: Int32 = 0
            CTerminalView_size(&rows, &columns)
            let picture = PadPicture(snapshot: snapshot, context: context, width: Int(columns), height: Int(rows))
            CTerminalView_clear()
            for (row, text) in picture.rows.enumerated() {
                // The bottom-right cell is left alone: writing it would scroll some terminals.
                let cells = Array(text.utf8.prefix(row == picture.rows.count - 1 ? picture.width - 1 : picture.width))
                var column = 0
                while column < cells.count {
                    let isLit = picture.lit[row][column]
                    var end = column
                    while end < cells.count && picture.lit[row][end] == isLit { end += 1 }
                    let run = String(decoding: cells[column..<end], as: UTF8.self)
                    CTerminalView_put(Int32(row), Int32(column), run, isLit ? 1 : 0)
                    column = end
                }
            }
            CTerminalView_show()
        }
    }
}

/// A profile's keyboard and mouse as `monitor --view --profile` shows them: what is held now, and how far the pointer
/// and the wheel have moved since the view started (moved only by the pad's reports: the view follows no timer).
struct DesktopActivity {
    var pipeline: RemapPipeline
    var moved = (x: 0, y: 0, wheel: 0, horizontalWheel: 0)

    mutating func apply(_ snapshot: PadSnapshot) {
        _ = pipeline.apply(snapshot, atMicroseconds: MonotonicInstant.now().microseconds)
        let frame = pipeline.desktop
        moved.x += Int(frame.pointerX)
        moved.y += Int(frame.pointerY)
        moved.wheel += Int(frame.wheel)
        moved.horizontalWheel += Int(frame.horizontalWheel)
    }

    var line: String {
        let held = pipeline.desktop.held.codes.map { code in
            MouseButton.allCases.first { $0.code == code }.map { "mouse:\($0.rawValue)" }
                ?? "key:" + (KeyboardKeyNames.name(forCode: code) ?? String(code))
        }
        return "keys/mouse: " + (held.isEmpty ? "-" : held.joined(separator: " "))
            + "  pointer \(moved.x),\(moved.y)  wheel \(moved.wheel / 120),\(moved.horizontalWheel / 120)"
    }
}
