@testable import PadLinux
import PadCore
import Testing

/// The line splitter behind the control socket and the hiding service: a request past the limit is never handed on
/// (it was answered, then refused, when its newline came in the same read).
@Suite("StreamLines")
struct StreamLinesTests {
    static let limit = NodeHiding.maximumLineBytes

    @Test("A line past the limit, newline included in the same read, is refused and never returned")
    func anOverlongLineWithItsNewlineIsNeverReturned() {
        var lines = StreamLines()
        let request = #"{"id":1,"request":"close-pairing","pad":""# + String(repeating: "x", count: 5_000) + "\"}\n"
        #expect(lines.append(Array(request.utf8)).isEmpty)
        #expect(lines.overflowed)
        #expect(lines.append(Array(#"{"id":2,"request":"status"}"#.utf8) + [10]).isEmpty, "nothing after an overflow")
    }

    @Test("A line past the limit that arrives in pieces is refused once the limit passes")
    func anOverlongLineInPiecesIsRefused() {
        var lines = StreamLines()
        for _ in 0..<5 { #expect(lines.append([UInt8](repeating: 0x61, count: 1_000)).isEmpty) }
        #expect(lines.overflowed)
        #expect(lines.append([10]).isEmpty)
    }

    @Test("Lines up to the limit come whole, in order, across reads")
    func linesUpToTheLimitCome() {
        var lines = StreamLines()
        let longest = String(repeating: "y", count: Self.limit)
        let first = lines.append(Array("a\nb".utf8))
        #expect(first == ["a"])
        let rest = lines.append(Array("c\n\(longest)\n".utf8))
        #expect(rest == ["bc", Substring(longest)])
        #expect(!lines.overflowed)
    }
}
