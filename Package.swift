// swift-tools-version: 6.2
import PackageDescription

/// The library and the tool build with no warning: a new one fails the build (and CI).
let warningsAreErrors: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "Playhead",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Playhead", targets: ["Playhead"]),
        .executable(name: "playhead", targets: ["playhead"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // The playout channel's status endpoint (an HTTP/1 server) and its Prometheus metrics.
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        // `swift package generate-documentation`: the DocC catalog, built in CI.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavfilter-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])]
        ),
        .target(
            name: "Playhead",
            dependencies: [
                "CFFmpeg",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: warningsAreErrors
        ),
        .executableTarget(
            name: "playhead",
            dependencies: [
                "Playhead",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: warningsAreErrors
        ),
        // A libFuzzer target with -sanitize=fuzzer -DPLAYHEAD_FUZZ (scripts/reliability.sh libfuzzer);
        // otherwise a replayer of input files.
        .executableTarget(name: "PlayheadFuzz", dependencies: ["Playhead"]),
        // In-process measurements for benchmarks/ (seek latency); not a product.
        .executableTarget(name: "PlayheadBench", dependencies: ["Playhead"]),
        .testTarget(name: "PlayheadTests", dependencies: ["Playhead"]),
        .testTarget(name: "IntegrationTests", dependencies: ["Playhead", "playhead"]),
    ],
    swiftLanguageModes: [.v6]
)
