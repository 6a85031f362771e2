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
        // `Mutex`, made visible to ThreadSanitizer; shared by the targets, not a product.
        .target(name: "CountdownLocking"),
        .target(name: "Countdown", dependencies: ["CountdownLocking"]),
        .target(name: "CountdownConformance", dependencies: ["Countdown", "CountdownLocking"]),
        .executableTarget(
            name: "CountdownBench",
            dependencies: ["Countdown", "CountdownConformance"],
            path: "Benchmarks/CountdownBench"
        ),
        .testTarget(
            name: "CountdownTests",
            dependencies: ["Countdown", "CountdownConformance", "CountdownLocking"]),
    ],
    swiftLanguageModes: [.v6]
)
