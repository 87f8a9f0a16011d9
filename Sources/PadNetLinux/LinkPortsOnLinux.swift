import Glibc
import PadCore
public import PadLinux
public import PadNet
public import PadSessions

/// The forwarding link's ports (PadNet's `LinkPorts.swift`) filled on Linux: the socket, the loop's timer and clock,
/// the paired-clients file, and PadSessions' pads at each end.

extension VirtualPadSession: HostedVirtualPad {}

extension PhysicalPadSession: ForwardedPadSource {}

extension UDPSocket: LinkDatagramSender {}

extension TrustStore: PairedClientList {}

extension LinkClocks {
    /// `CLOCK_MONOTONIC` and `CLOCK_REALTIME`.
    public static var system: LinkClocks {
        LinkClocks(
            monotonicMicroseconds: { MonotonicInstant.now().microseconds },
            wallClockMicroseconds: { WallClock.nowMicroseconds })
    }

    /// Monotonic time as `loop` last woke (its `now`: one clock read per wake, however often the link asks while
    /// handling it); `CLOCK_REALTIME` for the handshake. What `serve` and `connect` run on.
    public static func following(_ loop: DeviceEventLoop) -> LinkClocks {
        LinkClocks(
            monotonicMicroseconds: { [clock = loop.wakeClock] in clock.now.microseconds },
            wallClockMicroseconds: { WallClock.nowMicroseconds })
    }
}

extension VirtualPadCreationFailure {
    /// A device the host could not open: the client is told which, and that `padbridge doctor` on the host says how.
    public init(_ error: DeviceAccessError) {
        let reason: String? =
            switch error.code {
            case .permissionDenied: "the host may not open \(error.path) (`padbridge doctor` there says how)"
            case .missingDevice: "the host has no \(error.path) (`padbridge doctor` there says how)"
            default: nil
            }
        self.init(description: "\(error)", reasonForClient: reason)
    }
}

enum WallClock {
    /// `CLOCK_REALTIME` in microseconds since the epoch.
    static var nowMicroseconds: UInt64 {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        return UInt64(max(0, clock.tv_sec)) * 1_000_000 + UInt64(max(0, clock.tv_nsec)) / 1_000
    }
}

/// A `LoopTimer` as the link's wake-up.
final class LoopWakeTimer: LinkWakeTimer {
    private let timer: LoopTimer

    init(loop: DeviceEventLoop, handler: @escaping () -> Void) {
        timer = loop.makeTimer { handler() }
    }

    func schedule(atMicroseconds microseconds: UInt64) {
        timer.schedule(at: MonotonicInstant(microseconds: microseconds))
    }

    func cancel() { timer.cancel() }
    func close() { timer.close() }
}
