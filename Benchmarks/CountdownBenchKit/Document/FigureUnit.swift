/// The unit a figure is kept in. Renderers decide how to write it; measuring never does.
enum FigureUnit: String, Codable, Sendable, CaseIterable {
    case milliseconds = "ms"
    case microseconds = "us"
    case percent = "%"
    /// CPU time over wall time, 100 = one core busy.
    case percentOfCore = "% of a core"
    case bytes = "B"
    /// One figure over another.
    case ratio = "x"
    case perSecond = "/s"
    case count = ""
}
