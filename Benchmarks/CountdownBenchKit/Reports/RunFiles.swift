import Foundation

/// Everything `run --output` and `report --output` write into a folder, made from the document
/// alone: run.json, run.csv, README.md, the SVG charts, the .hgrm distributions and
/// benchmark-action.json. Other files already in the folder are listed in its README as they are.
struct RunFiles {
    let document: RunDocument

    /// File name (relative to the folder) → content, README.md last.
    func files(besides existing: [Neighbour]) throws -> [(String, String)] {
        var files: [(String, String)] = [
            ("run.json", try RunDocumentFile.encode(document)),
            ("run.csv", CSVRunReport(document: document).render()),
            ("benchmark-action.json", try BenchmarkActionExport(document: document).render()),
        ]
        files += RunCharts(document: document).files
        for c in document.configurations {
            guard let histogram = c.histograms?.tickLateness, !histogram.isEmpty else { continue }
            files.append(("hgrm/" + HgrmExport.fileName(for: c), HgrmExport(histogram: histogram).render()))
        }
        let ours = Set(files.map { String($0.0.split(separator: "/").first!) } + ["README.md"])
        let others = existing.filter { !ours.contains($0.name) }.map(\.markdown)
        files.append(("README.md", MarkdownRunReport(document: document, neighbours: others).render()))
        return files
    }

    /// A file or folder found in the output folder.
    struct Neighbour {
        let name: String
        let isFolderWithReadme: Bool

        var markdown: String {
            isFolderWithReadme ? "[\(name)/](\(name)/README.md): presented in its own README.md" : "[\(name)](\(name))"
        }
    }

    static func neighbours(in directory: URL) -> [Neighbour] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { name in
            let readme = directory.appendingPathComponent(name).appendingPathComponent("README.md").path
            return Neighbour(name: name, isFolderWithReadme: FileManager.default.fileExists(atPath: readme))
        }
    }

    /// Writes every file into `directory` (each atomically), and returns their names.
    func write(to directory: String) throws -> [String] {
        let url = URL(fileURLWithPath: directory)
        let files = try files(besides: Self.neighbours(in: url))
        try FileManager.default.createDirectory(at: url.appendingPathComponent("hgrm"), withIntermediateDirectories: true)
        for (name, content) in files {
            var content = content
            // A machine's README carries the guide's full cells (`countdown-bench guide`): kept
            // as they were, for the guide to write again from the new files.
            if name == "README.md", let old = try? String(contentsOf: url.appendingPathComponent(name), encoding: .utf8),
               let kept = try? GuideSection(of: old, file: name) {
                content = try GuideSection(of: GuideSection.withMarkers(content), file: name)
                    .replaced(by: kept.body.map { $0 + "\n" }.joined())
            }
            try content.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return files.map(\.0)
    }
}
