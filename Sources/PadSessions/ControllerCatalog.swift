public import Logging
public import PadCore
public import PadLinux
import PadSDL

/// The connected controllers as padbridge's commands see them: udev's nodes grouped into controllers, their
/// batteries, and SDL2's view joined by path.
public enum ControllerCatalog {
    /// When SDL2's view is joined in: starting SDL's game-controller subsystem takes a while (it opens and
    /// queries PlayStation pads' hidraw nodes), so commands that need it only for generic pads' layouts skip it
    /// when there are none.
    public enum SDLView {
        case always
        case forGenericPads
    }

    /// Where SDL2's view comes from. SDL's device scan can crash its process when a device goes away while it
    /// reads it (SDL 2.26 compares a vanished node's subsystem, NULL, with `strcmp`): a command that lists pads
    /// while they are unplugged asks a helper process (`SDLProbe`), so such a crash costs one listing SDL's view,
    /// not the command.
    public enum SDLSource: Sendable {
        /// SDL runs in this process (tests, one-shot tools).
        case inProcess
        /// `executable arguments...` prints an `SDLProbe` reply (padbridge's own hidden `sdl-probe` command).
        case helperProcess(executable: String, arguments: [String])
    }

    public static func discover(logger: Logger, sdlView: SDLView = .always, sdlSource: SDLSource = .inProcess) throws
        -> [Controller]
    {
        let (records, controllers) = try udevListing(logger: logger)
        let hasGeneric = controllers.contains { $0.kind == .generic }
        if sdlView == .forGenericPads && !hasGeneric {
            return controllers
        }
        let sdl: [SDLControllerInfo]
        do {
            sdl = try SDLProbe.controllers(from: sdlSource, logger: logger)
        } catch {
            reportNoSDLView(error, hasGeneric: hasGeneric, logger: logger)
            sdl = []
        }
        return SDLControllerJoin.joining(controllers, sdl: sdl, records: records)
    }

    /// Without SDL2 installed only generic pads lose something (their layout): say so, and how to fix it.
    private static func reportNoSDLView(_ error: SDLCatalogError, hasGeneric: Bool, logger: Logger) {
        if error.code != .subsystemFailed && hasGeneric {
            logger.warning("\(error)")
        } else {
            logger.debug("no SDL2 view of the pads: \(error)")
        }
    }
}

extension ControllerCatalog {
    /// `discover` for a command whose loop is running (remap's and connect's hotplug): udev's listing on a thread of
    /// its own, SDL's view (when it is wanted) from its helper process read by the loop, so the loop keeps serving
    /// the pads while either runs. The listing must stay off the loop: libudev reads each device's sysfs `uevent`,
    /// which a device being probed keeps locked, and the probe of one of this process's own virtual DualSenses waits
    /// for answers only the loop gives (see `LoopOffThreadWork`). `completion` runs on the loop; cancel the returned
    /// handle to give up.
    public static func discover(
        logger: Logger, sdlView: SDLView = .always, sdlSource: SDLSource, on loop: DeviceEventLoop,
        completion: @escaping (Result<[Controller], any Error>) -> Void
    ) -> PendingDiscovery {
        let pending = PendingDiscovery()
        do {
            pending.listing = try LoopOffThreadWork(on: loop, work: { Result { try udevListing(logger: logger) } }) { listed in
                guard !pending.isCancelled else { return }
                switch listed {
                case .success(let (records, controllers)):
                    joinSDL(
                        records: records, controllers: controllers, logger: logger, sdlView: sdlView,
                        sdlSource: sdlSource, loop: loop, pending: pending, completion: completion)
                case .failure(let error):
                    completion(.failure(error))
                }
            }
        } catch {
            loop.deferWork { if !pending.isCancelled { completion(.failure(error)) } }
        }
        return pending
    }

    /// udev's pads, grouped, with their batteries: everything of the listing that reads sysfs.
    private static func udevListing(logger: Logger) throws -> ([UdevDeviceRecord], [Controller]) {
        let records = try UdevContext().padNodeRecords { devnodes in
            let grace = UdevContext.udevdProcessingGraceMilliseconds / 1000
            logger.info(
                "waiting (up to \(grace) s) for udevd to finish with \(devnodes.joined(separator: ", ")), just made: until then a pad's ID can differ from the one it keeps",
                metadata: ["event": "waitingForUdevd", "nodes": .array(devnodes.map { .string($0) })])
        }
        var controllers = ControllerGrouping.controllers(from: records)
        for index in controllers.indices where controllers[index].capabilities.battery {
            controllers[index].battery = ControllerBattery.state(ofHIDDevice: controllers[index].groupSyspath)
        }
        return (records, controllers)
    }

    private static func joinSDL(
        records: [UdevDeviceRecord], controllers: [Controller], logger: Logger, sdlView: SDLView,
        sdlSource: SDLSource, loop: DeviceEventLoop, pending: PendingDiscovery,
        completion: @escaping (Result<[Controller], any Error>) -> Void
    ) {
        let hasGeneric = controllers.contains { $0.kind == .generic }
        func finish(_ sdl: Result<[SDLControllerInfo], SDLCatalogError>) {
            guard !pending.isCancelled else { return }
            switch sdl {
            case .success(let sdl):
                completion(.success(SDLControllerJoin.joining(controllers, sdl: sdl, records: records)))
            case .failure(let error):
                reportNoSDLView(error, hasGeneric: hasGeneric, logger: logger)
                completion(.success(SDLControllerJoin.joining(controllers, sdl: [], records: records)))
            }
        }
        if sdlView == .forGenericPads && !hasGeneric {
            return completion(.success(controllers))
        }
        switch sdlSource {
        case .inProcess:
            let sdl: Result<[SDLControllerInfo], SDLCatalogError>
            do { sdl = .success(try SDLControllerCatalog.current()) } catch { sdl = .failure(error) }
            finish(sdl)
        case .helperProcess(let executable, let arguments):
            // A helper that crashes is asked once more, as `SDLProbe.controllers` does.
            func ask(again: Bool) {
                do {
                    pending.helper = try LoopHelperProcess(
                        executable: executable, arguments: arguments, timeout: SDLProbe.deadline, loop: loop
                    ) { outcome in
                        let reply = SDLProbe.reading(outcome, executable: executable)
                        if case .failure(let error) = reply, error.code == .helperFailed, again {
                            logger.debug("SDL2's view, first try: \(error); asking again")
                            return ask(again: false)
                        }
                        finish(reply)
                    }
                } catch {
                    let failure = SDLCatalogError(code: .helperFailed, reason: "\(executable) could not be started (\(error))")
                    finish(.failure(failure))
                }
            }
            ask(again: true)
        }
    }

    /// A listing under way; `cancel()` drops its result (its completion is not called).
    public final class PendingDiscovery {
        fileprivate var listing: LoopOffThreadWork?
        fileprivate var helper: LoopHelperProcess?
        public private(set) var isCancelled = false

        /// Stops the helper (if any) and drops the listing's result.
        public func cancel() {
            isCancelled = true
            listing?.cancel()
            listing = nil
            helper?.cancel()
            helper = nil
        }
    }
}

public enum ControllerLayouts {
    /// The layout to read a controller's pad node with (see `SDLControllerJoin.layout`). Without absinfo: SDL 2.26
    /// (Debian 12's) numbers every hat as a hat, as `list` does from udev's records.
    public static func layout(for controller: Controller, padNode: EvdevDeviceInfo?) -> EvdevLayout {
        SDLControllerJoin.layout(
            for: controller, padKeyCodes: padNode?.codes[EvdevCode.evKey] ?? [],
            padAbsoluteCodes: padNode?.codes[EvdevCode.evAbs] ?? [])
    }
}
