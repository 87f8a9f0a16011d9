import Benchmark
import Foundation
import PadCore
import PadLinux
import PadProfiles

/// The per-frame work of `padbridge remap` between reading the physical pad and writing the virtual one: the evdev
/// events of a frame assembled into a snapshot, the snapshot through the remap pipeline, the result encoded as the
/// virtual Xbox 360 pad's uinput frame. Each benchmark iteration handles 1,000 frames (`scalingFactor: .kilo`),
/// so the figures read per frame in the "(K)" columns. The syscalls around it (epoll, read, write) are not here.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .instructions, .mallocCountTotal, .throughput],
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )

    let sources = SourceFrames()
    for frame in [SourceFrames.Kind.oneAxis, .busy] {
        Benchmark("assemble an xpad frame (\(frame.rawValue))") { benchmark in
            var assembler = SourceFrames.assembler()
            var buttons = 0
            benchmark.startMeasurement()
            for iteration in benchmark.scaledIterations {
                for event in sources.events(frame, iteration) {
                    if case .frameCompleted = assembler.apply(event, from: .pad) {
                        buttons &+= Int(assembler.snapshot.buttons.rawValue)
                    }
                }
            }
            benchmark.stopMeasurement()
            blackHole(buttons)
        }
    }

    for (name, profile) in [("identity", RemapProfile.identity), ("shooter.toml", Profiles.shooter)] {
        Benchmark("remap pipeline apply (\(name))") { benchmark in
            var pipeline = try RemapPipeline(profile: profile, target: .xbox360)
            var sum = 0
            benchmark.startMeasurement()
            for iteration in benchmark.scaledIterations {
                let output = pipeline.apply(sources.snapshot(iteration), atMicroseconds: UInt64(iteration) * 4_000)
                sum &+= Int(output.leftX) &+ Int(output.buttons.rawValue)
            }
            benchmark.stopMeasurement()
            blackHole(sum)
        }
    }

    Benchmark("Xbox 360 uinput frame encode") { benchmark in
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: XboxPadFrameEncoder.maximumFrameBytes, alignment: 16)
        defer { buffer.deallocate() }
        var encoder = XboxPadFrameEncoder()
        var bytes = 0
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            bytes &+= encoder.encode(sources.snapshot(iteration), into: buffer)
        }
        benchmark.stopMeasurement()
        blackHole(bytes)
    }

    Benchmark("whole frame: assemble + identity + encode (one axis)") { benchmark in
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: XboxPadFrameEncoder.maximumFrameBytes, alignment: 16)
        defer { buffer.deallocate() }
        var assembler = SourceFrames.assembler()
        var pipeline = try RemapPipeline(profile: .identity, target: .xbox360)
        var encoder = XboxPadFrameEncoder()
        var bytes = 0
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            for event in sources.events(.oneAxis, iteration) {
                if case .frameCompleted = assembler.apply(event, from: .pad) {
                    let output = pipeline.apply(assembler.snapshot, atMicroseconds: UInt64(iteration) * 4_000)
                    bytes &+= encoder.encode(output, into: buffer)
                }
            }
        }
        benchmark.stopMeasurement()
        blackHole(bytes)
    }
}

enum Profiles {
    static let shooter: RemapProfile = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../../Examples/profiles/shooter.toml")
        // A broken example is a failure of the benchmark itself.
        return try! RemapProfileFile.parse(String(contentsOf: url, encoding: .utf8), for: .xbox360)
    }()
}

/// 256 frames of an xpad source, built once, read round-robin: `oneAxis` is what the latency probe sends (a new
/// ABS_X value + SYN_REPORT), `busy` moves both sticks and a trigger and flips a button.
struct SourceFrames: Sendable {
    enum Kind: String { case oneAxis = "ABS_X + SYN", busy = "4 axes + key + SYN" }

    private let oneAxis: [[EvdevEvent]]
    private let busy: [[EvdevEvent]]
    private let snapshots: [PadSnapshot]

    init() {
        func event(_ type: UInt16, _ code: UInt16, _ value: Int32) -> EvdevEvent {
            EvdevEvent(type: type, code: code, value: value)
        }
        let syn = event(EvdevCode.evSyn, EvdevCode.synReport, 0)
        var oneAxis: [[EvdevEvent]] = [], busy: [[EvdevEvent]] = [], snapshots: [PadSnapshot] = []
        for step in 0..<256 {
            let x = Int32(step * 256 - 32768)
            oneAxis.append([event(EvdevCode.evAbs, EvdevCode.absX, x), syn])
            busy.append([
                event(EvdevCode.evAbs, EvdevCode.absX, x), event(EvdevCode.evAbs, EvdevCode.absY, -x / 2),
                event(EvdevCode.evAbs, EvdevCode.absRX, x / 3), event(EvdevCode.evAbs, EvdevCode.absRZ, Int32(step)),
                event(EvdevCode.evKey, EvdevCode.btnSouth, step % 8 < 4 ? 1 : 0), syn,
            ])
            var snapshot = PadSnapshot.neutral
            snapshot.leftX = Int16(truncatingIfNeeded: x)
            snapshot.rightY = Int16(truncatingIfNeeded: 32767 - step * 256)
            snapshot.rightTrigger = Int16(step * 128)
            snapshot[.a] = step % 8 < 4
            snapshot[.x] = step % 64 < 40
            snapshot[.rightshoulder] = step % 128 < 64
            snapshot[.dpup] = step % 32 < 16
            snapshots.append(snapshot)
        }
        self.oneAxis = oneAxis
        self.busy = busy
        self.snapshots = snapshots
    }

    func events(_ kind: Kind, _ index: Int) -> [EvdevEvent] {
        (kind == .oneAxis ? oneAxis : busy)[index & 0xFF]
    }

    func snapshot(_ index: Int) -> PadSnapshot { snapshots[index & 0xFF] }

    /// An assembler for xpad's pad node (sticks -32768...32767, triggers 0...255, the hat -1...1).
    static func assembler() -> EvdevSnapshotAssembler {
        var axes: [UInt16: EvdevAbsoluteInfo] = [:]
        for code in [EvdevCode.absX, EvdevCode.absY, EvdevCode.absRX, EvdevCode.absRY] {
            axes[code] = EvdevAbsoluteInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128)
        }
        for code in [EvdevCode.absZ, EvdevCode.absRZ] { axes[code] = EvdevAbsoluteInfo(minimum: 0, maximum: 255) }
        for code in [EvdevCode.absHat0X, EvdevCode.absHat0Y] { axes[code] = EvdevAbsoluteInfo(minimum: -1, maximum: 1) }
        return EvdevSnapshotAssembler(layout: .xpad, absoluteInfo: [.pad: axes])
    }
}
