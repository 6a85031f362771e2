import Foundation
import Testing

/// The README says its examples are the code `swift test` compiles and runs: each region of a
/// `Readme…Tests.swift` file between `// README … begins` and `// README … ends` must be, line
/// for line, the code of the README's Swift blocks (comments and blank lines aside: the README
/// may explain less, or more, than the test file).
@Suite("README snippets")
struct ReadmeSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Code lines, comments and blank lines dropped, trailing spaces trimmed.
    static func code(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            var kept = String(line)
            if let comment = kept.range(of: "//") { kept = String(kept[..<comment.lowerBound]) }
            while kept.last?.isWhitespace == true { kept.removeLast() }
            return kept.trimmingCharacters(in: .whitespaces).isEmpty ? nil : kept
        }
    }

    /// Every line of the README's ```swift blocks, in order.
    static func readmeCode() throws -> [String] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var lines: [String] = [], inside = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inside = !inside && line == "```swift"
                continue
            }
            if inside { lines += code(line) }
        }
        return lines
    }

    /// Every `Readme…ExampleTests.swift` beside this file.
    static let files: [String] = {
        let folder = root.appendingPathComponent("Tests/CountdownTests").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasPrefix("Readme") && $0.hasSuffix("ExampleTests.swift") }
            .map { String($0.dropLast(".swift".count)) }.sorted()
    }()

    @Test("the README's examples are found") func examplesAreFound() {
        #expect(Self.files.count >= 4, "\(Self.files)")
    }

    @Test("each example in the README is the tested code", arguments: files)
    func exampleIsTheTestedCode(_ name: String) throws {
        let source = try String(contentsOf: Self.root.appendingPathComponent("Tests/CountdownTests/\(name).swift"), encoding: .utf8)
        let readme = try Self.readmeCode()
        var regions: [[String]] = [], current: [String]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("// README "), line.hasSuffix(" begins") { current = []; continue }
            if line.hasPrefix("// README "), line.hasSuffix(" ends"), let region = current {
                regions.append(region)
                current = nil
                continue
            }
            current? += Self.code(line)
        }
        #expect(!regions.isEmpty, "\(name) marks no README region")
        for region in regions {
            // Contiguous: the README's Swift blocks, read one after another, hold the region's
            // lines with nothing between them (a region may span two blocks, as the async
            // examples do, with prose but no other code between).
            let found = readme.indices.contains { start in
                readme[start...].starts(with: region)
            }
            #expect(found, "\(name): the README does not show this code as it is tested:\n\(region.joined(separator: "\n"))")
        }
    }
}
