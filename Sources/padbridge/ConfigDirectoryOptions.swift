import ArgumentParser
import PadNet
import PadNetLinux

/// `--config-dir`, as `serve`, `pair`, `connect` and `hosts` take it: where this machine's key and its pairings live.
/// (`status`, `clients`, `revoke`, `pairing-window` and `console` name a serve's directory instead:
/// `ControlSocketOptions`.)
struct ConfigDirectoryOptions: ParsableArguments {
    @Option(
        name: .customLong("config-dir"),
        help: ArgumentHelp("Where keys and pairings live (default: $XDG_CONFIG_HOME/padbridge).", valueName: "dir"),
        completion: .directory)
    var configDirectory: String?

    /// The trust files of the directory meant: --config-dir, else $XDG_CONFIG_HOME/padbridge, else ~/.config/padbridge.
    func store() throws -> TrustStore {
        TrustStore(directory: try TrustStore.resolveDirectory(configDirectory))
    }
}
