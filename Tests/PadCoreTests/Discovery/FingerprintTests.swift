import PadCore
import PadTestSupport
import Testing

extension String {
    /// Two lowercase hex digits.
    fileprivate init(format2 byte: UInt8) {
        let digits = String(byte, radix: 16)
        self = digits.count == 1 ? "0" + digits : digits
    }
}

@Suite struct FingerprintTests {
    @Test(arguments: [
        ("", 0xcbf2_9ce4_8422_2325 as UInt64),
        ("a", 0xaf63_dc4c_8601_ec8c),
        ("foobar", 0x8594_4171_f739_67e8),
    ])
    func fnv1aMatchesThePublishedVectors(text: String, hash: UInt64) {
        #expect(FNV1a64.hash(text) == hash)
    }

    @Test func canonicalStringNamesBusIDsAndSerialOrPort() {
        #expect(
            Fingerprint.canonicalString(
                bus: .bluetooth, vendorID: 0x054c, productID: 0x0ce6, serial: "0e:ec:77:d9:19:e9", portPath: "x")
                == "padbridge-fingerprint-v2|bus=bluetooth|vendor=054c|product=0ce6|serial=0e:ec:77:d9:19:e9")
        #expect(
            Fingerprint.canonicalString(bus: .usb, vendorID: 0x79, productID: 6, serial: nil, portPath: "usb1/1-3", occurrence: 2)
                == "padbridge-fingerprint-v2|bus=usb|vendor=0079|product=0006|port=usb1/1-3#2")
    }

    /// Golden values, computed outside Swift (a few lines of Python over the recipe in `Fingerprint.derive`'s
    /// documentation): IDs must stay the same across runs, machines and Swift versions.
    @Test(arguments: [
        (ControllerBus.bluetooth, 0x054c as UInt16, 0x0ce6 as UInt16, "0e:ec:77:d9:19:e9" as String?, nil as String?,
         "adc312c6744a"),
        (.bluetooth, 0x054c, 0x0ce6, "0e:ec:77:d9:19:ea", nil, "b77acd2d3867"),
        (.usb, 0x045e, 0x028e, nil, "usb1/1-3", "170657e359c5"),
    ])
    func fingerprintsKeepTheirGoldenValues(
        bus: ControllerBus, vendor: UInt16, product: UInt16, serial: String?, port: String?, expected: String
    ) {
        let fingerprint = Fingerprint.derive(bus: bus, vendorID: vendor, productID: product, serial: serial, portPath: port)
        #expect(fingerprint.rawValue == expected)
    }

    @Test(arguments: [(0 as UInt64, 0 as UInt64), (1, 0xb456_bcfc_34c2_cb2c)])
    func fmix64MatchesItsReferenceValues(input: UInt64, output: UInt64) {
        #expect(Fmix64.mix(input) == output)
    }

    /// Pads of one batch differ only at the end of their serials or MACs. Their IDs must still look different from
    /// the first digits on: over 10,000 random serials each changed in its last character, two IDs share their first
    /// two hex digits in under 1 % of pairs (chance: 1/256, 0.4 %), and each of the 48 ID bits flips in 40-60 % of
    /// the pairs.
    @Test func serialsDifferingInTheirLastCharacterGiveUnrelatedIDs() throws {
        var generator = SplitMix64(seed: 0x5EED_F1D0)
        let alphabet = Array("0123456789abcdef")
        let pairs = 10_000
        var sharedFirstTwoDigits = 0
        var flips = [Int](repeating: 0, count: 48)
        for pair in 0..<pairs {
            let isMAC = pair % 2 == 0
            var characters: [Character] =
                isMAC
                ? Array((0..<6).map { _ in String(format2: generator.byte()) }.joined(separator: ":"))
                : (0..<Int.random(in: 8...16, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            let first = String(characters)
            let last = characters.index(before: characters.endIndex)
            let replacement = alphabet.filter { $0 != characters[last] }.randomElement(using: &generator)!
            characters[last] = replacement
            let second = String(characters)
            let bus: ControllerBus = isMAC ? .bluetooth : .usb
            let one = Fingerprint.derive(bus: bus, vendorID: 0x054c, productID: 0x0ce6, serial: first, portPath: nil)
            let other = Fingerprint.derive(bus: bus, vendorID: 0x054c, productID: 0x0ce6, serial: second, portPath: nil)
            if one.rawValue.prefix(2) == other.rawValue.prefix(2) { sharedFirstTwoDigits += 1 }
            let difference = try #require(UInt64(one.rawValue, radix: 16)) ^ (try #require(UInt64(other.rawValue, radix: 16)))
            for bit in 0..<48 where difference >> UInt64(bit) & 1 == 1 { flips[bit] += 1 }
        }
        #expect(Double(sharedFirstTwoDigits) / Double(pairs) < 0.01, "\(sharedFirstTwoDigits) of \(pairs) pairs share 2 digits")
        for (bit, count) in flips.enumerated() {
            let rate = Double(count) / Double(pairs)
            #expect((0.4...0.6).contains(rate), "bit \(bit) flipped in \(count) of \(pairs) pairs")
        }
    }

    @Test func sameDualSenseReappearingWithNewNumbersKeepsItsFingerprint() throws {
        let first = try #require(ControllerGrouping.controllers(from: UdevFixtures.bluetoothDualSense()).first)
        let again = try #require(
            ControllerGrouping.controllers(
                from: UdevFixtures.bluetoothDualSense(hidInstance: 0x2a, firstInput: 31, firstEvent: 9, hidraw: 4)
            ).first)
        #expect(again.nodes.evdev[0].path != first.nodes.evdev[0].path)
        #expect(again.groupSyspath != first.groupSyspath)
        #expect(again.fingerprint == first.fingerprint)
    }

    @Test func serialLessPadOnTheSamePortKeepsItsFingerprintAcrossReplugs() throws {
        let first = try #require(
            ControllerGrouping.controllers(
                from: UdevFixtures.serialLessUSBGamepad(port: "1-3", hidInstance: 3, input: 40, event: 20, hidraw: 5)
            ).first)
        let again = try #require(
            ControllerGrouping.controllers(
                from: UdevFixtures.serialLessUSBGamepad(port: "1-3", hidInstance: 9, input: 52, event: 23, hidraw: 6)
            ).first)
        #expect(again.fingerprint == first.fingerprint)
    }

    @Test func anotherSerialIsAnotherFingerprint() throws {
        let one = try #require(ControllerGrouping.controllers(from: UdevFixtures.bluetoothDualSense()).first)
        let other = try #require(
            ControllerGrouping.controllers(from: UdevFixtures.bluetoothDualSense(mac: "0e:ec:77:d9:19:ea")).first)
        #expect(one.fingerprint != other.fingerprint)
    }

    @Test func identicalSerialLessTwinsAreToldApartByPort() {
        let records =
            UdevFixtures.serialLessUSBGamepad(port: "1-3", hidInstance: 3, input: 40, event: 20, hidraw: 5)
            + UdevFixtures.serialLessUSBGamepad(port: "1-4", hidInstance: 4, input: 41, event: 21, hidraw: 6)
        let controllers = ControllerGrouping.controllers(from: records)
        #expect(controllers.count == 2)
        #expect(Set(controllers.map(\.fingerprint)).count == 2)
        // Swapping which twin sits in which port keeps each port's fingerprint.
        let swapped = ControllerGrouping.controllers(
            from: UdevFixtures.serialLessUSBGamepad(port: "1-4", hidInstance: 7, input: 50, event: 30, hidraw: 9))
        #expect(swapped.first?.fingerprint == controllers[1].fingerprint)
    }

    @Test func twoUinputPadsNeverShareAFingerprint() {
        let records = UdevFixtures.uinputXbox360(input: 8, event: 8) + UdevFixtures.uinputXbox360(input: 7, event: 7)
        let controllers = ControllerGrouping.controllers(from: records)
        #expect(controllers.count == 2)
        #expect(controllers[0].fingerprint != controllers[1].fingerprint)
        // The earlier pad (event7) keeps the plain fingerprint; the later one gets occurrence 2.
        #expect(controllers[0].nodes.evdev[0].path == "/dev/input/event7")
        let plain = Fingerprint.derive(
            bus: .usb, vendorID: 0x045e, productID: 0x028e, serial: nil, portPath: "virtual/input/input")
        #expect(controllers[0].fingerprint == plain)
        #expect(
            controllers[1].fingerprint
                == Fingerprint.derive(
                    bus: .usb, vendorID: 0x045e, productID: 0x028e, serial: nil, portPath: "virtual/input/input",
                    occurrence: 2))
    }

    @Test func manyPadsInOneEnumerationHaveDistinctFingerprints() {
        var records = UdevFixtures.bluetoothDualSense() + UdevFixtures.usbDualSense() + UdevFixtures.xpadXbox360()
        for index in 0..<5 { records += UdevFixtures.uinputXbox360(input: 60 + index, event: 60 + index) }
        let controllers = ControllerGrouping.controllers(from: records)
        #expect(controllers.count == 8)
        #expect(Set(controllers.map(\.fingerprint)).count == 8)
    }

    @Test(arguments: [
        (0x054c as UInt16, 0x0ce6 as UInt16, ControllerKind.dualSense), (0x054c, 0x0df2, .dualSenseEdge),
        (0x054c, 0x05c4, .dualShock4), (0x054c, 0x09cc, .dualShock4), (0x054c, 0x0ba0, .dualShock4),
        (0x045e, 0x028e, .xbox360), (0x045e, 0x0719, .xbox360), (0x045e, 0x02ea, .xboxOne),
        (0x045e, 0x0b12, .xboxOne), (0x045e, 0x0b13, .xboxOne), (0x057e, 0x2009, .switchPro),
        (0x0079, 0x0006, .generic), (0x054c, 0x0268, .generic),
    ])
    func kindsByVendorAndProduct(vendor: UInt16, product: UInt16, kind: ControllerKind) {
        #expect(ControllerKind(vendorID: vendor, productID: product) == kind)
    }
}
