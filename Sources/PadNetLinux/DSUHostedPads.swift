import Logging
public import PadCore
import PadLinux
public import PadNet

/// `serve --dsu`: the host's virtual pads, as games see them, served over DSU too. Each hosted pad takes the first
/// free of DSU's four slots and keeps it by its identity seed (the same client's same pad), across a lost link and
/// its return; a fifth pad is not served. Loop-confined.
public final class DSUHostedPads {
    public let server: DSUServer
    private var slots: [String] = []
    /// Called when a hosted pad takes a slot (slot, seed), or finds them all taken (nil, seed).
    private let onSlot: (Int?, String) -> Void

    public init(server: DSUServer, onSlot: @escaping (Int?, String) -> Void) {
        self.server = server
        self.onSlot = onSlot
    }

    /// `pad`, its frames also served in its slot; `pad` itself when no slot is free.
    public func serving(_ pad: any HostedVirtualPad, kind: VirtualPadKind, seed: String) -> any HostedVirtualPad {
        let slot: Int
        if let known = slots.firstIndex(of: seed) {
            slot = known
        } else if slots.count < DSUProtocol.slotCount {
            slot = slots.count
            slots.append(seed)
        } else {
            onSlot(nil, seed)
            return pad
        }
        onSlot(slot, seed)
        // A forwarded pad is on the network: no bus to say; its MAC is the virtual pad's, else one from its seed.
        let mac = pad.mac.flatMap(DSUMACAddress.init(parsing:))
            ?? DSUMACAddress(locallyAdministeredFrom: seed) ?? .none
        let description = DSUPadState(
            snapshot: .neutral, mac: mac, connection: .notApplicable,
            motion: kind.capabilities.motion ? .fullGyro : .none)
        server.update(slot: slot, pad: description)
        return DSUServedPad(pad, slot: slot, description: description, server: server)
    }

    public func close() { server.close() }
}

/// A hosted virtual pad whose frames go to a DSU slot too: connected while it shows frames, not while neutral (the
/// client's link lost), cleared when it goes.
final class DSUServedPad: HostedVirtualPad {
    private let inner: any HostedVirtualPad
    private let slot: Int
    private var description: DSUPadState
    private let server: DSUServer

    init(_ inner: any HostedVirtualPad, slot: Int, description: DSUPadState, server: DSUServer) {
        self.inner = inner
        self.slot = slot
        self.description = description
        self.server = server
    }

    var mac: String? { inner.mac }

    func apply(_ snapshot: PadSnapshot) {
        inner.apply(snapshot)
        description.snapshot = snapshot
        description.connected = true
        server.update(slot: slot, pad: description)
    }

    func goNeutral() {
        inner.goNeutral()
        description.snapshot = .neutral
        description.connected = false
        server.update(slot: slot, pad: description)
    }

    func close() {
        inner.close()
        server.clear(slot: slot)
    }
}
