public import Logging
public import PadCore
public import PadLinux

/// `connect`'s and `remap`'s answer to hotplug: after each burst of device changes (`HotplugSettle`), the pads are
/// listed again, off the loop (`ControllerCatalog.discover(on:)`), so the pads already bridged keep flowing; changes
/// that come during a listing list once more after it. Only while `isWanted` says a listing would change anything (a
/// pad is awaited, or new pads join). Loop-confined.
public final class HotplugRelisting {
    private let loop: DeviceEventLoop
    private let logger: Logger
    private let sdlSource: ControllerCatalog.SDLSource
    private let isWanted: () -> Bool
    private let onListing: ([Controller]) -> UInt64?
    private var listLater: LoopDeadline?
    private var settle: HotplugSettle?
    private var hotplug: LoopWatch?
    private var listing: ControllerCatalog.PendingDiscovery?
    private var listAgain = false

    /// Starts watching `monitor` (made before the first listing, so a pad that comes back in between is not missed).
    /// `onListing` runs on the loop with every pad present, and returns after how many milliseconds to list again
    /// without a hotplug event (a pad back without all its nodes yet), or nil.
    public init(
        monitor: UdevMonitor, sdlSource: ControllerCatalog.SDLSource, loop: DeviceEventLoop, logger: Logger,
        isWanted: @escaping () -> Bool,
        onListing: @escaping ([Controller]) -> UInt64?
    ) throws(DeviceAccessError) {
        self.loop = loop
        self.logger = logger
        self.sdlSource = sdlSource
        self.isWanted = isWanted
        self.onListing = onListing
        let settle = try HotplugSettle(loop: loop) { [weak self] in self?.relist() }
        self.settle = settle
        hotplug = try loop.watch(monitor) { _ in settle.noteEvent() }
    }

    /// Lists now (or once the listing under way is done), if a listing is wanted.
    public func relist() {
        guard isWanted() else { return }
        guard listing == nil else {
            listAgain = true
            return
        }
        listing = ControllerCatalog.discover(
            logger: logger, sdlView: .forGenericPads, sdlSource: sdlSource, on: loop
        ) { [weak self] result in
            guard let self else { return }
            listing = nil
            switch result {
            case .success(let present):
                if let milliseconds = onListing(present) {
                    listLater = loop.deadline(afterMilliseconds: milliseconds) { [weak self] in self?.relist() }
                }
            case .failure(let error): logger.warning("listing pads after a hotplug event failed: \(error)")
            }
            if listAgain {
                listAgain = false
                relist()
            }
        }
    }

    /// Stops watching and drops a listing under way.
    public func cancel() {
        hotplug?.cancel()
        hotplug = nil
        settle?.cancel()
        settle = nil
        listing?.cancel()
        listing = nil
        listLater?.cancel()
        listLater = nil
    }

    deinit { cancel() }
}
