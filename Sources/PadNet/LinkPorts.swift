public import PadCore

/// What the forwarding host and client need from the world, as small interfaces: datagrams out, a wake-up timer,
/// the clock, and the pads at each end. Production passes the socket, a loop timer, the system clocks and real
/// pads; tests pass a simulated network, a fake clock and recording pads, and drive both ends together (every
/// timing rule of the link tested without sockets, devices or waiting).

/// Where datagrams go out.
public protocol LinkDatagramSender: AnyObject {
    /// Sends `datagram` along `path` (to its remote address, from its local one when it names one). Never blocks; a
    /// datagram the kernel refuses now is lost, as the network may lose it.
    func send(_ datagram: [UInt8], along path: DatagramPath)
}

/// One wake-up for the link's state machine: the next thing due (a keepalive, a resend, a link-lost check).
public protocol LinkWakeTimer: AnyObject {
    /// Wakes once at `microseconds` (on the link's monotonic clock), replacing any earlier schedule.
    func schedule(atMicroseconds microseconds: UInt64)
    func cancel()
    /// Stops for good. Idempotent.
    func close()
}

/// The clocks: monotonic time for every timing rule, wall-clock time only for the handshake's replay protection.
public struct LinkClocks {
    public var monotonicMicroseconds: () -> UInt64
    public var wallClockMicroseconds: () -> UInt64

    public init(monotonicMicroseconds: @escaping () -> UInt64, wallClockMicroseconds: @escaping () -> UInt64) {
        self.monotonicMicroseconds = monotonicMicroseconds
        self.wallClockMicroseconds = wallClockMicroseconds
    }
}

/// The clients paired with the host, as the host reads them when it starts and whenever they change
/// (`ForwardingHost.reloadPairedClients`): in production the paired-clients file (`TrustStore`).
public protocol PairedClientList {
    /// Every paired client, in the list's order. Throws what makes the list unreadable (the host then refuses every
    /// client until it is fixed, and says why).
    func pairedClients() throws -> [PairedClient]
}

/// A virtual pad the host shows for a client's pad.
public protocol HostedVirtualPad: AnyObject {
    /// A virtual DualSense's MAC, nil for an Xbox 360 pad.
    var mac: String? { get }
    /// Shows `snapshot` (state-based: whatever it does not press is released).
    func apply(_ snapshot: PadSnapshot)
    /// Shows the released state.
    func goNeutral()
    /// Releases everything and destroys the pad. Idempotent.
    func close()
}

/// Makes the host's virtual pads: `kind`, its identity from `seed`; `onFeedback` gets what games send it, `onReady`
/// its nodes once the kernel made them.
public typealias HostedVirtualPadMaker = (
    _ kind: VirtualPadKind, _ seed: String, _ onFeedback: @escaping (FeedbackEvent) -> Void,
    _ onReady: @escaping (VirtualPadNodes) -> Void
) throws(VirtualPadCreationFailure) -> any HostedVirtualPad

/// Why the host could not make a virtual pad: the whole story for the host's log and status, and, where the maker
/// knows one, a few words for the person at the client (what is missing on the host, where the fix is said).
public struct VirtualPadCreationFailure: Error, CustomStringConvertible {
    public var description: String
    public var reasonForClient: String?

    public init(description: String, reasonForClient: String? = nil) {
        self.description = description
        self.reasonForClient = reasonForClient
    }

    /// Any error, told as it prints; the client gets the host's general words.
    public init(_ error: any Error) {
        self.init(description: "\(error)")
    }
}

/// A pad the client forwards: its frames come through the `output` it was made with; feedback goes in.
public protocol ForwardedPadSource: AnyObject {
    /// Called when the pad went away, and when it is read again.
    var onDetached: (() -> Void)? { get set }
    var onReattached: (() -> Void)? { get set }
    /// Feedback for the pad (rumble, lights, trigger effects).
    func submit(_ feedback: Feedback)
    /// Reads the pad again if it is among `controllers` (after a hotplug burst); whether it did.
    @discardableResult func resume(from controllers: [Controller]) -> Bool
    /// The pad quiet and ungrabbed. Idempotent.
    func close()
}

/// Opens `controller` as a source whose every frame goes to `output`.
public typealias ForwardedPadSourceMaker = (
    _ controller: Controller, _ output: @escaping (PadSnapshot) -> Void
) throws -> any ForwardedPadSource
