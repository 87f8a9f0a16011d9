/// How many reports a pad whose reports are its readers' clock owes at a heartbeat: one a period since the last,
/// so a late timer (a busy machine) does not make the pad's time run slow for its readers.
///
/// A Steam Deck's reports carry no sensor time: SDL and hid-steam stamp each 4 ms after the one before, and integrate
/// motion over those stamps; a Switch Pro's readers (hid-nintendo, SDL) count its reports' IMU samples 5 ms apart. A heartbeat that fires 9 ms late then sends three reports, not one, and the readers'
/// clock keeps up with the wall clock. The phase is kept (the owed count is whole periods since the last one paid), and
/// a pad more than `maximumOwed` periods behind (a stopped process) starts afresh instead of sending a burst.
public struct ReportPace: Sendable, Hashable {
    public let periodNanoseconds: UInt64
    /// A burst's limit: within hidraw's 64-report queue per reader (a Deck: 128 ms; a Switch Pro: 480 ms).
    public static let maximumOwed = 32
    private var paidUntilNanoseconds: UInt64?

    public init(periodMilliseconds: UInt64) {
        periodNanoseconds = max(periodMilliseconds, 1) * 1_000_000
    }

    /// The pace starts (the pad was opened): the first period ends one period from `nowNanoseconds`.
    public mutating func start(atNanoseconds now: UInt64) {
        paidUntilNanoseconds = now
    }

    /// The reports owed at `nowNanoseconds`: at least 1 (a heartbeat always sends), at most `maximumOwed`.
    public mutating func reportsOwed(atNanoseconds now: UInt64) -> Int {
        guard let paid = paidUntilNanoseconds, now > paid else {
            paidUntilNanoseconds = now
            return 1
        }
        let periods = (now - paid) / periodNanoseconds
        guard periods <= UInt64(Self.maximumOwed) else {
            paidUntilNanoseconds = now
            return 1
        }
        let owed = max(Int(periods), 1)
        paidUntilNanoseconds = paid + UInt64(owed) * periodNanoseconds
        return owed
    }
}
