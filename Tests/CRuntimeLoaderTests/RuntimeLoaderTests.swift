import CRuntimeLoader
import Glibc
import Testing

/// `CRuntimeLoader_load`, the run-time load behind CSDL2Loader and CAvahiLoader, on libraries every Debian machine
/// has (libc6's libc.so.6 and libm.so.6).
struct RuntimeLoaderTests {
    /// What one load gave: its status, the struct of function pointers (as an array of slots) and the error text.
    struct Outcome {
        var status: Int32
        var functions: [UnsafeMutableRawPointer?]
        var error: String
    }

    /// Loads `libraries` and resolves `symbols` (name, library index), in order, into a struct of `slots` pointers.
    static func load(
        _ libraries: [String], _ symbols: [(name: String, library: Int)], slots: Int? = nil, errorCapacity: Int = 512
    ) -> Outcome {
        let libraryNames = libraries.map { strdup($0) }
        let symbolNames = symbols.map { strdup($0.name) }
        defer { (libraryNames + symbolNames).forEach { free($0) } }
        let pointerSize = MemoryLayout<UnsafeRawPointer>.size
        let table = symbols.indices.map { index in
            CRuntimeLoader_Symbol(
                name: UnsafePointer(symbolNames[index]), library: symbols[index].library, offset: index * pointerSize)
        }
        // Filled with a non-null pattern, so that a failed load visibly clears it.
        var functions = [UnsafeMutableRawPointer?](
            repeating: UnsafeMutableRawPointer(bitPattern: 0x5A5A), count: slots ?? symbols.count)
        var error = [CChar](repeating: 0x5A, count: errorCapacity)
        let status = functions.withUnsafeMutableBytes { functionBytes in
            error.withUnsafeMutableBufferPointer { errorBuffer in
                CRuntimeLoader_load(
                    libraryNames.map { UnsafePointer($0) }, libraries.count, table, table.count,
                    functionBytes.baseAddress, functionBytes.count, errorBuffer.baseAddress, errorBuffer.count)
            }
        }
        guard status != 0 else { return Outcome(status: status, functions: functions, error: "") }
        if errorCapacity > 0 { #expect(error.contains(0), "the error text is NUL-terminated") }
        let text = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Outcome(status: status, functions: functions, error: text)
    }

    @Test func everyFunctionResolvesFromEachOfItsLibraries() throws {
        let outcome = Self.load(["libc.so.6", "libm.so.6"], [("getpid", 0), ("cos", 1), ("strlen", 0)])
        #expect(outcome.status == 0)
        let getpid = unsafeBitCast(try #require(outcome.functions[0]), to: (@convention(c) () -> pid_t).self)
        let cos = unsafeBitCast(try #require(outcome.functions[1]), to: (@convention(c) (Double) -> Double).self)
        let strlen = unsafeBitCast(
            try #require(outcome.functions[2]), to: (@convention(c) (UnsafePointer<CChar>) -> Int).self)
        #expect(getpid() == Glibc.getpid())
        #expect(cos(0) == 1)
        #expect("padbridge".withCString { strlen($0) } == 9)
    }

    @Test func aMissingFunctionIsNamedWithItsLibrary() {
        let outcome = Self.load(["libc.so.6"], [("getpid", 0), ("padbridge_no_such_function", 0)])
        #expect(outcome.status == -1)
        // dlerror(): "<path of libc.so.6>: undefined symbol: padbridge_no_such_function"
        #expect(outcome.error.contains("libc.so.6: undefined symbol: padbridge_no_such_function"), "\(outcome.error)")
        #expect(outcome.functions.allSatisfy { $0 == nil })
    }

    @Test func aMissingLibraryIsNamedAfterTheOnesBeforeItLoaded() {
        let name = "libpadbridge-no-such-library.so.0"
        let outcome = Self.load(["libc.so.6", name], [("getpid", 0)])
        #expect(outcome.status == -1)
        #expect(outcome.error.hasPrefix(name + ": cannot open shared object file"), "\(outcome.error)")
        #expect(outcome.functions.allSatisfy { $0 == nil })
    }

    @Test func aTableThatLeavesAMemberOutOrNamesNoLibraryFails() {
        let short = Self.load(["libc.so.6"], [("getpid", 0), ("strlen", 0)], slots: 3)
        #expect(short.status == -1 && short.error == "member 2 of the function table has no symbol")
        #expect(short.functions.allSatisfy { $0 == nil })
        let twice = Self.load(["libc.so.6"], [("getpid", 0), ("getpid", 0)], slots: 2)
        #expect(twice.status == 0)  // two members may hold the same function; each is filled
        let badLibrary = Self.load(["libc.so.6"], [("getpid", 1)])
        #expect(badLibrary.status == -1)
        #expect(badLibrary.error == "getpid: no such library or member in the function table")
        let pastTheEnd = Self.load(["libc.so.6"], [("getpid", 0), ("strlen", 0)], slots: 1)
        #expect(pastTheEnd.status == -1)
        #expect(pastTheEnd.error == "strlen: no such library or member in the function table")
    }

    @Test func theErrorIsCutToItsCapacity() {
        let outcome = Self.load(["libc.so.6"], [("padbridge_no_such_function", 0)], errorCapacity: 8)
        #expect(outcome.status == -1 && outcome.error.utf8.count == 7)
        #expect(Self.load(["libc.so.6"], [("padbridge_no_such_function", 0)], errorCapacity: 0).status == -1)
    }
}
