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
        // A cache prefetch hint, which Swift does not have: one static inline C function.
        .target(name: "CountdownPrefetch"),
        .target(name: "Countdown", dependencies: ["CountdownSupport", "CountdownPrefetch"]),
        .target(name: "CountdownConformance", dependencies: ["Countdown", "CountdownSupport"]),
        .executableTarget(
            name: "CountdownBench",
            dependencies: ["Countdown", "CountdownConformance", "CountdownSupport"],
            path: "Benchmarks/CountdownBench"
        ),
        // One test target, so that every test runs under the same DedicatedThread trait: the
        // benchmark's tests (Tests/CountdownTests/Bench) block for seconds, and on the shared
        // libdispatch pool they would starve the operation-queue backend's conformance checks.
        .testTarget(
            name: "CountdownTests",
            dependencies: ["Countdown", "CountdownConformance", "CountdownSupport", "CountdownBench"]),
    ],
    swiftLanguageModes: [.v6]
)
