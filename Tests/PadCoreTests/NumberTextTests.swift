import PadCore
import Testing

@Suite("Numbers as text")
struct NumberTextTests {
    @Test(arguments: [
        (0.0, 2, "0.00"), (-0.25, 2, "-0.25"), (250, 1, "250.0"), (3.999, 2, "4.00"), (-0.004, 2, "0.00"),
        (0.05, 1, "0.1"), (12.5, 0, "13"), (-7.25, 3, "-7.250"), (1.005, 3, "1.005"),
    ])
    func fixedHasExactlyThatManyDecimals(value: Double, places: Int, text: String) {
        #expect(NumberText.fixed(value, places: places) == text)
    }

    @Test func fixedWritesANonFiniteValueAsSwiftDoes() {
        #expect(NumberText.fixed(.infinity, places: 2) == "inf")
        #expect(NumberText.fixed(.nan, places: 2) == "nan")
    }

    @Test func hexIsLowercaseAndZeroPadded() {
        #expect(NumberText.hex4(0x054C) == "054c" && NumberText.hex4(0) == "0000" && NumberText.hex4(.max) == "ffff")
        #expect(NumberText.hex2(0x0B) == "0b" && NumberText.hex2(0) == "00" && NumberText.hex2(.max) == "ff")
    }
}
