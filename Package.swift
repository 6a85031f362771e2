// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "swift-countdown",
    // Synchronization.Mutex needs these; Linux is where the package is built and measured.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Countdown", targets: ["Countdown"]),
        .library(name: "CountdownConformance", targets: ["CountdownConformance"]),
        .executable(name: "countdown-bench", targets: ["CountdownBench"]),
    ],
    targets: [
        // What the targets share and users never see: a Mutex visible to ThreadSanitizer,
        // thread naming, Duration units. Not a product.
        .target(name: "CountdownSupport"),
        .target(name: "Countdown", dependencies: ["CountdownSupport"]),
        .target(name: "CountdownConformance", dependencies: ["Countdown", "CountdownSupport"]),
        .executableTarget(
            name: "CountdownBench",
            dependencies: ["Countdown", "CountdownConformance", "CountdownSupport"],
            path: "Benchmarks/CountdownBench"
        ),
        .testTarget(
            name: "CountdownTests",
            dependencies: ["Countdown", "CountdownConformance", "CountdownSupport"]),
        // The benchmark's measuring and reporting, tested without a release build's timings.
        .testTarget(name: "CountdownBenchTests", dependencies: ["CountdownBench", "Countdown"]),
    ],
    swiftLanguageModes: [.v6]
)
