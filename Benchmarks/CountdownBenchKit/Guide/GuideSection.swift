/// The part of a README between the guide's two marker comments: found, compared with what
/// the guide writes (naming the first cell that differs), and replaced.
struct GuideSection {
    static let begin = "<!-- countdown-bench guide: begin. Written by `countdown-bench guide --write README.md` from results/; do not edit by hand. -->"
    static let end = "<!-- countdown-bench guide: end -->"

    /// The lines before the section with its begin marker, the section's own, and the end
    /// marker with every line after it.
    let head: [Substring]
    let body: [Substring]
    let tail: [Substring]

    /// Throws unless `text` has each marker once, on a line of its own, begin before end.
    init(of text: String, file: String) throws(GuideError) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let begins = lines.indices.filter { lines[$0] == Self.begin }
        let ends = lines.indices.filter { lines[$0] == Self.end }
        guard begins.count == 1, ends.count == 1, let b = begins.first, let e = ends.first, b < e else {
            throw GuideError(
                "\(file) needs the guide's markers, each once on a line of its own, begin before end: \(Self.begin) … \(Self.end)")
        }
        head = Array(lines[...b])
        body = Array(lines[(b + 1)..<e])
        tail = Array(lines[e...])
    }

    /// `text` as it is when it has a marker; else with both appended, under a heading: a
    /// machine's README, which `run` writes, gets its full guide at its end.
    static func withMarkers(_ text: String) -> String {
        guard !text.contains(begin), !text.contains(end) else { return text }
        return text + (text.hasSuffix("\n") ? "" : "\n") + "\n## The guide's full cells\n\n\(begin)\n\(end)\n"
    }

    /// The README with `markdown` between the markers.
    func replaced(by markdown: String) -> String {
        var lines = head.map(String.init)
        lines += markdown.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        lines += tail.map(String.init)
        return lines.joined(separator: "\n")
    }

    /// Nil when the section is exactly `expected`; else where and how it first differs: the
    /// README's line number, and for a table line the row and the column.
    func firstDifference(from expected: [GuideMarkdown.Line], columns: [String], file: String) -> String? {
        let firstLine = head.count + 1
        for index in 0..<max(body.count, expected.count) {
            let have = index < body.count ? String(body[index]) : nil
            let want = index < expected.count ? expected[index] : nil
            if have == want?.text { continue }
            let location = "\(file):\(firstLine + index)"
            guard let want else {
                return "\(location): the README's guide goes on where the guide ends:\n  README: \(have ?? "")"
            }
            guard let have else {
                return "\(location): the README's guide ends where the guide goes on:\n  results: \(want.text)"
            }
            switch want.place {
            case .tableRow(let title, let cells):
                let found = GuideMarkdown.cells(of: have)
                guard found.first == title else {
                    return "\(location): the guide's row \"\(title)\" is not here:\n  README:  \(have)\n  results: \(want.text)"
                }
                let haveCells = Array(found.dropFirst())
                for (index, (column, wanted)) in zip(columns, cells).enumerated()
                where index >= haveCells.count || haveCells[index] != wanted {
                    let had = index < haveCells.count ? haveCells[index] : "(no such cell)"
                    return "\(location): row \"\(title)\", column `\(column)` differs from the results:\n  README:  \(had)\n  results: \(wanted)"
                }
                return "\(location): row \"\(title)\" has cells the guide does not write:\n  README:  \(have)\n  results: \(want.text)"
            case .statement(let title):
                return "\(location): the statement \"\(title)\" differs from the results:\n  README:  \(have)\n  results: \(want.text)"
            case .prose:
                return "\(location): differs from the guide:\n  README:  \(have)\n  results: \(want.text)"
            }
        }
        return nil
    }
}
