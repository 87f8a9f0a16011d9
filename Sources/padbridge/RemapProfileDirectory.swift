import Glibc
import PadCore
import PadLinux
import PadProfiles

/// `remap`'s profiles directory (`$XDG_CONFIG_HOME/padbridge/profiles/`, or `--profiles DIR`): each pad is remapped
/// by the file named by its ID, else by its kind, else `default.toml` (`ProfileDirectoryMatch`), parsed against the
/// virtual pad it gets. A broken file is reported and leaves its pad passing through unchanged.
struct RemapProfileDirectory {
    let path: String

    /// `$XDG_CONFIG_HOME/padbridge/profiles`, else `$HOME/.config/padbridge/profiles` (as the keys' directory is found).
    static func defaultPath() -> String? {
        if let xdg = getenv("XDG_CONFIG_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") {
            return xdg + "/padbridge/profiles"
        }
        if let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty { return home + "/.config/padbridge/profiles" }
        return nil
    }

    /// What the directory holds for one pad.
    enum Outcome {
        /// The file that applies, parsed.
        case profile(RemapProfile, file: String)
        /// No file applies (or no directory): the pad passes through.
        case noProfile(directoryMissing: Bool)
        /// The file that applies cannot be read or is not a valid profile for this virtual pad.
        case broken(file: String, problem: String)
    }

    /// The outcome for `controller`, a file validated for the virtual pad `target` says it gets given its `as`.
    func outcome(for controller: Controller, target: (VirtualPadChoice?) -> VirtualPadCapabilities) -> Outcome {
        let names: Set<String>
        do {
            names = try DirectoryListing.names(in: path)
        } catch .noSuchFileOrDirectory {
            return .noProfile(directoryMissing: true)
        } catch {
            return .broken(file: path, problem: "cannot read the profiles directory: \(error)")
        }
        guard let name = ProfileDirectoryMatch.choose(among: names, for: controller.fingerprint, kind: controller.kind)
        else { return .noProfile(directoryMissing: false) }
        let file = path + "/" + name
        do {
            let text = try TextFile.contents(atPath: file)
            return .profile(try RemapProfileFile.parse(text, target: target), file: file)
        } catch let error as TextFile.ReadError {
            return .broken(file: file, problem: error.description)
        } catch {
            return .broken(file: file, problem: "\(file): \(error)")
        }
    }

    /// The status line for `outcome` (standard error, one per pad, at start and at each reload).
    func describe(_ outcome: Outcome, for controller: Controller) -> StatusEvent {
        let pad = "\(controller.name) [\(controller.fingerprint)]"
        let id: EventValue = .string(controller.fingerprint.rawValue)
        switch outcome {
        case let .profile(_, file):
            if let earlier = ProfileDirectoryMatch.earlierFileName(forKind: controller.kind), file.hasSuffix("/" + earlier) {
                let current = ProfileDirectoryMatch.fileName(forKind: controller.kind)
                return StatusEvent(
                    .profileChosen,
                    "\(pad) remapped by \(file) (the kind's file is named \(current) now, as `list` "
                        + "prints the kind; \(earlier) is still read when there is no \(current))",
                    ["pad": id, "file": .string(file)])
            }
            return StatusEvent(.profileChosen, "\(pad) remapped by \(file)", ["pad": id, "file": .string(file)])
        case let .noProfile(directoryMissing):
            let names = ProfileDirectoryMatch.candidates(for: controller.fingerprint, kind: controller.kind)
            let place = directoryMissing ? "\(path) does not exist" : "none in \(path)"
            return StatusEvent(
                .noProfile, "\(pad) passes through unchanged: no profile (\(names.joined(separator: ", ")); \(place))",
                ["pad": id, "candidates": EventValue(strings: names)])
        case let .broken(_, problem):
            return StatusEvent(
                .profileBroken, "\(problem); \(pad) passes through unchanged until the profile is fixed",
                ["pad": id, "problem": .string(problem)])
        }
    }
}
