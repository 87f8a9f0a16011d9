import PadCore
import NIOConcurrencyHelpers

/// The live view's tickets. A browser cannot put a header on a WebSocket, so the page first asks for a ticket with
/// its token in the header (`POST /events/ticket`) and opens `/events?ticket=...` with it: each ticket opens one
/// socket, once, within `lifetime` of being issued, so nothing reusable is ever in a URL.
public final class ConsoleTickets: Sendable {
    public static let standardLifetime: Duration = .seconds(30)
    /// Tickets kept at most; past it the oldest is dropped (a page asks for one only to open its socket).
    static let capacity = 64

    private struct Outstanding {
        var expiry: [String: ContinuousClock.Instant] = [:]
        var order: [String] = []
    }

    private let lifetime: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state = NIOLockedValueBox(Outstanding())

    /// `now` is the clock tickets expire by (tests give one of their own).
    public init(lifetime: Duration = standardLifetime, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.lifetime = lifetime
        self.now = now
    }

    /// A new ticket: 32 random bytes as 64 hex digits.
    public func issue() -> String {
        var generator = SystemRandomNumberGenerator()
        let ticket = HexBytes.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let expiry = now() + lifetime
        state.withLockedValue { state in
            state.expiry[ticket] = expiry
            state.order.append(ticket)
            while state.order.count > Self.capacity { state.expiry[state.order.removeFirst()] = nil }
        }
        return ticket
    }

    /// Whether `ticket` was issued, is unused and unexpired; it is used up either way.
    public func redeem(_ ticket: String) -> Bool {
        let at = now()
        return state.withLockedValue { state in
            guard let expiry = state.expiry.removeValue(forKey: ticket) else { return false }
            state.order.removeAll { $0 == ticket }
            return at < expiry
        }
    }

    /// Whether `ticket` would be redeemed now, without using it.
    public func isRedeemable(_ ticket: String) -> Bool {
        let at = now()
        return state.withLockedValue { $0.expiry[ticket].map { at < $0 } ?? false }
    }

    var outstandingCount: Int { state.withLockedValue { $0.expiry.count } }
}
