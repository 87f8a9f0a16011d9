import PadTestSupport
import Testing
@testable import PadCore

/// Random bytes of random lengths into every decoder: each returns or throws `ReportDecodingError`, never traps.
/// Half the inputs start with a report ID some decoder knows, and half of the 78-byte ones carry a valid CRC, so
/// the deep paths run too; whatever decodes must re-encode to something that decodes to the same value.
@Suite struct ReportRandomInputTests {
    static let knownIDs: [UInt8] = [0x01, 0x02, 0x05, 0x11, 0x31]

    static func randomInput(_ rng: inout SplitMix64) -> [UInt8] {
        let length = rng.chance(1, in: 3) ? [10, 32, 48, 63, 64, 78].randomElement(using: &rng)! : Int.random(in: 0...100, using: &rng)
        var bytes = rng.bytes(length)
        if !bytes.isEmpty && rng.chance(1, in: 2) { bytes[0] = knownIDs.randomElement(using: &rng)! }
        if bytes.count == 78 && rng.chance(1, in: 2) {
            let seed = rng.chance(1, in: 2) ? PlayStationCRC32.inputSeed : PlayStationCRC32.outputSeed
            bytes.withUnsafeMutableBytes { PlayStationCRC32.seal($0, seed: seed) }
        }
        return bytes
    }

    struct Tally { var decoded = 0, failed = 0 }

    @Test func everyDecoderIsTotal() {
        var rng = SplitMix64(seed: 0xF022)
        var tallies = [String: Tally]()
        for _ in 0..<10_000 {
            let bytes = Self.randomInput(&rng)

            switch decodeResult({ () throws(ReportDecodingError) in try DualSenseInputReport.decode(bytes) }) {
            case let .success(snapshot):
                tallies["DualSenseInput", default: Tally()].decoded += 1
                for transport in HIDTransport.allCases {
                    var again = try? DualSenseInputReport.decode(DualSenseInputReport.encoded(snapshot, transport: transport))
                    if snapshot.battery.percent == 0 { again?.battery = snapshot.battery }  // documented: error states
                    #expect(again == snapshot, "\(hexDump(bytes))")
                }
            case .failure: tallies["DualSenseInput", default: Tally()].failed += 1
            }

            switch decodeResult({ () throws(ReportDecodingError) in try DualShock4InputReport.decode(bytes) }) {
            case let .success(snapshot):
                tallies["DualShock4Input", default: Tally()].decoded += 1
                for transport in HIDTransport.allCases {
                    let again = try? DualShock4InputReport.decode(DualShock4InputReport.encoded(snapshot, transport: transport))
                    #expect(again == snapshot, "\(hexDump(bytes))")
                }
            case .failure: tallies["DualShock4Input", default: Tally()].failed += 1
            }

            switch decodeResult({ () throws(ReportDecodingError) in try DualSenseOutputReport.decode(bytes) }) {
            case let .success(feedback):
                tallies["DualSenseOutput", default: Tally()].decoded += 1
                if !feedback.isEmpty {
                    for layout in DualSenseOutputLayout.allCases {
                        let again = try? DualSenseOutputReport.decode(DualSenseOutputReport.encoded(feedback, layout: layout))
                        #expect(again == feedback, "\(hexDump(bytes))")
                    }
                }
            case .failure: tallies["DualSenseOutput", default: Tally()].failed += 1
            }

            switch decodeResult({ () throws(ReportDecodingError) in try DualShock4OutputReport.decode(bytes) }) {
            case let .success(feedback):
                tallies["DualShock4Output", default: Tally()].decoded += 1
                for transport in HIDTransport.allCases {
                    let again = try? DualShock4OutputReport.decode(DualShock4OutputReport.encoded(feedback, transport: transport))
                    #expect(again == feedback, "\(hexDump(bytes))")
                }
            case .failure: tallies["DualShock4Output", default: Tally()].failed += 1
            }

            let block = TriggerEffectBlock(bytes)
            #expect(TriggerEffect(block: block).block == block)
        }
        // The generator must reach both outcomes of every decoder, or this test proves little.
        for name in ["DualSenseInput", "DualShock4Input", "DualSenseOutput", "DualShock4Output"] {
            let tally = tallies[name] ?? Tally()
            #expect(tally.decoded > 100 && tally.failed > 100, "\(name): \(tally)")
        }
    }

    @Test func everyErrorKindIsReached() {
        var rng = SplitMix64(seed: 0xE220)
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let bytes = Self.randomInput(&rng)
            if case let .failure(error) = decodeResult({ () throws(ReportDecodingError) in try DualSenseOutputReport.decode(bytes) }) {
                switch error {
                case .empty: seen.insert("empty")
                case .truncated: seen.insert("truncated")
                case .unknownReportID: seen.insert("unknownReportID")
                case .checksumMismatch: seen.insert("checksumMismatch")
                }
            }
        }
        #expect(seen == ["empty", "truncated", "unknownReportID", "checksumMismatch"])
    }
}
