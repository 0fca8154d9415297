// swift-tools-version: 6.2
import PackageDescription

// An app that embeds Playhead as its users do: another package, depending on it by path, that sees
// only its public API (no `@testable`, no `package` declarations). `scripts/test.sh` runs it.
let package = Package(
    name: "Embedder",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Playhead", path: "..")
    ],
    targets: [
        .testTarget(name: "EmbedderTests", dependencies: [.product(name: "Playhead", package: "Playhead")])
    ],
    swiftLanguageModes: [.v6]
)
