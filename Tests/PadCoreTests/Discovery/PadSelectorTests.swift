import PadCore
import Testing

@Suite struct PadSelectorTests {
    static let controllers = ControllerGrouping.controllers(
        from: UdevFixtures.bluetoothDualSense(firstEvent: 3, hidraw: 0) + UdevFixtures.uinputXbox360(event: 7)
            + UdevFixtures.xpadXbox360(event: 15))

    func resolve(_ argument: String, in controllers: [Controller] = Self.controllers) -> Result<Controller, PadSelectionError> {
        Result { () throws(PadSelectionError) -> Controller in try PadSelector(argument).resolve(in: controllers) }
    }

    @Test func indexCountsFromZeroInListOrder() throws {
        #expect(Self.controllers.count == 3)
        #expect(try resolve("0").get() == Self.controllers[0])
        #expect(try resolve("2").get().driver == "xpad")
        #expect(resolve("3") == .failure(.indexOutOfRange(3, count: 3)))
    }

    @Test func fingerprintOrItsUniquePrefixSelects() throws {
        let target = Self.controllers[1]
        #expect(try resolve(target.fingerprint.rawValue).get() == target)
        #expect(try resolve(target.fingerprint.rawValue.uppercased()).get() == target)
        let prefix = try #require(
            (1...12).lazy.map { String(target.fingerprint.rawValue.prefix($0)) }.first { prefix in
                Self.controllers.filter { $0.fingerprint.rawValue.hasPrefix(prefix) }.count == 1
                    && !prefix.allSatisfy(\.isNumber)
            })
        #expect(try resolve(prefix).get() == target)
    }

    @Test func sharedPrefixIsAmbiguousAndListsTheMatches() throws {
        var controllers = Self.controllers
        controllers[0].fingerprint = Fingerprint(rawValue: "abc100000000")
        controllers[1].fingerprint = Fingerprint(rawValue: "abc200000000")
        let expected = [Fingerprint(rawValue: "abc100000000"), Fingerprint(rawValue: "abc200000000")]
        #expect(resolve("abc", in: controllers) == .failure(.ambiguousPrefix("abc", matches: expected)))
        #expect(try resolve("abc2", in: controllers).get() == controllers[1])
        let message = PadSelectionError.ambiguousPrefix("abc", matches: expected).description
        #expect(message.contains("abc100000000") && message.contains("abc200000000"))
    }

    @Test func nodePathsSelectTheirController() throws {
        #expect(try resolve("/dev/hidraw0").get() == Self.controllers[0])
        #expect(try resolve("/dev/input/event4").get() == Self.controllers[0])  // the DualSense's motion node
        #expect(try resolve("/dev/input/event15").get() == Self.controllers[2])
        #expect(resolve("/dev/input/event99") == .failure(.unknownPath("/dev/input/event99")))
    }

    @Test func noMatchAndNoControllersSayWhatToDo() {
        #expect(resolve("zzz") == .failure(.noMatch("zzz")))
        #expect(resolve("0", in: []) == .failure(.noControllers))
        for error in [PadSelectionError.noMatch("zzz"), .noControllers, .unknownPath("/dev/x"), .indexOutOfRange(4, count: 2)] {
            #expect(error.description.contains("padbridge list"), "\(error)")
        }
    }
}
