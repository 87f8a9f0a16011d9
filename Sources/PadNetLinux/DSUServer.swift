public import Logging
public import PadCore
public import PadLinux
public import PadNet
import SystemPackage

/// A DSU ("cemuhook") server: emulators (Cemu, Dolphin, Citra's and Yuzu's successors, RPCS3) read up to four pads'
/// motion, buttons and sticks from it over UDP (protocol 1001; PadCore's `DSURequest`, `DSUReply`,
/// `DSUSubscriptions`). Its one socket lives on the device loop; nothing blocks.
///
/// Whoever has the pads feeds it: `update(slot:pad:)` for every frame (a command reading pads, a remap bridge, a
/// forwarding host). A frame that changes the slot's state goes at once to every client subscribed to the slot; a
/// motion pad's every new sample does. Version and port-info requests are answered at once; a pad-data request
/// subscribes its sender for 5 s, which clients renew every second or so. A request over its source's limit, or the
/// server's, is dropped unanswered (`DSURequestLimiter`), and the socket is read a few datagrams per turn of the loop,
/// so a flood from one source neither stalls the pads nor stops another client's data.
///
/// Loop-confined. `update` allocates nothing: the frame is encoded once into a buffer kept for it, and restamped with
/// each client's packet number.
public final class DSUServer {
    public enum Event {
        /// `client` now gets the pads in `slots` (added to what it had).
        case clientSubscribed(DatagramPath, clientID: UInt32, slots: DSUSlotSet)
        /// `client` stopped renewing: it gets nothing more.
        case clientExpired(DatagramPath, clientID: UInt32)
        /// The table of clients is full (`maximumClients`): `client` gets nothing until one expires. Said at most
        /// every 10 s.
        case clientRefused(DatagramPath, clientID: UInt32, maximumClients: Int)
        /// Requests were dropped unanswered for going over the limits (the last from `source`). Said at most every
        /// 10 s, with how many were dropped since it was last said.
        case requestsLimited(SocketAddress, dropped: UInt64)
    }

    /// The address it listens on (the port the kernel chose, when 0 was asked for).
    public let localAddress: SocketAddress
    public let serverID: UInt32
    /// Requests that were not DSU requests padbridge serves (bad magic, version, length, CRC, type).
    public private(set) var malformedRequests: UInt64 = 0
    /// Pad-data datagrams sent, to every client.
    public private(set) var padDataSent: UInt64 = 0

    private struct Slot {
        var pad: DSUPadState?
        var motionClock = DSUMotionClock()
        var motionTimestampMicroseconds: UInt64 = 0
    }

    private let socket: UDPSocket
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let onEvent: (Event) -> Void
    private var slots = [Slot](repeating: Slot(), count: DSUProtocol.slotCount)
    private var subscriptions: DSUSubscriptions<DatagramPath>
    private var limiter = DSURequestLimiter<SocketAddress>()
    /// One pad-data datagram, encoded once per frame and restamped per client.
    private var padData = [UInt8](repeating: 0, count: DSUReply.padDataBytes)
    private var reply = [UInt8](repeating: 0, count: DSUReply.padDataBytes)
    private var expiryTimer: LoopTimer?
    private var lastLimitedSaidMicroseconds: UInt64?
    private var droppedSinceSaid: UInt64 = 0
    private var lastRefusedSaidMicroseconds: UInt64?
    private static let sayAtMostEveryMicroseconds: UInt64 = 10_000_000

    /// Listens on `address` (127.0.0.1:26760 is what clients look for). Any address but a loopback one is said loudly
    /// (a warning): every pad's motion and buttons are then open to that network, unauthenticated, as the protocol is.
    public init(
        listeningOn address: SocketAddress, maximumClients: Int = 16, loop: DeviceEventLoop, logger: Logger,
        onEvent: @escaping (Event) -> Void
    ) throws(DSUServerError) {
        do {
            socket = try UDPSocket(bindingTo: address, loop: loop)
        } catch {
            throw DSUServerError(address: address.description, cause: error)
        }
        localAddress = socket.localAddress
        self.loop = loop
        self.logger = logger
        self.onEvent = onEvent
        subscriptions = DSUSubscriptions(capacity: maximumClients)
        var generator = SystemRandomNumberGenerator()
        serverID = UInt32.random(in: 1...UInt32.max, using: &generator)
        socket.onDatagram = { [unowned(unsafe) self] bytes, path in self.received(bytes, from: path) }
        expiryTimer = loop.makeTimer { [weak self] () throws(DeviceAccessError) in self?.expire() }
        if !localAddress.isLoopback {
            logger.warning(
                "the DSU server listens on \(localAddress), not on a loopback address: every served pad's motion, buttons and sticks are open to anyone on that network, without a password (DSU has none); listen on 127.0.0.1 unless an emulator on another machine needs them, and then only on a network you trust",
                metadata: ["event": "dsuOpenToNetwork", "address": "\(localAddress)"])
        }
    }

    /// Clients subscribed to at least one slot.
    public var clientCount: Int { subscriptions.clientCount }

    /// Requests dropped for going over the limits.
    public var limitedRequests: UInt64 { limiter.dropped }

    /// The pad in `slot` (0-3) is now `pad`. Sent at once to the slot's subscribers when it differs from what the slot
    /// showed. Per frame; allocates nothing.
    public func update(slot: Int, pad: DSUPadState) {
        guard slot >= 0 && slot < DSUProtocol.slotCount, slots[slot].pad != pad else { return }
        let now = loop.now.microseconds
        if pad.connected {
            if slots[slot].pad?.connected != true { slots[slot].motionClock.restart() }
            if pad.motion != .none {
                slots[slot].motionTimestampMicroseconds = slots[slot].motionClock.timestamp(
                    sensorMicroseconds: pad.snapshot.motion.timestampMicroseconds, arrivalMicroseconds: now)
            }
        }
        slots[slot].pad = pad
        guard subscriptions.hasSubscribers(of: slot, now: now) else { return }
        encodePadData(slot: slot)
        subscriptions.forEachSubscriber(of: slot, now: now) { client, packetNumber in
            sendPadData(to: client.address, packetNumber: packetNumber)
        }
    }

    /// No pad in `slot` any more (clients are told of an empty slot when they ask).
    public func clear(slot: Int) {
        guard slot >= 0 && slot < DSUProtocol.slotCount else { return }
        slots[slot] = Slot()
    }

    /// What `slot` shows (nil: no pad).
    public func pad(inSlot slot: Int) -> DSUPadState? {
        slot >= 0 && slot < DSUProtocol.slotCount ? slots[slot].pad : nil
    }

    /// Stops listening. Idempotent.
    public func close() {
        expiryTimer?.close()
        expiryTimer = nil
        socket.close()
    }

    deinit { close() }

    // MARK: - Requests

    private func received(_ bytes: UnsafeRawBufferPointer, from path: DatagramPath) {
        let request: DSURequest
        do {
            request = try DSURequest(decoding: bytes)
        } catch {
            malformedRequests &+= 1
            logger.trace("DSU: ignored a datagram from \(path.remote): \(error)")
            return
        }
        let now = loop.now.microseconds
        guard limiter.admit(path.remote, now: now) else {
            limited(path.remote, now: now)
            return
        }
        switch request.message {
        case .version:
            let count = reply.withUnsafeMutableBytes { DSUReply.encodeVersion(serverID: serverID, into: $0) }
            send(reply, count: count, along: path)
        case let .portInfo(asked):
            for slot in asked {
                let count = reply.withUnsafeMutableBytes {
                    DSUReply.encodePortInfo(slot: UInt8(slot), pad: slots[slot].pad, serverID: serverID, into: $0)
                }
                send(reply, count: count, along: path)
            }
        case let .padData(selection):
            subscribe(DSUSubscriptions.Client(address: path, clientID: request.clientID), to: selection, now: now)
        }
    }

    /// The slots a selection names that hold a connected pad ("if requested controller is not connected, message
    /// should be ignored").
    private func slots(for selection: DSUPadSelection) -> DSUSlotSet {
        var chosen = DSUSlotSet()
        for slot in 0..<DSUProtocol.slotCount {
            guard let pad = slots[slot].pad, pad.connected else { continue }
            let bySlot = selection.slot.map { Int($0) == slot } ?? false
            let byMAC = selection.mac.map { $0 == pad.mac && $0 != .none } ?? false
            if selection.isEveryPad || bySlot || byMAC { chosen.insert(slot) }
        }
        return chosen
    }

    private func subscribe(_ client: DSUSubscriptions<DatagramPath>.Client, to selection: DSUPadSelection, now: UInt64) {
        let wanted = slots(for: selection)
        switch subscriptions.subscribe(client, to: wanted, now: now) {
        case .renewed:
            break
        case let .subscribed(added):
            onEvent(.clientSubscribed(client.address, clientID: client.clientID, slots: added))
            // The state held now, at once: a client must not wait for the pad to move to know where its sticks are.
            for slot in added {
                guard let number = subscriptions.takePacketNumber(for: client) else { break }
                encodePadData(slot: slot)
                sendPadData(to: client.address, packetNumber: number)
            }
        case .refused:
            if lastRefusedSaidMicroseconds.map({ now >= $0 &+ Self.sayAtMostEveryMicroseconds }) ?? true {
                lastRefusedSaidMicroseconds = now
                onEvent(.clientRefused(client.address, clientID: client.clientID, maximumClients: subscriptions.capacity))
            }
        }
        scheduleExpiry()
    }

    private func limited(_ source: SocketAddress, now: UInt64) {
        droppedSinceSaid &+= 1
        if lastLimitedSaidMicroseconds.map({ now >= $0 &+ Self.sayAtMostEveryMicroseconds }) ?? true {
            lastLimitedSaidMicroseconds = now
            onEvent(.requestsLimited(source, dropped: droppedSinceSaid))
            droppedSinceSaid = 0
        }
    }

    // MARK: - Expiry

    private func scheduleExpiry() {
        guard let next = subscriptions.nextExpiry else {
            expiryTimer?.cancel()
            return
        }
        expiryTimer?.schedule(at: MonotonicInstant(microseconds: next))
    }

    private func expire() {
        // Said after the table is done with: a handler may look at the server.
        var ended: [DSUSubscriptions<DatagramPath>.Client] = []
        subscriptions.expire(now: loop.now.microseconds) { client, _ in ended.append(client) }
        scheduleExpiry()
        for client in ended { onEvent(.clientExpired(client.address, clientID: client.clientID)) }
    }

    // MARK: - Sending

    private func encodePadData(slot: Int) {
        guard let pad = slots[slot].pad else { return }
        let timestamp = slots[slot].motionTimestampMicroseconds
        padData.withUnsafeMutableBytes {
            _ = DSUReply.encodePadData(
                slot: UInt8(slot), pad: pad, packetNumber: 0, motionTimestampMicroseconds: timestamp, serverID: serverID,
                into: $0)
        }
    }

    private func sendPadData(to path: DatagramPath, packetNumber: UInt32) {
        padData.withUnsafeMutableBytes { DSUReply.restamp($0, packetNumber: packetNumber) }
        socket.send(padData, along: path)
        padDataSent &+= 1
    }

    private func send(_ buffer: [UInt8], count: Int, along path: DatagramPath) {
        socket.send(Array(buffer[0..<count]), along: path)
    }
}

/// The DSU server could not listen, and what to do about it.
public struct DSUServerError: Error, CustomStringConvertible {
    public let address: String
    public let cause: LinkSocketError
    /// The option that chooses the address, named in the advice: `dsu`'s --listen, `remap`'s and `serve`'s
    /// --dsu-listen.
    public var listenOption = "--listen"

    public var description: String {
        switch cause {
        case let .cannotBind(_, errno) where errno == .addressInUse:
            "cannot listen for DSU clients on \(address): the port is in use (another DSU server: DS4Windows, "
                + "evdevhook, a second `padbridge dsu`?); stop it, or give another port with \(listenOption) "
                + "127.0.0.1:PORT and set that port in the emulator"
        case let .cannotBind(_, errno) where errno == .permissionDenied:
            "cannot listen for DSU clients on \(address): permission denied (ports below 1024 need privileges); "
                + "give a port above 1023 with \(listenOption) 127.0.0.1:PORT"
        case let .cannotBind(_, errno) where errno == .addressNotAvailable:
            "cannot listen for DSU clients on \(address): no interface of this machine has that address; give one "
                + "it has with \(listenOption) ADDRESS:PORT (127.0.0.1 for emulators on this machine)"
        default:
            "cannot listen for DSU clients on \(address): \(cause)"
        }
    }
}
