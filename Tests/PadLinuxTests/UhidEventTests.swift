import CPadLinux
@testable import PadLinux
import Testing

/// Byte layout of `struct uhid_event` (controller-protocols.md §7.2), checked against the C shim's offsets.
@Suite("uhid event encoding")
struct UhidEventTests {
    static func load<Value: FixedWidthInteger>(_ bytes: [UInt8], _ offset: Int, as _: Value.Type) -> Value {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Value.self) }
    }

    @Test func layoutMatchesTheFactSheet() {
        #expect(CPadLinux_UHID_EVENT_SIZE == 4380)
        #expect(CPadLinux_UHID_CREATE2_RD_SIZE == 260 && CPadLinux_UHID_CREATE2_RD_DATA == 280)
        #expect(CPadLinux_UHID_OUTPUT_SIZE == 4100 && CPadLinux_UHID_OUTPUT_RTYPE == 4102)
        #expect(CPadLinux_UHID_INPUT2_DATA == 6 && CPadLinux_UHID_GET_REPORT_REPLY_DATA == 12)
    }

    @Test func create2() {
        let descriptor: [UInt8] = [0x05, 0x01, 0x09, 0x05, 0xC0]
        let event = UhidRequest.create(.init(
            name: "Pad", phys: "padbridge/x", uniq: "aa:bb:cc:dd:ee:ff", bus: 5, vendor: 0x054C, product: 0x0CE6,
            version: 0x0100, reportDescriptor: descriptor))
        #expect(Self.load(event, 0, as: UInt32.self) == 11)  // UHID_CREATE2
        #expect(Array(event[4..<8]) == Array("Pad\0".utf8))
        #expect(Array(event[196..<213]) == Array("aa:bb:cc:dd:ee:ff".utf8))
        #expect(Self.load(event, 260, as: UInt16.self) == 5)
        #expect(Self.load(event, 262, as: UInt16.self) == 5)
        #expect(Self.load(event, 264, as: UInt32.self) == 0x054C)
        #expect(Self.load(event, 268, as: UInt32.self) == 0x0CE6)
        #expect(Self.load(event, 272, as: UInt32.self) == 0x0100)
        #expect(Array(event[280...]) == descriptor)
    }

    @Test func longNamesAreTruncatedAndTerminated() {
        let event = UhidRequest.create(.init(
            name: String(repeating: "n", count: 300), phys: "", uniq: "", bus: 3, vendor: 1, product: 2, version: 3,
            reportDescriptor: [0xC0]))
        #expect(event[4 + 126] == UInt8(ascii: "n"))
        #expect(event[4 + 127] == 0)
    }

    @Test func input2AndReplies() {
        let report: [UInt8] = [0x31, 1, 2, 3]
        let input = report.withUnsafeBytes { UhidRequest.input($0) }
        #expect(Self.load(input, 0, as: UInt32.self) == 12)
        #expect(Self.load(input, 4, as: UInt16.self) == 4)
        #expect(Array(input[6...]) == report)

        let reply = UhidRequest.getReportReply(id: 77, error: 0, report: [0x09, 0xAA])
        #expect(Self.load(reply, 0, as: UInt32.self) == 10)
        #expect(Self.load(reply, 4, as: UInt32.self) == 77)
        #expect(Self.load(reply, 8, as: UInt16.self) == 0)
        #expect(Self.load(reply, 10, as: UInt16.self) == 2)
        #expect(Array(reply[12...]) == [0x09, 0xAA])

        let refusal = UhidRequest.setReportReply(id: 9, error: 5)
        #expect(Self.load(refusal, 0, as: UInt32.self) == 14)
        #expect(Self.load(refusal, 4, as: UInt32.self) == 9)
        #expect(Self.load(refusal, 8, as: UInt16.self) == 5)
    }

    static func event(type: UInt32, _ fields: [(Int, [UInt8])]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 4380)
        withUnsafeBytes(of: type) { for (index, byte) in $0.enumerated() { bytes[index] = byte } }
        for (offset, values) in fields { bytes.replaceSubrange(offset..<(offset + values.count), with: values) }
        return bytes
    }

    @Test func decodesKernelEvents() {
        func decode(_ bytes: [UInt8]) -> UhidEvent? { bytes.withUnsafeBytes { UhidEvent.decode($0) } }
        #expect(decode(Self.event(type: 2, [(4, [0x07])])) == .start(deviceFlags: 7))
        #expect(decode(Self.event(type: 4, [])) == .open)
        #expect(decode(Self.event(type: 5, [])) == .close)
        #expect(decode(Self.event(type: 3, [])) == .stop)
        #expect(decode(Self.event(type: 9, [(4, [0x2A, 0, 0, 0]), (8, [0x05]), (9, [0x00])]))
            == .getReport(id: 42, reportNumber: 5, reportType: 0))
        #expect(decode(Self.event(type: 6, [(4, [0x02, 0xFF]), (4100, [2, 0]), (4102, [1])]))
            == .output(report: [0x02, 0xFF], reportType: 1))
        #expect(decode(Self.event(type: 13, [(4, [1, 0, 0, 0]), (8, [0x08]), (9, [0]), (10, [1, 0]), (12, [0x08])]))
            == .setReport(id: 1, reportNumber: 8, reportType: 0, report: [0x08]))
        #expect(decode([1, 2]) == nil)
        // A size beyond UHID_DATA_MAX is clamped, never trusted.
        let huge = decode(Self.event(type: 6, [(4100, [0xFF, 0xFF]), (4102, [1])]))
        if case let .output(report, _) = huge { #expect(report.count == 4096) } else { Issue.record("not output") }
    }
}
