/// A plain-text table: columns padded to their widest cell, a rule under the header.
struct TextTable {
    let columns: [String]
    private var rows: [[String]] = []

    init(columns: [String]) { self.columns = columns }

    mutating func add(_ row: [String]) {
        precondition(row.count == columns.count, "a row of \(row.count) cells for \(columns.count) columns")
        rows.append(row)
    }

    func render() -> String {
        let widths = columns.indices.map { column in
            ([columns[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingTrailingSpaces() + "\n"
        }
        return line(columns) + line(widths.map { String(repeating: "-", count: $0) }) + rows.map(line).joined()
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
