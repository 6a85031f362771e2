import CountdownConformance
import Foundation
import Testing

/// The README and the DocC articles say their examples are the code `swift test` compiles and
/// runs. Both ways: each region of a `Readme…Tests.swift` file between `// README … begins` and
/// `// README … ends` must be, line for line, the code of some document's Swift blocks, and every
/// Swift block of every document must be code of some region (comments and blank lines aside:
/// a document may explain less, or more, than the test file). The one block no test can compile,
/// a manifest's lines (`// Package.swift` first), must name products the package has.
@Suite("README snippets")
struct ReadmeSnippetTests {
    static let root = Repository.root

    /// Code lines, comments and blank lines dropped, trailing spaces trimmed.
    static func code(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            var kept = String(line)
            if let comment = kept.range(of: "//") { kept = String(kept[..<comment.lowerBound]) }
            while kept.last?.isWhitespace == true { kept.removeLast() }
            return kept.trimmingCharacters(in: .whitespaces).isEmpty ? nil : kept
        }
    }

    /// The README and every article of the DocC catalogs, relative to the package's root.
    static let documents: [String] = {
        let sources = root.appendingPathComponent("Sources").path
        let modules = (try? FileManager.default.contentsOfDirectory(atPath: sources)) ?? []
        let articles = modules.sorted().flatMap { module -> [String] in
            let catalog = "Sources/\(module)/\(module).docc"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)) ?? []
            return names.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
        }
        return ["README.md"] + articles
    }()

    /// A document's ```swift blocks, each as its raw text.
    static func swiftBlocks(_ document: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        var blocks: [String] = [], current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let block = current {
                    blocks.append(block.joined(separator: "\n"))
                    current = nil
                } else if line == "```swift" {
                    current = []
                }
                continue
            }
            current?.append(line)
        }
        return blocks
    }

    static func isManifest(_ block: String) -> Bool { block.hasPrefix("// Package.swift\n") }

    /// Every code line of a document's Swift blocks, in order (the manifest's left out).
    static func documentCode(_ document: String) throws -> [String] {
        try swiftBlocks(document).filter { !isManifest($0) }.flatMap { code($0) }
    }

    /// Where the examples are: this file's folder.
    static let folder = "Tests/CountdownTests/Readme"

    /// Every `Readme…ExampleTests.swift` beside this file.
    static let files: [String] = {
        let folder = root.appendingPathComponent(Self.folder).path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasPrefix("Readme") && $0.hasSuffix("ExampleTests.swift") }
            .map { String($0.dropLast(".swift".count)) }.sorted()
    }()

    /// The regions a test file marks, each as its code lines.
    static func regions(_ name: String) throws -> [[String]] {
        let source = try String(contentsOf: root.appendingPathComponent("\(Self.folder)/\(name).swift"), encoding: .utf8)
        var regions: [[String]] = [], current: [String]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let marker = line.trimmingCharacters(in: .whitespaces)
            if marker.hasPrefix("// README "), marker.hasSuffix(" begins") { current = []; continue }
            if marker.hasPrefix("// README "), marker.hasSuffix(" ends"), let region = current {
                regions.append(region)
                current = nil
                continue
            }
            current? += code(line)
        }
        // Compared without the indentation they share: a region inside a test's body is shown
        // at the top level.
        return regions.map { region in
            let indent = region.map { $0.prefix { $0 == " " }.count }.min() ?? 0
            return region.map { String($0.dropFirst(indent)) }
        }
    }

    static func contains(_ haystack: [String], _ needle: [String]) -> Bool {
        haystack.indices.contains { haystack[$0...].starts(with: needle) }
    }

    @Test("every file of the package the README, the articles and .ci/run name by its path exists", arguments: documents + [".ci/run"])
    func namedFilesExist(_ document: String) throws {
        let text = try Repository.text(document)
        for match in text.matches(of: /(?:Sources|Tests|Benchmarks)\/[A-Za-z0-9_+\/.-]+\.(?:swift|md)/) {
            let path = String(match.0)
            #expect(
                FileManager.default.fileExists(atPath: Repository.root.appendingPathComponent(path).path),
                "\(document) names \(path), which does not exist")
        }
    }

    @Test("the examples and the documents are found") func examplesAreFound() {
        #expect(Self.files.count >= 4, "\(Self.files)")
        #expect(Self.documents.count >= 10, "the README and the articles: \(Self.documents)")
    }

    @Test("each example is shown, as it is tested, in the README or an article", arguments: files)
    func exampleIsTheTestedCode(_ name: String) throws {
        let regions = try Self.regions(name)
        #expect(!regions.isEmpty, "\(name) marks no README region")
        let documents = try Self.documents.map(Self.documentCode)
        for region in regions {
            // Contiguous within one document: its Swift blocks, read one after another, hold the
            // region's lines with nothing between them (a region may span two blocks, as the
            // async examples do, with prose but no other code between).
            #expect(documents.contains { Self.contains($0, region) },
                    "\(name): no document shows this code as it is tested:\n\(region.joined(separator: "\n"))")
        }
    }

    @Test("every Swift block of the README and the articles is tested code", arguments: documents)
    func everyBlockIsTested(_ document: String) throws {
        let regions = try Self.files.flatMap(Self.regions)
        for block in try Self.swiftBlocks(document) where !Self.isManifest(block) {
            // Consecutive runs of the block's lines, each found in one region (a block may show
            // an import, a line from inside a test, and a type, each a region of its own).
            let lines = Self.code(block)
            var start = 0
            while start < lines.count {
                let end = (start + 1...lines.count).last { end in regions.contains { Self.contains($0, Array(lines[start..<end])) } }
                guard let end else {
                    Issue.record("\(document): a Swift block no test compiles, from `\(lines[start])` (mark it as a region of a Readme…ExampleTests file):\n\(block)")
                    break
                }
                start = end
            }
        }
    }

    @Test("a manifest's lines name products the package has")
    func manifestNamesProducts() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let products = Set(manifest.matches(of: /\.library\(name: "([^"]+)"/).map { String($0.1) })
        var named = 0
        for document in Self.documents {
            for block in try Self.swiftBlocks(document) where Self.isManifest(block) {
                for match in block.matches(of: /\.product\(name: "([^"]+)", package: "([^"]+)"\)/) {
                    named += 1
                    #expect(products.contains(String(match.1)), "\(document): no product \(match.1) in Package.swift (\(products.sorted()))")
                    #expect(match.2 == "swift-countdown", "\(document): the package is swift-countdown, not \(match.2)")
                }
            }
        }
        #expect(named >= 2, "the README shows how to depend on the products")
        #expect(products.count >= 4, "read the products of Package.swift: \(products.sorted())")
    }

    /// The suite's article lists every check by name; a check added without it fails here.
    @Test("the suite's article names every check, and no check that does not exist")
    func articleNamesEveryCheck() throws {
        let article = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/CountdownConformance/CountdownConformance.docc/RunningTheSuite.md"),
            encoding: .utf8)
        let ids = Set(CountdownConformance.checks.map(\.id))
        for id in ids.sorted() {
            #expect(article.contains("`\(id)`"), "RunningTheSuite.md does not name the check `\(id)`")
        }
        // A name in backticks that looks like a check's (a contract word, or a dotted family)
        // must be one.
        let named = Set(article.matches(of: /`((?:store|fleet|profile)\.[a-z-]+)`/).map { String($0.1) })
        #expect(named.subtracting(ids).isEmpty, "named but not checks: \(named.subtracting(ids).sorted())")
    }
}
