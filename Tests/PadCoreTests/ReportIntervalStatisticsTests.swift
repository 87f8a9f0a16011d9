import PadCore
import Testing

@Suite struct ReportIntervalStatisticsTests {
    @Test func intervalsComeFromTheKernelTimestamps() throws {
        var statistics = ReportIntervalStatistics()
        for (time, events) in [(1_000_000, 3), (1_004_000, 2), (1_012_000, 1), (1_016_000, 2)] as [(Int64, Int)] {
            statistics.recordFrame(atMicroseconds: time, events: events)
        }
        let summary = try #require(statistics.summary(overMicroseconds: 500_000))
        #expect(summary.framesPerSecond == 8)
        #expect(summary.eventsPerSecond == 16)
        #expect(summary.minimumIntervalMilliseconds == 4)
        #expect(summary.maximumIntervalMilliseconds == 8)
        #expect(Swift.abs(summary.averageIntervalMilliseconds - 16.0 / 3) < 1e-9)
    }

    @Test func oneFrameIsNotEnoughForAnInterval() {
        var statistics = ReportIntervalStatistics()
        statistics.recordFrame(atMicroseconds: 5, events: 1)
        #expect(statistics.summary(overMicroseconds: 1_000_000) == nil)
    }

    @Test func aNewWindowCountsTheIntervalAcrossItsStart() throws {
        var statistics = ReportIntervalStatistics()
        statistics.recordFrame(atMicroseconds: 0, events: 1)
        statistics.recordFrame(atMicroseconds: 1000, events: 1)
        statistics.startWindow()
        #expect(statistics.frames == 0)
        statistics.recordFrame(atMicroseconds: 3000, events: 1)
        let summary = try #require(statistics.summary(overMicroseconds: 1_000_000))
        #expect(summary.minimumIntervalMilliseconds == 2)
        #expect(summary.framesPerSecond == 1)
    }

    @Test func aClockGoingBackwardsIsNotANegativeInterval() throws {
        var statistics = ReportIntervalStatistics()
        for time in [10_000, 5_000, 7_000] as [Int64] { statistics.recordFrame(atMicroseconds: time, events: 1) }
        let summary = try #require(statistics.summary(overMicroseconds: 1_000_000))
        #expect(summary.minimumIntervalMilliseconds == 2)
        #expect(summary.maximumIntervalMilliseconds == 2)
    }
}
