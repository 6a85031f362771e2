import Countdown

/// The backends as the command line names them: `timestamp` selects both clocks,
/// `timestamp(wall)` one of them, `all` every one.
enum CountdownCatalog {
    static var names: [String] {
        var seen: [String] = []
        for backend in CountdownBackend.allWithOptions where !seen.contains(backend.name) { seen.append(backend.name) }
        return seen
    }

    static func select(_ name: String) throws(UsageError) -> [CountdownBackend] {
        if name == "all" { return CountdownBackend.allWithOptions }
        let backends = name.split(separator: ",").flatMap { CountdownBackend.named(String($0)) }
        guard !backends.isEmpty else {
            throw UsageError("unknown backend '\(name)'; choose from \((names + ["all"]).joined(separator: ", "))")
        }
        return backends
    }
}
