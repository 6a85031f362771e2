// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "swift-countdown",
    // Synchronization.Mutex needs these; Linux is where the package is built and measured.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Countdown", targets: ["Countdown"]),
        .executable(name: "countdown-bench", targets: ["CountdownBench"]),
    ],
    targets: [
        .target(name: "Countdown"),
        .executableTarget(
            name: "CountdownBench",
            dependencies: ["Countdown"],
            path: "Benchmarks/CountdownBench"
        ),
        .testTarget(name: "CountdownTests", dependencies: ["Countdown"]),
    ],
    swiftLanguageModes: [.v6]
)
