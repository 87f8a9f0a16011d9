/// Which file of a profiles directory (`$XDG_CONFIG_HOME/padbridge/profiles/`) remaps a pad, as input-remapper's
/// autoload picks a preset: the file named by the pad's ID (`b43f9de35e24.toml`, the ID `padbridge list` prints),
/// else by its kind (`dualsense.toml`, `xbox360.toml`, ...), else `default.toml`; none of them: no profile, the pad
/// passes through unchanged.
public enum ProfileDirectoryMatch {
    public static let defaultFileName = "default.toml"

    /// `dualsense.toml`, `dualsense-edge.toml`, `dualshock4.toml`, `xbox360.toml`, `xbox-one.toml`,
    /// `switch-pro.toml`, `generic.toml`: the kind as `padbridge list` prints it.
    public static func fileName(forKind kind: ControllerKind) -> String { kind.name + ".toml" }

    /// The name earlier versions looked for (`xboxone.toml`, `switchpro.toml`, `dualsenseedge.toml`), still read
    /// after the kind's own; nil where it is the same.
    public static func earlierFileName(forKind kind: ControllerKind) -> String? {
        let earlier = kind.rawValue.lowercased() + ".toml"
        return earlier == fileName(forKind: kind) ? nil : earlier
    }

    public static func fileName(forPad fingerprint: Fingerprint) -> String { fingerprint.rawValue + ".toml" }

    /// The file names that would apply, most specific first.
    public static func candidates(for fingerprint: Fingerprint, kind: ControllerKind) -> [String] {
        [fileName(forPad: fingerprint), fileName(forKind: kind)] + [earlierFileName(forKind: kind)].compactMap { $0 }
            + [defaultFileName]
    }

    /// The first of `candidates` among the names present in the directory, or nil.
    public static func choose(among present: Set<String>, for fingerprint: Fingerprint, kind: ControllerKind) -> String? {
        candidates(for: fingerprint, kind: kind).first(where: present.contains)
    }
}
