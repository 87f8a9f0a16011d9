import PadCore
import Testing

@Suite struct WhitespaceTrimmingTests {
    @Test(arguments: [
        ("0003\n", "0003"),
        ("  1B3C2F0 \n", "1B3C2F0"),
        ("\t/dev/input/event3 ", "/dev/input/event3"),
        ("a b\r\n", "a b"),
        ("inner  space", "inner  space"),
        (" \n\t", ""),
        ("", ""),
    ])
    func trimsOnlyTheEnds(text: String, expected: String) {
        #expect(text.trimmingWhitespace == expected[...])
        #expect(text.dropFirst(0).trimmingWhitespace == expected[...])
    }
}
