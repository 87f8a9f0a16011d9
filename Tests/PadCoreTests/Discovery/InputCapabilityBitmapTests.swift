import PadCore
import PadTestSupport
import Testing

@Suite struct InputCapabilityBitmapTests {
    struct Sample: Sendable, CustomStringConvertible {
        var text: String
        var codes: [UInt16]
        var description: String { text }
    }

    @Test(arguments: [
        // hid-playstation's gamepad keys: the fifth word holds 0x100...0x13f.
        Sample(text: "7fdb000000000000 0 0 0 0", codes: [0x130, 0x131, 0x133, 0x134] + Array(0x136...0x13e)),
        // xpad's Xbox 360: no BTN_TL2/BTN_TR2.
        Sample(text: "7cdb000000000000 0 0 0 0", codes: [0x130, 0x131, 0x133, 0x134, 0x136, 0x137] + Array(0x13a...0x13e)),
        Sample(text: "3003f", codes: [0, 1, 2, 3, 4, 5, 0x10, 0x11]),
        Sample(text: "107030000 0", codes: [0x50, 0x51, 0x58, 0x59, 0x5a, 0x60]),
        Sample(text: "40", codes: [6]),
        Sample(text: "0", codes: []),
        Sample(text: "1 0", codes: [64]),
        Sample(text: "  3003f\n", codes: [0, 1, 2, 3, 4, 5, 0x10, 0x11]),
        Sample(text: "8000000000000000", codes: [63]),
    ])
    func parsesTheKernelsWords(sample: Sample) {
        let bitmap = InputCapabilityBitmap(kernelText: sample.text)
        #expect(bitmap.codes == sample.codes)
        for code in sample.codes { #expect(bitmap.contains(code)) }
        #expect(!bitmap.contains(0x2ff))
    }

    @Test(arguments: [
        "", "   ", "zz", "0x3f", "-1", "3f 1g", "1 2 3 xyz", "11112222333344445", "７", "3f,1", "\u{0}",
    ])
    func textThatIsNoBitmapIsEmpty(text: String) {
        let bitmap = InputCapabilityBitmap(kernelText: text)
        #expect(bitmap.isEmpty)
        #expect(bitmap.codes.isEmpty)
        #expect(!bitmap.contains(0))
    }

    @Test func missingPropertyIsEmpty() {
        #expect(InputCapabilityBitmap(kernelText: nil).isEmpty)
    }

    @Test(arguments: [1, 2, 3, 99] as [UInt64])
    func codesRoundTripThroughTheKernelText(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let count = Int.random(in: 0...40, using: &generator)
            let codes = Set((0..<count).map { _ in UInt16.random(in: 0...0x2ff, using: &generator) })
            let bitmap = InputCapabilityBitmap(codes: codes)
            #expect(bitmap.codes == codes.sorted())
            let reparsed = InputCapabilityBitmap(kernelText: bitmap.kernelText)
            #expect(reparsed.codes == codes.sorted(), "\(bitmap.kernelText)")
        }
    }

    @Test(arguments: [5, 6, 7] as [UInt64])
    func randomTextNeverTraps(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let alphabet = Array("0123456789abcdefABCDEFxg -\n\t,")
        for _ in 0..<500 {
            let length = Int.random(in: 0...60, using: &generator)
            let text = String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
            let bitmap = InputCapabilityBitmap(kernelText: text)
            #expect(bitmap.codes.allSatisfy(bitmap.contains))
        }
    }
}
