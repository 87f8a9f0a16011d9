/// How often a pad reports: frames per second and the interval between frames (min/avg/max) over a window, from
/// the kernel's own timestamps, so `padbridge monitor --stats` shows a pad's real polling rate.
public struct ReportIntervalStatistics: Sendable, Hashable {
    public private(set) var frames: Int = 0
    public private(set) var events: Int = 0
    private var lastMicroseconds: Int64?
    private var intervalCount: Int = 0
    private var intervalSum: Int64 = 0
    private var intervalMinimum: Int64 = .max
    private var intervalMaximum: Int64 = 0

    public init() {}

    /// One frame (a SYN_REPORT) with `events` events in it, stamped by the kernel.
    public mutating func recordFrame(atMicroseconds time: Int64, events: Int) {
        frames += 1
        self.events += events
        if let last = lastMicroseconds, time >= last {
            let interval = time - last
            intervalCount += 1
            intervalSum += interval
            intervalMinimum = min(intervalMinimum, interval)
            intervalMaximum = max(intervalMaximum, interval)
        }
        lastMicroseconds = time
    }

    public struct Summary: Sendable, Hashable {
        public var framesPerSecond: Double
        public var eventsPerSecond: Double
        public var minimumIntervalMilliseconds: Double
        public var averageIntervalMilliseconds: Double
        public var maximumIntervalMilliseconds: Double

        public init(
            framesPerSecond: Double, eventsPerSecond: Double, minimumIntervalMilliseconds: Double,
            averageIntervalMilliseconds: Double, maximumIntervalMilliseconds: Double
        ) {
            self.framesPerSecond = framesPerSecond
            self.eventsPerSecond = eventsPerSecond
            self.minimumIntervalMilliseconds = minimumIntervalMilliseconds
            self.averageIntervalMilliseconds = averageIntervalMilliseconds
            self.maximumIntervalMilliseconds = maximumIntervalMilliseconds
        }
    }

    /// The window's figures over `windowMicroseconds` of wall time; nil until two frames have arrived.
    public func summary(overMicroseconds windowMicroseconds: Int64) -> Summary? {
        guard intervalCount > 0, windowMicroseconds > 0 else { return nil }
        let seconds = Double(windowMicroseconds) / 1_000_000
        return Summary(
            framesPerSecond: Double(frames) / seconds,
            eventsPerSecond: Double(events) / seconds,
            minimumIntervalMilliseconds: Double(intervalMinimum) / 1000,
            averageIntervalMilliseconds: Double(intervalSum) / Double(intervalCount) / 1000,
            maximumIntervalMilliseconds: Double(intervalMaximum) / 1000)
    }

    /// Starts the next window, keeping the last frame's time so the first interval of the window is counted.
    public mutating func startWindow() {
        let last = lastMicroseconds
        self = ReportIntervalStatistics()
        lastMicroseconds = last
    }
}
