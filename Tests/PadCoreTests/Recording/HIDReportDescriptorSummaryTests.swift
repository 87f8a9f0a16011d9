import PadCore
import PadTestSupport
import Testing

@Suite("Feature reports a HID report descriptor declares")
struct HIDReportDescriptorSummaryTests {
    /// hid-playstation asks for these at probe, with these sizes (DS_FEATURE_REPORT_*_SIZE), on both buses.
    @Test(arguments: HIDTransport.allCases)
    func aDualSenseDeclaresTheReportsHidPlaystationReads(transport: HIDTransport) {
        let lengths = HIDReportDescriptorSummary(DualSenseDescriptor.bytes(for: transport)).featureReportLengths
        #expect(lengths[0x05] == 41, "calibration")
        #expect(lengths[0x09] == 20, "pairing info")
        #expect(lengths[0x20] == 64, "firmware info")
        #expect(lengths[0x31] == nil, "0x31 is an input report over Bluetooth, not a feature")
    }

    @Test func reportCountAndSizeAreGlobalsAndPushPopRestoresThem() {
        let descriptor: [UInt8] = [
            0x85, 0x02, 0x75, 0x08, 0x95, 0x03, 0xB1, 0x02,  // ID 2: 3 bytes
            0xA4, 0x95, 0x10, 0x85, 0x03, 0xB1, 0x02, 0xB4,  // push; ID 3: 16 bytes; pop
            0x85, 0x04, 0xB1, 0x02, 0x75, 0x01, 0x95, 0x04, 0xB1, 0x02,  // ID 4: 3 bytes + 4 bits
            0x81, 0x02,  // an input item counts for nothing here
        ]
        #expect(HIDReportDescriptorSummary(descriptor).featureReportLengths == [2: 4, 3: 17, 4: 5])
    }

    @Test func anyBytesGiveASummary() {
        var random = SplitMix64(seed: 0xDE5C)
        for _ in 0..<5000 {
            let bytes = (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let lengths = HIDReportDescriptorSummary(bytes).featureReportLengths
            #expect(lengths.values.allSatisfy { $0 >= 1 })
        }
    }
}
