/// A command that could not do its job, and why (no usage text: the arguments were fine): a file that cannot be
/// read or written, a host that refused.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
