/// The event loop's watches by token, kept in an array: a token holds its slot's index (low 32 bits) and a serial
/// number (high 32 bits, never 0). Finding a watch is an array read, not a hash lookup (the loop does one per
/// ready descriptor), and a stale token, whose watch was removed and whose slot was reused, finds nothing.
struct WatchTable<Value> {
    private var slots: [(token: UInt64, value: Value?)?] = []
    private var freeSlots: [Int] = []
    private var serial: UInt64 = 0

    /// A new token with a slot of its own; `store` puts its value there, `remove` frees it.
    mutating func reserveToken() -> UInt64 {
        serial += 1
        let index: Int
        if let reused = freeSlots.popLast() {
            index = reused
        } else {
            index = slots.count
            slots.append(nil)
        }
        let token = (serial & 0xFFFF_FFFF) << 32 | UInt64(index)
        slots[index] = (token, nil)
        return token
    }

    /// Stores `value` under a token from `reserveToken` that was not removed.
    mutating func store(_ value: Value, for token: UInt64) {
        let index = Self.index(of: token)
        precondition(index < slots.count && slots[index]?.token == token, "no reserved slot for token \(token)")
        slots[index] = (token, value)
    }

    /// The value stored under `token`; nil for tokens removed, reused or never issued.
    func value(for token: UInt64) -> Value? {
        let index = Self.index(of: token)
        guard index < slots.count, let slot = slots[index], slot.token == token else { return nil }
        return slot.value
    }

    /// Frees `token`'s slot and returns what was stored there; nil (and no change) for a token already removed.
    @discardableResult
    mutating func remove(_ token: UInt64) -> Value? {
        let index = Self.index(of: token)
        guard index < slots.count, let slot = slots[index], slot.token == token else { return nil }
        slots[index] = nil
        freeSlots.append(index)
        return slot.value
    }

    private static func index(of token: UInt64) -> Int { Int(truncatingIfNeeded: token & 0xFFFF_FFFF) }
}
