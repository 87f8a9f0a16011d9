/// What is wrong with a line of one of padbridge's text files (a recording, a trust file): its number (from 1)
/// and what the line should look like. Their parsers are total: any text gives a value or this.
public struct TextLineError: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var problem: String

    public init(line: Int, problem: String) {
        self.line = line
        self.problem = problem
    }

    public var description: String { "line \(line): \(problem)" }
}
