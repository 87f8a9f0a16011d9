import ArgumentParser
import PadNet
import PadNetLinux

/// `--config-dir`, as every command that reads keys and pairings takes it: where this machine's key and its pairings
/// live (`serve`, `pair`, `connect`, `hosts`), or for `status`, `clients`, `revoke`, `pairing-window` and `console`
/// (through `ControlSocketOptions`) the serve's, whose control socket is found from it.
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
