import LinkHarness
import PadCore

/// `link-frame-count N [stick|press]`: forwards N frames through a client and a host joined in memory (the work of
/// `padbridge connect` and `serve` per frame, without the system calls), for counting instructions with callgrind:
/// scripts/count-link-instructions runs it for 1 and for 1,001 frames and divides the difference by 1,000.
let arguments = CommandLine.arguments
let frames = arguments.count > 1 ? Int(arguments[1]) ?? 1 : 1
let presses = arguments.count > 2 && arguments[2] == "press"
let link = try DirectLink()
var snapshot = PadSnapshot.neutral
for index in 0..<frames {
    if presses {
        snapshot[.a].toggle()
    } else {
        snapshot.leftX = Int16(truncatingIfNeeded: index * 997)
    }
    link.source.output(snapshot)
    link.pump()
    // A 1 kHz pad: the host's acknowledgement timer (due 0.5 ms after a frame that asks for one) fires in between.
    link.advanceClock(byMicroseconds: 1_000)
    link.host.tick()
    link.pump()
}
print(link.pad.shown.leftX, link.pad.shown[.a])
