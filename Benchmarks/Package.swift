// swift-tools-version: 6.3
// The hot-path benchmarks (ReportHotPath: DualSense reports; RemapHotPath: `padbridge remap`'s per-frame work; LinkHotPath: forwarding's per-frame work), kept apart from the main package so that building and testing padbridge never
// builds the benchmark harness. Run: `cd Benchmarks && swift package benchmark`.
import PackageDescription

import struct Foundation.URL

/// A path dependency's identity is its directory's name, which depends on where the repository was cloned.
let padbridgeIdentity = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "padbridge-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "ReportHotPath",
            dependencies: [
                .product(name: "PadCore", package: padbridgeIdentity),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/ReportHotPath",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "RemapHotPath",
            dependencies: [
                .product(name: "PadCore", package: padbridgeIdentity),
                .product(name: "PadLinux", package: padbridgeIdentity),
                .product(name: "PadProfiles", package: padbridgeIdentity),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/RemapHotPath",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .target(
            name: "LinkHarness",
            dependencies: [
                .product(name: "PadCore", package: padbridgeIdentity),
                .product(name: "PadNoise", package: padbridgeIdentity),
                .product(name: "PadNet", package: padbridgeIdentity),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/LinkHarness"
        ),
        .executableTarget(
            name: "LinkHotPath",
            dependencies: [
                "LinkHarness",
                .product(name: "PadCore", package: padbridgeIdentity),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/LinkHotPath",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // For callgrind (scripts/count-link-instructions): N frames through the same harness, no benchmark runner.
        .executableTarget(
            name: "link-frame-count",
            dependencies: ["LinkHarness", .product(name: "PadCore", package: padbridgeIdentity)],
            path: "Benchmarks/LinkFrameCount"
        ),
    ],
    swiftLanguageModes: [.v6]
)
