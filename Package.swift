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
        // The fleet strategies (countdowns kept in Redis). Empty unless built with the Redis
        // trait: `swift build --traits Redis` (hiredis installed: Debian libhiredis-dev,
        // Homebrew hiredis).
        .library(name: "CountdownRedis", targets: ["CountdownRedis"]),
    ],
    traits: [
        .trait(
            name: "Redis",
            description: "The Redis strategies for a fleet of servers, through hiredis (libhiredis-dev / brew hiredis)"),
        .default(enabledTraits: []),
    ],
    targets: [
        // What the targets share and users never see: a Mutex visible to ThreadSanitizer,
        // thread naming, Duration units. Not a product.
        .target(name: "CountdownSupport"),
        // A cache prefetch hint, which Swift does not have: one static inline C function.
        .target(name: "CountdownPrefetch"),
        .target(name: "Countdown", dependencies: ["CountdownSupport", "CountdownPrefetch"]),
        .target(name: "CountdownConformance", dependencies: ["Countdown", "CountdownSupport"]),
        // Redis' own C client, from the system's package manager; only with the Redis trait.
        .systemLibrary(
            name: "CHiredis", pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"]), .brew(["hiredis"])]),
        // Its code is inside `#if Redis`: without the trait the module is empty and nothing
        // needs hiredis.
        .target(
            name: "CountdownRedis",
            dependencies: [
                "Countdown", "CountdownSupport",
                .target(name: "CHiredis", condition: .when(traits: ["Redis"])),
            ]),
        .executableTarget(
            name: "CountdownBench",
            dependencies: ["Countdown", "CountdownConformance", "CountdownSupport", "CountdownRedis"],
            path: "Benchmarks/CountdownBench"
        ),
        // One test target, so that every test runs under the same DedicatedThread trait: the
        // benchmark's tests (Tests/CountdownTests/Bench) block for seconds, and on the shared
        // libdispatch pool they would starve the operation-queue backend's conformance checks.
        .testTarget(
            name: "CountdownTests",
            dependencies: ["Countdown", "CountdownConformance", "CountdownSupport", "CountdownBench", "CountdownRedis"]),
    ],
    swiftLanguageModes: [.v6]
)
