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
