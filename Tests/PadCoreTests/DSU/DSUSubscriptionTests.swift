import PadCore
import Testing

@Suite struct DSUSubscriptionTests {
    typealias Subscriptions = DSUSubscriptions<String>
    let dolphin = Subscriptions.Client(address: "127.0.0.1:40000", clientID: 7)
    let cemu = Subscriptions.Client(address: "127.0.0.1:40001", clientID: 8)

    @Test func aSubscriptionRunsFiveSecondsFromItsLastRenewal() {
        var table = Subscriptions()
        let first = table.subscribe(dolphin, to: DSUSlotSet([0]), now: 1_000_000)
        #expect(first == .subscribed(added: DSUSlotSet([0])))
        let renewal = table.subscribe(dolphin, to: DSUSlotSet([0]), now: 2_000_000)
        #expect(renewal == .renewed)
        #expect(table.hasSubscribers(of: 0, now: 6_999_999))
        #expect(table.nextExpiry == 7_000_000)
        var ended: [(Subscriptions.Client, DSUSlotSet)] = []
        let forgottenJustBefore = table.expire(now: 6_999_999) { ended.append(($0, $1)) }
        #expect(forgottenJustBefore == 0)
        #expect(!table.hasSubscribers(of: 0, now: 7_000_000))
        let forgottenAtFiveSeconds = table.expire(now: 7_000_000) { ended.append(($0, $1)) }
        #expect(forgottenAtFiveSeconds == 1)
        #expect(ended.map(\.0) == [dolphin] && ended.map(\.1) == [DSUSlotSet([0])])
        #expect(table.clientCount == 0 && table.nextExpiry == nil)
    }

    @Test func eachSlotExpiresOnItsOwn() {
        var table = Subscriptions()
        _ = table.subscribe(dolphin, to: DSUSlotSet([0, 1]), now: 0)
        let widened = table.subscribe(dolphin, to: DSUSlotSet([1, 2]), now: 3_000_000)
        #expect(widened == .subscribed(added: DSUSlotSet([2])))
        _ = table.expire(now: 5_000_000) { _, _ in Issue.record("the client still has slots 1 and 2") }
        #expect(table.slots(of: dolphin, now: 5_000_000) == DSUSlotSet([1, 2]))
        #expect(!table.hasSubscribers(of: 0, now: 5_000_000))
    }

    @Test func packetNumbersCountPerClient() {
        var table = Subscriptions()
        _ = table.subscribe(dolphin, to: DSUSlotSet([0, 1]), now: 0)
        _ = table.subscribe(cemu, to: DSUSlotSet([1]), now: 0)
        var sent: [(String, UInt32)] = []
        for slot in [0, 1, 1] { table.forEachSubscriber(of: slot, now: 1) { sent.append(($0.address, $1)) } }
        #expect(sent.map(\.0) == [dolphin.address, dolphin.address, cemu.address, dolphin.address, cemu.address])
        #expect(sent.map(\.1) == [0, 1, 0, 2, 1])
        let cemusNext = table.takePacketNumber(for: cemu)
        #expect(cemusNext == 2)
    }

    @Test func aFullTableRefusesANewClientUntilOneExpires() {
        var table = Subscriptions(capacity: 2)
        _ = table.subscribe(dolphin, to: DSUSlotSet([0]), now: 0)
        _ = table.subscribe(cemu, to: DSUSlotSet([0]), now: 1_000_000)
        let third = Subscriptions.Client(address: "127.0.0.1:40002", clientID: 9)
        let thirdWhileFull = table.subscribe(third, to: DSUSlotSet([0]), now: 2_000_000)
        #expect(thirdWhileFull == .refused)
        // Existing clients still renew.
        let cemuRenews = table.subscribe(cemu, to: DSUSlotSet([0]), now: 2_000_000)
        #expect(cemuRenews == .renewed)
        // Dolphin's ended at 5 s: room for the third.
        let thirdOnceRoom = table.subscribe(third, to: DSUSlotSet([0]), now: 5_000_000)
        #expect(thirdOnceRoom == .subscribed(added: DSUSlotSet([0])))
        #expect(table.clientCount == 2)
    }

    @Test func theSameAddressWithAnotherIDIsAnotherClient() {
        var table = Subscriptions()
        _ = table.subscribe(dolphin, to: DSUSlotSet([0]), now: 0)
        let restarted = Subscriptions.Client(address: dolphin.address, clientID: 99)
        let restartedClient = table.subscribe(restarted, to: DSUSlotSet([0]), now: 0)
        #expect(restartedClient == .subscribed(added: DSUSlotSet([0])))
        #expect(table.clientCount == 2)
    }

    @Test func aFloodFromOneSourceIsLimitedAndOthersStillGetThrough() {
        var limiter = DSURequestLimiter<String>(
            perSource: .init(requestsPerSecond: 20, burst: 40), total: .init(requestsPerSecond: 400, burst: 800))
        var admitted = 0
        for index in 0..<2_000 where limiter.admit("flood", now: UInt64(index)) { admitted += 1 }
        #expect(admitted == 40)
        #expect(limiter.dropped == 1_960)
        let dolphinAdmitted = limiter.admit("dolphin", now: 2_000)
        #expect(dolphinAdmitted)
        // A second later the flood's source has 20 more.
        var later = 0
        for _ in 0..<100 where limiter.admit("flood", now: 1_002_000) { later += 1 }
        #expect(later == 20)
    }

    @Test func theTotalLimitHoldsAcrossManySources() {
        var limiter = DSURequestLimiter<Int>(
            perSource: .init(requestsPerSecond: 20, burst: 40), total: .init(requestsPerSecond: 100, burst: 100),
            sourceCapacity: 8)
        var admitted = 0
        for source in 0..<1_000 where limiter.admit(source, now: 0) { admitted += 1 }
        #expect(admitted == 100)
    }
}

@Suite struct DSUMotionClockTests {
    @Test func theSensorClockIsUnwrappedPast32Bits() {
        var clock = DSUMotionClock()
        #expect(clock.timestamp(sensorMicroseconds: 0xFFFF_F000, arrivalMicroseconds: 10) == 0xFFFF_F000)
        #expect(clock.timestamp(sensorMicroseconds: 0xFFFF_F000, arrivalMicroseconds: 11) == 0xFFFF_F000)
        // Wrapped: 0x1000 after 0xFFFFF000 is 8192 µs later.
        #expect(clock.timestamp(sensorMicroseconds: 0x1000, arrivalMicroseconds: 8_000) == 0x1_0000_1000)
    }

    @Test func theArrivalTimeStandsInForAMissingSensorClock() {
        var clock = DSUMotionClock()
        #expect(clock.timestamp(sensorMicroseconds: 0, arrivalMicroseconds: 5_000) == 5_000)
        #expect(clock.timestamp(sensorMicroseconds: 0, arrivalMicroseconds: 9_000) == 9_000)
    }

    @Test func aRestartedCounterContinuesForward() {
        var clock = DSUMotionClock()
        _ = clock.timestamp(sensorMicroseconds: 50_000_000, arrivalMicroseconds: 1_000_000)
        clock.restart()
        // The pad came back 2 s later, its counter from 100.
        #expect(clock.timestamp(sensorMicroseconds: 100, arrivalMicroseconds: 3_000_000) == 52_000_000)
        #expect(clock.timestamp(sensorMicroseconds: 4_100, arrivalMicroseconds: 3_004_000) == 52_004_000)
        // A jump back without a restart also goes forward, by the time that passed.
        #expect(clock.timestamp(sensorMicroseconds: 50, arrivalMicroseconds: 3_005_000) == 52_005_000)
    }
}
