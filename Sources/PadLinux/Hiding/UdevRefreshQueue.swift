import CPadLinux
import Glibc
import Logging

/// Has udevd process devices again after the hiding service changed their runtime rules: it re-reads the rules,
/// processes each device again (a "change" uevent) and this waits until it has (`udevadm settle`). That work runs
/// on a thread of its own (`LoopOffThreadWork`), never on the service's loop or a request's path; requests that come
/// while one runs are coalesced into the next, and runs start at most every `minimumIntervalMilliseconds`. Without
/// udevd there is nothing to do. Loop-confined.
final class UdevRefreshQueue {
    /// A device to process again, and what to do once udevd has (on the loop).
    struct Request {
        var devpath: String
        var done: () -> Void
        /// Runs tried before, whose `udevadm control --reload` udevd did not take (it answers slowly when busy).
        var failedRuns = 0
    }

    /// Runs a request is tried in, at most; after a run whose reload udevd did not take, the next waits 1 s, then 2,
    /// 4, 8 (udevd takes no control message while it is busy, which under emulation can last seconds).
    static let maximumRuns = 5
    private var retryDelayMilliseconds: UInt64 = 0

    private let loop: DeviceEventLoop
    private let logger: Logger
    private let minimumIntervalMilliseconds: UInt64
    private var pending: [Request] = []
    private var running: LoopOffThreadWork?
    private var waiting: LoopDeadline?
    private var lastStart: MonotonicInstant?

    init(loop: DeviceEventLoop, logger: Logger, minimumIntervalMilliseconds: UInt64 = 250) {
        self.loop = loop
        self.logger = logger
        self.minimumIntervalMilliseconds = minimumIntervalMilliseconds
    }

    /// Whether udevd runs (its control socket listens): then it sets the nodes' permissions from its rules.
    static var udevdRuns: Bool { CPadLinux_unixSocketIsListening("/run/udev/control") != 0 }

    func request(_ requests: [Request]) {
        guard !requests.isEmpty else { return }
        pending += requests
        startIfDue()
    }

    private func startIfDue() {
        guard running == nil, waiting == nil, !pending.isEmpty else { return }
        let now = MonotonicInstant.now()
        if let lastStart {
            let due = lastStart.adding(milliseconds: max(minimumIntervalMilliseconds, retryDelayMilliseconds))
            if now < due {
                waiting = loop.deadline(afterMilliseconds: (due.nanoseconds - now.nanoseconds) / 1_000_000 + 1) {
                    [weak self] in
                    self?.waiting = nil
                    self?.startIfDue()
                }
                if waiting != nil { return }
            }
        }
        let batch = pending
        pending = []
        lastStart = now
        let devpaths = Array(Set(batch.map(\.devpath))).sorted()
        do {
            running = try LoopOffThreadWork(on: loop, work: { Self.refresh(devpaths) }) { [weak self] outcome in
                self?.finished(batch, outcome: outcome)
            }
        } catch {
            logger.warning("cannot start udev's refresh: \(error); the hidden nodes' udev rules take effect later")
            finished(batch, outcome: .init(reloaded: true, problems: []))
        }
    }

    private func finished(_ batch: [Request], outcome: Outcome) {
        running = nil
        for problem in outcome.problems { logger.warning("\(problem)") }
        var again: [Request] = []
        for var request in batch {
            request.failedRuns += outcome.reloaded ? 0 : 1
            if !outcome.reloaded && request.failedRuns < Self.maximumRuns {
                again.append(request)
            } else {
                request.done()
            }
        }
        retryDelayMilliseconds = outcome.reloaded ? 0 : min(max(1000, retryDelayMilliseconds * 2), 8000)
        if !outcome.reloaded { lastStart = MonotonicInstant.now() }  // the wait counts from the failed run's end
        if !again.isEmpty {
            logger.notice(
                "udevd did not re-read its rules; trying again in \(retryDelayMilliseconds) ms for \(again.count) node(s)")
            pending = again + pending
        }
        logger.debug("udev has processed \(batch.count) node(s) again")
        startIfDue()
    }

    struct Outcome: Sendable {
        /// udevd took the request to re-read its rules (or there is no udevd): the change events saw the rules.
        var reloaded: Bool
        var problems: [String]
    }

    /// On the worker thread: touches nothing but udevadm and the devices' uevent files. When udevd does not take
    /// the reload, no change event is sent (it would be processed under the old rules): the run is tried again.
    private static func refresh(_ devpaths: [String]) -> Outcome {
        guard udevdRuns else { return Outcome(reloaded: true, problems: []) }
        let candidates = ["/usr/bin/udevadm", "/bin/udevadm", "/sbin/udevadm"]
        guard let udevadm = candidates.first(where: { access($0, X_OK) == 0 }) else {
            return Outcome(
                reloaded: true, problems: ["udevd runs but no udevadm was found: the hidden nodes' udev rules take effect later"])
        }
        var problems: [String] = []
        func run(_ arguments: [String]) -> Bool {
            let outcome = try? HelperProcess.run(executable: udevadm, arguments: arguments, timeout: .seconds(30))
            guard outcome?.termination == .exited(code: 0) else {
                problems.append(
                    "`udevadm \(arguments.joined(separator: " "))` did not succeed: "
                        + (outcome.map { "\($0.termination)" } ?? "not started"))
                return false
            }
            return true
        }
        guard run(["control", "--reload", "--timeout=20"]) else { return Outcome(reloaded: false, problems: problems) }
        for devpath in devpaths {
            do throws(FileError) {
                try TextFile.write("change", to: "/sys\(devpath)/uevent")
            } catch {
                // A node gone meanwhile has nothing to refresh.
                if !error.isMissingFile && error.cause != .noDevice {
                    problems.append("\(error): udev processes that node again at its next event")
                }
            }
        }
        _ = run(["settle", "--timeout=10"])
        return Outcome(reloaded: true, problems: problems)
    }
}
