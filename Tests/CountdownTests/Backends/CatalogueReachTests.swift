import Foundation
import Testing

@testable import Countdown
@testable import CountdownBenchKit

/// A backend added to the benchmark's catalogue reaches every place that shows or judges the
/// backends without an edit by hand there, or a test here fails and names the place: the
/// README's guide, CI's stages, the listing, the declared profiles `BackendTests` expects.
@Suite("The catalogue's reach")
struct CatalogueReachTests {
    /// Every in-process backend the benchmark measures and the suite judges.
    static let catalogue = CountdownBackend.allWithVariants.map(\.description)

    @Test("every backend of the catalogue is a column of the guide, and of the README's guide table")
    func guideColumns() throws {
        let readme = try Repository.text("README.md")
        for name in Self.catalogue {
            #expect(
                GuideBuilder.columns.contains(name),
                "GuideBuilder.columns has no column for \(name): add it where the README recommends it")
            #expect(
                readme.contains("| `\(name)` |"),
                "README.md's guide table has no column for \(name): run countdown-bench guide --write README.md with the release build")
        }
        let unknown = GuideBuilder.columns.filter { !Self.catalogue.contains($0) }
        #expect(unknown.isEmpty, "GuideBuilder.columns names backends the catalogue does not have: \(unknown)")
    }

    @Test("CI judges and measures the catalogue's default selection, and names no backend the catalogue does not have")
    func ciStages() throws {
        let ci = try Repository.text(".ci/run")
        // Without `--backend`, each of these takes `all`: every backend of the catalogue.
        for command in [
            "countdown-bench conformance --no-progress", "countdown-bench suspend --no-progress",
            "countdown-bench run --quick --no-progress",
        ] {
            #expect(ci.contains(command), ".ci/run no longer runs `\(command)`: a new backend would not reach CI there")
        }
        let all = try CountdownBackend.select("all").map(\.description)
        for name in Self.catalogue { #expect(all.contains(name), "`--backend all` leaves out \(name)") }
        // A backend spelled out in a stage must exist: a renamed one would leave the stage
        // judging nothing.
        let known = Set(Self.catalogue + CountdownBackend.fleet.map(\.description) + ["virtual"])
        for match in ci.matches(of: /--backend '?([a-z-]+\([a-z~0-9+-]*\)|[a-z-]+)'?/) {
            let name = String(match.1)
            #expect(
                known.contains(name) || !CountdownBackend.named(name).isEmpty || name == "redis"
                    // Built without the Redis trait, the fleet strategies are not in the catalogue.
                    || (CountdownBackend.fleet.isEmpty && name.hasPrefix("redis(")),
                ".ci/run names the backend \(name), which the catalogue does not have")
        }
    }

    @Test("every fleet strategy has its conformance stage in CI", .enabled(if: !CountdownBackend.fleet.isEmpty, "built without the Redis trait"))
    func fleetStrategiesReachRedisStages() throws {
        let ci = try Repository.text(".ci/run")
        for name in CountdownBackend.fleet.map(\.description) {
            #expect(
                ci.contains("countdown-bench conformance --backend '\(name)'"),
                ".ci/run has no conformance stage for \(name): add one beside redis(zset)'s")
        }
    }

    @Test("countdown-bench list shows every backend of the catalogue and every fleet strategy")
    func listing() throws {
        var output = StandardStreams(capturing: true)
        #expect(try ListCommand(arguments: []).run(&output) == 0)
        for name in Self.catalogue + CountdownBackend.fleet.map(\.description) + ["virtual"] {
            #expect((output.captured ?? "").contains(name), "countdown-bench list does not show \(name)")
        }
    }
}
