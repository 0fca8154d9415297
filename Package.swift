// swift-tools-version: 6.2
import PackageDescription

/// The library and the tool build with no warning: a new one fails the build (and CI).
let warningsAreErrors: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "Playhead",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Playhead", targets: ["Playhead"]),
        .executable(name: "playhead", targets: ["PlayheadCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // The playout channel's status endpoint (an HTTP/1 server) and its Prometheus metrics.
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
    ],
    targets: [
        // FFmpeg's headers, imported by PlayheadMedia alone.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavfilter-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])]
        ),
        // Three Linux calls Swift's Glibc module does not show (renameat2, fallocate, mallopt).
        .systemLibrary(name: "CPlayheadSystem"),
        // The media layer: the only target that imports CFFmpeg. FFmpeg's owners (the reader, the
        // decoders, the muxer, the encoders, the filter graphs, the converter) behind `package`
        // Swift APIs, and the value types every layer shares (time, geometry, errors), public.
        .target(
            name: "PlayheadMedia",
            dependencies: [
                "CFFmpeg",
                "CPlayheadSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: warningsAreErrors
        ),
        // The engine and the public API: assets, items, players, sessions, images, compositions,
        // channels and sinks, built on PlayheadMedia's owners; no C import.
        .target(
            name: "Playhead",
            dependencies: [
                "PlayheadMedia",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: warningsAreErrors
        ),
        // The command-line tool's run-folder protocol (its output folders, their ownership
        // manifests, the written-file logs, reading its outputs back): `package`, not for apps.
        .target(
            name: "PlayheadRunFolder",
            dependencies: ["Playhead", "CPlayheadSystem"],
            swiftSettings: warningsAreErrors
        ),
        .executableTarget(
            name: "PlayheadCLI",
            dependencies: [
                "Playhead",
                "PlayheadRunFolder",
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
        .testTarget(name: "PlayheadTests", dependencies: ["Playhead", "PlayheadMedia", "PlayheadRunFolder"]),
        .testTarget(name: "IntegrationTests", dependencies: ["Playhead", "PlayheadMedia", "PlayheadRunFolder", "PlayheadCLI"]),
    ],
    swiftLanguageModes: [.v6]
)
