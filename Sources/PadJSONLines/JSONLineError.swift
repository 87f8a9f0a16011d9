/// Why one JSON line could not be read: says what was wrong and what is allowed.
public struct JSONLineError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
