import PadCore

/// The control socket's views of a host, read off its clients and pads as they are (nothing is kept for them): the
/// paired clients with their link's figures and pads (`status`), and each virtual pad as it shows (`live`).
struct HostStatusView {
    let pairedLines: [PairedClient]
    let paired: [LinkPublicKey: String]
    let clients: HostedClients

    /// Every paired client (as paired-clients last read) with what the host knows of it now: connected or not,
    /// its link's figures, its pads. In paired-clients' order.
    func clientStatuses(atMicroseconds now: UInt64) -> [HostClientStatus] {
        pairedLines.compactMap { entry -> HostClientStatus? in
            let key = entry.key
            guard let name = paired[key] else { return nil }
            guard let client = clients[key] else {
                return HostClientStatus(
                    name: name, key: key.fingerprint, connected: false, address: nil, lastHeardMillisecondsAgo: nil,
                    roundTripMicroseconds: nil, receivedDatagrams: 0, sentDatagrams: 0, pads: [],
                    pairedSinceEpochSeconds: entry.pairedSinceEpochSeconds)
            }
            var pads = Self.inSlotOrder(client.pads.all).map { pad in
                HostPadStatus(
                    id: pad.fingerprint.rawValue, name: pad.description.name, kind: pad.description.kind,
                    state: pad.isForwarded && !client.lost ? .live : .lingering, slot: pad.slot.map(Int.init),
                    virtualKind: pad.virtualKind?.rawValue, eventNodes: pad.nodes?.eventNodes ?? [], hidraw: pad.nodes?.hidrawNode)
            }
            for (slot, description) in client.pads.unforwarded.sorted(by: { $0.key < $1.key }) {
                pads.append(HostPadStatus(
                    id: description.fingerprint.rawValue, name: description.name, kind: description.kind, state: .notForwarded,
                    slot: Int(slot), virtualKind: nil, eventNodes: [], hidraw: nil,
                    problem: client.pads.statusProblem(of: description)))
            }
            let heard = client.liveness.lastHeardMicroseconds
            return HostClientStatus(
                name: client.name, key: key.fingerprint, connected: client.isLive,
                address: "\(client.path.remote)", lastHeardMillisecondsAgo: now >= heard ? (now - heard) / 1000 : 0,
                roundTripMicroseconds: client.reportedRoundTripMicroseconds,
                receivedDatagrams: client.receivedDatagrams, sentDatagrams: client.sentDatagrams, pads: pads,
                pairedSinceEpochSeconds: entry.pairedSinceEpochSeconds, lossToHostPercent: client.sessions.current?.lossPercent,
                lossToClientPercent: client.lossToClientPercent)
        }
    }

    /// Each pad with a virtual pad now, as its virtual pad shows it: the last snapshot applied, and the feedback
    /// games set.
    func livePads() -> [HostLivePad] {
        clients.values.sorted { $0.name < $1.name }.flatMap { client in
            Self.inSlotOrder(client.pads.all).map { pad in
                let shown = pad.isForwarded && !client.lost
                return HostLivePad(
                    client: client.name, id: pad.fingerprint.rawValue, name: pad.description.name, kind: pad.description.kind,
                    snapshot: shown ? (pad.lastApplied ?? .neutral) : .neutral, feedback: pad.feedback.state,
                    lingering: !shown)
            }
        }
    }

    private static func inSlotOrder(_ pads: some Sequence<HostedPad>) -> [HostedPad] {
        pads.sorted { ($0.slot ?? .max, $0.fingerprint) < ($1.slot ?? .max, $1.fingerprint) }
    }
}
