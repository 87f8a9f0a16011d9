/// padbridge's version: the one place it is written. `padbridge --version` prints it, and `scripts/package` reads it
/// from the built binary for the Debian package's version (docs/install.md, "The version": how it is bumped).
let padbridgeVersion = "0.1.0"
