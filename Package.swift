// swift-tools-version: 6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The targets on the per-event path (read, assemble, remap, encode, write): in release builds, no run-time
/// exclusivity checks. Those checks cost about 1,300 instructions per forwarded frame in `padbridge remap` (13
/// accesses to loop-confined class state, counted with callgrind), a third of its user-space work per frame. Debug
/// builds, which every test runs, keep them, so an overlapping access still traps there.
/// The modules a forwarded frame passes through. Cross-module optimization lets PadNet's and PadLinux's calls into
/// PadCore's generic codecs (the byte reader over a datagram's buffer) be specialized: without it every byte read
/// went through protocol witnesses and generic metadata lookups (callgrind: ~20 % of a frame's instructions).
let hotPathSwift: [SwiftSetting] = strictSwift + [
    .unsafeFlags(["-enforce-exclusivity=unchecked", "-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "padbridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "padbridge", targets: ["padbridge"]),
        .library(name: "PadCore", targets: ["PadCore"]),
        .library(name: "PadLinux", targets: ["PadLinux"]),
        .library(name: "PadProfiles", targets: ["PadProfiles"]),
        .library(name: "PadNoise", targets: ["PadNoise"]),
        .library(name: "PadNet", targets: ["PadNet"]),
        .library(name: "PadNetLinux", targets: ["PadNetLinux"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-numerics", from: "1.1.1"),
        // The web console's HTTP and WebSocket server (`padbridge console`): SwiftNIO's HTTP/1.1 and WebSocket
        // handlers, which take nothing from Foundation (scripts/build-release links none of it but
        // FoundationEssentials). Not Hummingbird 2 (164 s for a clean debug build here, against NIO's 68 s), nor
        // FlyingFox (21 s, but it needs Foundation and FoundationNetworking with libcurl).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // Pure core: the model, snapshot diff, report codecs, trigger effects, the network link's wire codec and
        // reliability state machines, the remap engine. The standard library, and swift-numerics' elementary
        // functions (pure Swift: the gyro mouse's and flick stick's trigonometry).
        .target(
            name: "PadCore", dependencies: [.product(name: "RealModule", package: "swift-numerics")],
            swiftSettings: hotPathSwift),

        // C shim: ioctl request values and the kernel's UAPI struct layouts (the CNIOLinux pattern).
        .target(name: "CPadLinux"),
        .systemLibrary(name: "CLibEvdev", pkgConfig: "libevdev", providers: [.apt(["libevdev-dev"])]),
        .systemLibrary(name: "CLibUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        // libsodium's ChaCha20-Poly1305 (IETF) for the link's transport datagrams: sealed and opened in place, no
        // allocation and no key set-up per datagram (swift-crypto's ChaChaPoly makes a BoringSSL context and about
        // 16 allocations per call; docs/benchmarks.md, "Forwarding benchmark", has the measurement). Handshakes stay on swift-crypto.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // C: a library dlopen()ed at run time and a table of its functions resolved (dlsym), for the two shims below.
        .target(name: "CRuntimeLoader"),
        // C shim: libSDL2 dlopen()ed at run time, only when padbridge wants SDL's view of the pads (see PadSDL).
        // Not a `.systemLibrary(pkgConfig: "sdl2")`: SwiftPM appends pkg-config's `-lSDL2` to the executable's link.
        // Its header (SDL's types and prototypes) comes from Debian's libsdl2-dev, which scripts/deps installs.
        .target(name: "CSDL2Loader", dependencies: ["CRuntimeLoader"]),
        // C shim: Avahi's client library dlopen()ed at run time (DNS-SD), so padbridge runs where Avahi is not installed.
        // Its headers come from Debian's libavahi-client-dev, which scripts/deps installs.
        .target(name: "CAvahiLoader", dependencies: ["CRuntimeLoader"]),
        // monitor --view's few ncurses calls (Debian's libncurses-dev, which scripts/deps installs), as functions.
        .target(name: "CTerminalView", linkerSettings: [.linkedLibrary("ncursesw")]),

        // Linux adapter: uinput, uhid, evdev/hidraw owners and the epoll device loop.
        .target(
            name: "PadLinux",
            dependencies: [
                "PadCore", "CPadLinux", "CLibUdev", "CLibEvdev",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                // Its pthread lock, not Synchronization.Mutex: ThreadSanitizer cannot see Mutex's contended path (the
                // kernel hands the lock over, FUTEX_LOCK_PI), and reports races that are none (docs/design.md).
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: hotPathSwift
        ),

        // SDL2 adapter: SDL's game-controller view (GUIDs, database mappings) of the connected pads.
        .target(name: "PadSDL", dependencies: ["PadCore", "CSDL2Loader"], swiftSettings: strictSwift),

        // Sessions: a physical pad as a source of frames (read, assemble, profile, feedback in), a virtual pad standing
        // for one (apply, neutral, linger, feedback out), the in-process remap bridge joining them, the pad catalog,
        // and how commands settle hotplug bursts and shut down. What `remap` joins in-process and forwarding joins
        // through the network.
        .target(
            name: "PadSessions",
            dependencies: ["PadCore", "PadLinux", "PadSDL", .product(name: "Logging", package: "swift-log")],
            swiftSettings: hotPathSwift
        ),

        // DNS-SD adapter: `serve`'s announcement and the browser behind `hosts`, through avahi-daemon, run on the event
        // loop (Avahi's poll API mapped onto it).
        .target(
            name: "PadDNSSD",
            dependencies: [
                "PadCore", "PadLinux", "CAvahiLoader",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),

        // JSON lines: the text form of pad events and feedback that `virtual` reads and `monitor --json` prints.
        .target(name: "PadJSONLines", dependencies: ["PadCore"], swiftSettings: strictSwift),

        // Remap profiles: TOML text into a validated `RemapProfile`, with the key and line of every mistake.
        .target(
            name: "PadProfiles",
            dependencies: ["PadCore", "CLibEvdev", .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: strictSwift
        ),

        // The Noise protocol framework (handshakes and transport keys) over swift-crypto's Curve25519, ChaCha20-Poly1305
        // and SHA-256: the secure channel under padbridge's network link. No I/O.
        .target(
            name: "PadNoise", dependencies: ["CSodium", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: hotPathSwift),

        // The network link: the session layer over Noise, pairing, the forwarding host and client (their state machines
        // over small ports: datagrams, a wake-up timer, clocks, paired clients, the pads at each end), the control
        // socket's messages and socket addresses. No Linux adapter, no sessions: PadNetLinux fills the ports.
        // (swift-system for the errno values socket errors carry.)
        .target(
            name: "PadNet",
            dependencies: [
                "PadCore", "PadNoise",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: hotPathSwift
        ),

        // PadNet's ports filled on Linux, and the services the commands run: the UDP socket on the device loop, the
        // key and trust files, PadSessions' pads as the link's pads, and `serve` (HostService), `connect`
        // (ClientService) and `pair` (PairingClient).
        .target(
            name: "PadNetLinux",
            dependencies: [
                "PadNet", "PadCore", "PadNoise", "PadLinux", "PadSessions", "CPadLinux",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: hotPathSwift
        ),

        // The web console (`padbridge console`): a page and a WebSocket over a serve's control socket, behind a token.
        // A separate process from serve: it only talks to serve's control socket.
        .target(
            name: "PadConsole",
            dependencies: [
                "PadNet", "PadNetLinux", "PadLinux", "PadCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),

        .executableTarget(
            name: "padbridge",
            dependencies: [
                "PadCore", "PadLinux", "PadSDL", "PadSessions", "PadNet", "PadNetLinux", "PadJSONLines", "PadProfiles", "PadDNSSD", "PadConsole",
                "CTerminalView",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: hotPathSwift
        ),

        // Seeded randomness and random pad data shared by the test targets.
        .target(name: "PadTestSupport", dependencies: ["PadCore"], path: "Tests/PadTestSupport", swiftSettings: strictSwift),
        // A watchdog that bounds a test's event loop, for the test targets that run one.
        .target(
            name: "PadLinuxTestSupport", dependencies: ["PadLinux"], path: "Tests/PadLinuxTestSupport",
            swiftSettings: strictSwift),
        .testTarget(
            name: "PadCoreTests", dependencies: ["PadCore", "PadTestSupport"],
            // Read from the source tree by RecordedUdevTests (recorded on a real kernel by record.sh).
            exclude: ["Discovery/Recorded"], swiftSettings: strictSwift),
        .testTarget(
            name: "PadJSONLinesTests", dependencies: ["PadJSONLines", "PadCore", "PadTestSupport"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "PadProfilesTests", dependencies: ["PadProfiles", "PadCore", "PadTestSupport"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "PadNetTests", dependencies: ["PadNet", "PadNetLinux", "PadSessions", "PadCore", "PadLinux", "PadNoise", "PadTestSupport", "PadLinuxTestSupport", .product(name: "Crypto", package: "swift-crypto")], swiftSettings: strictSwift),
        .testTarget(name: "PadNoiseTests", dependencies: ["PadNoise", "PadTestSupport"], swiftSettings: strictSwift),
        .testTarget(
            name: "PadSessionsTests",
            dependencies: [
                "PadSessions", "PadLinux", "PadCore", "PadSDL", "PadLinuxTestSupport", "PadTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "PadDNSSDTests", dependencies: ["PadDNSSD", "PadLinux", "CAvahiLoader", "PadLinuxTestSupport"],
            swiftSettings: strictSwift),
        .testTarget(name: "PadSDLTests", dependencies: ["PadSDL"], swiftSettings: strictSwift),
        .testTarget(name: "CRuntimeLoaderTests", dependencies: ["CRuntimeLoader"], swiftSettings: strictSwift),
        .testTarget(
            name: "PadConsoleTests",
            dependencies: [
                "PadConsole", "PadNet", "PadNetLinux", "PadCore",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ], swiftSettings: strictSwift),
        .testTarget(
            name: "PadLinuxTests",
            dependencies: [
                "PadLinux", "PadCore", "CPadLinux", "PadTestSupport", "PadLinuxTestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ], swiftSettings: strictSwift),
    ],
    swiftLanguageModes: [.v6]
)

// scripts/fuzz's second harness: the network path's handshake decoders under libFuzzer. Declared only when
// PADBRIDGE_FUZZ is set, as it links only with -sanitize=fuzzer (libFuzzer supplies main).
if Context.environment["PADBRIDGE_FUZZ"] != nil {
    package.targets.append(
        .executableTarget(
            name: "padbridge-link-fuzzer",
            dependencies: ["PadNet", "PadCore", "PadNoise", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/Fuzz/Net", swiftSettings: strictSwift))
}
