@testable import PadLinux
import Testing

@Suite("WatchTable")
struct WatchTableTests {
    @Test func storedValuesAreFoundByTheirTokens() {
        var table = WatchTable<String>()
        let first = table.reserveToken(), second = table.reserveToken()
        table.store("first", for: first)
        table.store("second", for: second)
        #expect(first != second && first != 0 && second != 0)
        #expect(table.value(for: first) == "first" && table.value(for: second) == "second")
    }

    @Test func aReservedTokenFindsNothingUntilStored() {
        var table = WatchTable<String>()
        let token = table.reserveToken()
        #expect(table.value(for: token) == nil)
        table.store("now", for: token)
        #expect(table.value(for: token) == "now")
    }

    @Test func aRemovedTokenFindsNothingEvenWhenItsSlotIsReused() {
        var table = WatchTable<String>()
        let old = table.reserveToken()
        table.store("old", for: old)
        #expect(table.remove(old) == "old")
        #expect(table.remove(old) == nil, "removing twice changes nothing")
        let reused = table.reserveToken()
        table.store("new", for: reused)
        #expect(reused & 0xFFFF_FFFF == old & 0xFFFF_FFFF, "the freed slot is reused")
        #expect(table.value(for: old) == nil, "a stale token must not reach the slot's new watch")
        #expect(table.value(for: reused) == "new")
        #expect(table.remove(old) == nil && table.value(for: reused) == "new")
    }

    @Test func tokensNeverIssuedFindNothing() {
        var table = WatchTable<String>()
        table.store("x", for: table.reserveToken())
        #expect(table.value(for: 0) == nil)
        #expect(table.value(for: 0xFFFF_FFFF_0000_0007) == nil)
    }
}
