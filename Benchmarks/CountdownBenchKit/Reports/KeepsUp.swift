/// Where a backend stops keeping up in a run: the largest N at which, with starts spread over a
/// tick, it delivered 99 % of its ticks within one 60 Hz frame of their ideal time and finished
/// every countdown within the limit, every smaller N having done so too; and the N after it.
/// The run's README and the guide both say it, from this one rule.
struct KeepsUp {
    /// One frame at 60 Hz: a label updated later than this is visibly late.
    static let frameMs = 1000.0 / 60

    /// The largest N that kept up, nil when not even the smallest did.
    let best: RunDocument.Configuration?
    /// The first N measured above `best` (the smallest, when none kept up), nil when `best` is
    /// the largest measured.
    let next: RunDocument.Configuration?

    /// Nil when the run has no spread configuration of `backend`.
    init?(_ backend: String, in document: RunDocument) {
        let rows = document.configurations.filter { $0.backend == backend && $0.starts == .spread }.sorted { $0.count < $1.count }
        guard !rows.isEmpty else { return nil }
        var best: RunDocument.Configuration?
        for c in rows {
            guard Self.keptUp(c) else { break }
            best = c
        }
        self.best = best
        next = rows.first { $0.count > (best?.count ?? 0) }
    }

    static func keptUp(_ c: RunDocument.Configuration) -> Bool {
        guard let p99 = c[.tickP99], p99.isResolved, !p99.isLowerBound else { return false }
        return c.outcome.isComplete && p99.value <= frameMs
    }
}
