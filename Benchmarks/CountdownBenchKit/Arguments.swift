/// A subcommand's options, read one flag at a time: `--name value` or `--name=value`.
struct Arguments {
    private var remaining: [String]
    let subcommand: String

    init(_ arguments: [String], subcommand: String) {
        self.remaining = arguments
        self.subcommand = subcommand
    }

    /// Removes `--flag` (or one of its aliases); true if it was there.
    mutating func flag(_ names: String...) -> Bool {
        guard let index = remaining.firstIndex(where: names.contains) else { return false }
        remaining.remove(at: index)
        return true
    }

    /// Removes `--name value` or `--name=value` and returns the value.
    mutating func value(_ name: String) throws(UsageError) -> String? {
        if let index = remaining.firstIndex(of: name) {
            guard index + 1 < remaining.count, !remaining[index + 1].hasPrefix("--") else {
                throw UsageError("\(name) needs a value")
            }
            let value = remaining[index + 1]
            remaining.removeSubrange(index...index + 1)
            return value
        }
        if let index = remaining.firstIndex(where: { $0.hasPrefix(name + "=") }) {
            let value = String(remaining[index].dropFirst(name.count + 1))
            remaining.remove(at: index)
            guard !value.isEmpty else { throw UsageError("\(name) needs a value") }
            return value
        }
        return nil
    }

    /// Removes `--name value` and checks it is one of `choices`.
    mutating func choice(_ name: String, in choices: [String]) throws(UsageError) -> String? {
        guard let value = try value(name) else { return nil }
        guard choices.contains(value) else {
            throw UsageError("\(name) must be one of \(choices.joined(separator: ", ")), not '\(value)'")
        }
        return value
    }

    /// Removes `--name N` and checks that N is a whole number in `range`.
    mutating func wholeNumber(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = try value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            let bounds = range.upperBound == .max ? "of at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
            throw UsageError("\(name) must be a whole number \(bounds), not '\(text)'")
        }
        return number
    }

    /// Removes `--name DURATION`: `200ms`, `1s`, `1.5s`, `500us`, positive, with its unit, at most an hour.
    mutating func duration(_ name: String) throws(UsageError) -> Duration? {
        guard let text = try value(name) else { return nil }
        let units: [(String, Double)] = [("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("s", 1), ("m", 60)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let number = Double(text.dropLast(suffix.count)), number.isFinite, number > 0, number * scale <= 3600 {
                return .nanoseconds(Int64((number * scale * 1e9).rounded()))
            }
            break
        }
        throw UsageError("\(name) takes a positive duration with a unit (200ms, 1s, 500us), not '\(text)'")
    }

    /// Removes and returns the arguments that are not options (not starting with `-`).
    mutating func positionals() -> [String] {
        let found = remaining.filter { !$0.hasPrefix("-") || $0 == "-" }
        remaining.removeAll { !$0.hasPrefix("-") || $0 == "-" }
        return found
    }

    /// Throws if anything was not understood.
    func finish() throws(UsageError) {
        if let first = remaining.first {
            throw UsageError("\(subcommand): unexpected argument '\(first)' (try \(subcommand) --help)")
        }
    }
}
