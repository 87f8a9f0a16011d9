import Benchmark
import Crypto
import PadCore
import PadNoise

/// The per-frame user-space work of forwarding (`padbridge connect` -> `serve`) between reading the physical pad and
/// writing the virtual one, without the system calls: on the client, the frame recorded for redundancy and encoded
/// as a client message, then sealed (ChaCha20-Poly1305 with the 13-byte header authenticated); on the host, opened,
/// decoded and passed through the redundancy receiver. Each iteration handles 1,000 frames of a moving stick
/// (`scalingFactor: .kilo`), so the "(K)" columns read per frame.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .instructions, .mallocCountTotal, .throughput],
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )
    let header = [UInt8](repeating: 0x03, count: 13)

    Benchmark("client: record + encode a frame") { benchmark in
        var sender = InputRedundancySender()
        var bytes = 0
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            sender.record(PadSnapshot(leftX: Int16(truncatingIfNeeded: iteration)))
            var message = LinkClientMessage()
            message.inputs = [(0, sender.framesToSend)]
            bytes &+= message.encoded.count
            sender.acknowledge(sender.newest!.sequence)
        }
        benchmark.stopMeasurement()
        blackHole(bytes)
    }

    Benchmark("client: seal a frame's message") { benchmark in
        let keys = try SessionKeys()
        let message = Benchmark.frameMessage()
        var bytes = 0
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            bytes &+= try keys.client.sending.seal(message, counter: UInt64(iteration), associatedData: header).count
        }
        benchmark.stopMeasurement()
        blackHole(bytes)
    }

    Benchmark("host: open + decode + receive a frame") { benchmark in
        let keys = try SessionKeys()
        let message = Benchmark.frameMessage()
        let sealed = try (0..<1_000).map { try keys.client.sending.seal(message, counter: UInt64($0), associatedData: header) }
        var receiver = InputRedundancyReceiver()
        var applied = 0
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            let index = iteration % sealed.count
            let opened = try keys.host.receiving.open(sealed[index], counter: UInt64(index), associatedData: header)
            for input in try LinkClientMessage(decoding: opened).inputs { applied &+= receiver.receive(input.frames).count }
        }
        benchmark.stopMeasurement()
        blackHole(applied)
    }
}

/// Both sides' transport keys of one Noise IK session.
struct SessionKeys {
    let client: NoiseTransportKeys
    let host: NoiseTransportKeys

    init() throws {
        let clientKey = Curve25519.KeyAgreement.PrivateKey(), hostKey = Curve25519.KeyAgreement.PrivateKey()
        var initiator = try NoiseHandshake(
            pattern: .IK, role: .initiator, localStatic: clientKey, remoteStatic: Array(hostKey.publicKey.rawRepresentation))
        var responder = try NoiseHandshake(pattern: .IK, role: .responder, localStatic: hostKey)
        _ = try responder.readMessage(try initiator.writeMessage())
        _ = try initiator.readMessage(try responder.writeMessage())
        client = try initiator.split()
        host = try responder.split()
    }
}

extension Benchmark {
    /// One frame's client message: a stick moved, nothing unacknowledged before it.
    static func frameMessage() -> [UInt8] {
        var sender = InputRedundancySender()
        sender.record(PadSnapshot(leftX: 1234))
        var message = LinkClientMessage()
        message.inputs = [(0, sender.framesToSend)]
        return message.encoded
    }
}
