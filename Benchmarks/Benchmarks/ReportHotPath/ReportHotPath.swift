import Benchmark
import PadCore

/// The per-report work of a bridge: every input report is decoded into a snapshot and diffed against the
/// previous one; every feedback change is encoded into an output report. Each benchmark iteration handles
/// 1,000 reports (`scalingFactor: .kilo`), so the figures read per report in the "(K)" columns.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .instructions, .mallocCountTotal, .throughput],
        scalingFactor: .kilo,
        maxDuration: .seconds(5),
        maxIterations: 1_000_000
    )

    for transport in HIDTransport.allCases {
        Benchmark("DualSense input decode + diff (\(transport.rawValue))") { benchmark in
            let reports = InputReportStream(transport: transport)
            var previous = PadSnapshot.neutral
            var events = 0
            benchmark.startMeasurement()
            for iteration in benchmark.scaledIterations {
                reports.withReport(iteration) { bytes in
                    guard let snapshot = try? DualSenseInputReport.decode(bytes) else { return }
                    SnapshotDiff.forEachEvent(from: previous, to: snapshot) { _ in events &+= 1 }
                    previous = snapshot
                }
            }
            benchmark.stopMeasurement()
            blackHole(events)
        }
    }

    for layout in [DualSenseOutputLayout.usbKernel, .bluetoothKernel] {
        Benchmark("DualSense output encode (\(layout))") { benchmark in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 128, alignment: 8)
            defer { buffer.deallocate() }
            let trigger = try TriggerEffect.weapon(startZone: 2, endZone: 6, strength: 8)
            var written = 0
            benchmark.startMeasurement()
            for iteration in benchmark.scaledIterations {
                let level = Double(iteration & 0xFF) / 255
                let feedback = Feedback(
                    rumble: Rumble(strong: level, weak: 1 - level),
                    lightbar: LightbarColor(red: UInt8(iteration & 0xFF), green: 0, blue: 64),
                    rightTrigger: trigger)
                written &+= DualSenseOutputReport.encode(
                    feedback, layout: layout, sequence: UInt8(iteration & 0x0F), into: buffer)
            }
            benchmark.stopMeasurement()
            blackHole(written)
        }
    }
}

/// 256 realistic input reports (moving sticks and triggers, a press every few reports, touch, motion),
/// built once, read round-robin.
struct InputReportStream {
    private let storage: [[UInt8]]

    init(transport: HIDTransport) {
        var reports: [[UInt8]] = []
        for step in 0..<256 {
            var snapshot = PadSnapshot.neutral
            snapshot.leftX = Int16(truncatingIfNeeded: step * 256 - 32768)
            snapshot.rightY = Int16(truncatingIfNeeded: 32767 - step * 256)
            snapshot.rightTrigger = Int16(step * 128)
            snapshot[.a] = step % 8 < 4
            snapshot[.dpup] = step % 32 < 16
            snapshot.touches.first = TouchContact(
                trackingID: 1, active: step % 64 < 48, x: Double(step) / 255, y: 0.5)
            snapshot.motion = MotionSample(
                gyroRadiansPerSecond: Vector3(x: Double(step) / 100, y: 0, z: -0.2),
                accelMetersPerSecondSquared: Vector3(x: 0, y: 9.81, z: 0.1),
                timestampMicroseconds: UInt64(step) * 4_000)
            reports.append(DualSenseInputReport.encoded(snapshot, transport: transport, sequence: UInt8(step)))
        }
        storage = reports
    }

    func withReport(_ index: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        storage[index & 0xFF].withUnsafeBytes(body)
    }
}
