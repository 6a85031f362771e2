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
        // The benchmark and its backend catalogue, for a package that measures backends of its own.
        .library(name: "CountdownBenchKit", targets: ["CountdownBenchKit"]),
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
        // The benchmark: its runner, documents, reports, guide and backend catalogue, as a
        // library that a second package can run with backends of its own
        // (`BenchCommand.run(arguments:adding:)`), and that the tests import.
        .target(
            name: "CountdownBenchKit",
            dependencies: ["Countdown", "CountdownConformance", "CountdownSupport", "CountdownRedis"],
            path: "Benchmarks/CountdownBenchKit"
        ),
        // `countdown-bench`: one line over the library.
        .executableTarget(
            name: "CountdownBench",
            dependencies: ["CountdownBenchKit"],
            path: "Benchmarks/CountdownBench"
        ),
        // One test target, so that every test runs under the same DedicatedThread trait: the
        // benchmark's tests (Tests/CountdownTests/Bench) block for seconds, and on the shared
        // libdispatch pool they would starve the operation-queue backend's conformance checks.
        // It depends on the executable only so that `swift build --build-tests` builds the
        // `countdown-bench` the child-process tests start; it imports the library.
        .testTarget(
            name: "CountdownTests",
            dependencies: [
                "Countdown", "CountdownConformance", "CountdownSupport", "CountdownBenchKit", "CountdownRedis",
                "CountdownBench",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
