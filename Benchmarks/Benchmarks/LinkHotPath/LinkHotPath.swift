import Benchmark
import LinkHarness
import PadCore

/// The per-frame user-space work of forwarding (`padbridge connect` -> `serve`) without the system calls: the real
/// `ForwardingClient` and `ForwardingHost`, joined by an in-memory link that copies each datagram into buffers it
/// already has, with pads that do nothing. Each iteration handles 1,000 frames (`scalingFactor: .kilo`), so the
/// "(K)" columns read per frame; `mallocCountTotal` is the heap allocations of padbridge's code and of the crypto it
/// calls (the harness allocates nothing while measuring).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .instructions, .mallocCountTotal, .throughput],
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )

    Benchmark("client: a stick frame read, encoded, sealed and sent") { benchmark in
        let link = try DirectLink()
        link.deliverToHost = false
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            link.source.output(PadSnapshot(leftX: Int16(truncatingIfNeeded: iteration)))
        }
        benchmark.stopMeasurement()
        blackHole(link.sentByClient)
    }

    Benchmark("client + host: a stick frame forwarded and shown on the virtual pad") { benchmark in
        let link = try DirectLink()
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            link.source.output(PadSnapshot(leftX: Int16(truncatingIfNeeded: iteration)))
            link.pump()
        }
        benchmark.stopMeasurement()
        blackHole(link.pad.shown)
    }

    Benchmark("client + host: a press and its release forwarded, each acknowledged") { benchmark in
        let link = try DirectLink()
        var pressed = PadSnapshot.neutral
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            pressed[.a].toggle()
            link.source.output(pressed)
            link.pump()
            link.advanceClock(byMicroseconds: 1_000)  // a 1 kHz pad: the acknowledgement comes due in between
            link.host.tick()  // the acknowledgement, from the host's timer
            link.pump()
        }
        benchmark.stopMeasurement()
        blackHole(link.pad.shown)
    }
}

