/// The charts the guide draws from each machine's files, written beside them in its folder and
/// embedded in the README: lateness against N at 10 ms ticks (the default run), and CPU per
/// event against N at one tick a second up to a million (`tick-1s`, `task` from its own process).
struct GuideCharts {
    let library: ResultsLibrary

    struct Chart: Equatable {
        /// Relative to the results folder: `amd-epyc-2-cores/guide-lateness.svg`.
        let path: String
        let title: String
        let svg: String
    }

    /// Every machine's charts; those of the first machine are the README's.
    var charts: [Chart] { library.machines.flatMap(charts(of:)) }

    func charts(of m: MachineResults) -> [Chart] {
        var charts: [Chart] = []
        if let run = m.runs[GuideBuilder.defaultRun] {
            let chart = RunCharts(document: run).lateness(.spread)
            charts.append(Chart(path: "\(m.folder)/guide-lateness.svg", title: chart.title, svg: chart.svg()))
        }
        let tickSecond = [GuideBuilder.tickSecond, GuideBuilder.tickSecondTask].compactMap { m.runs[$0] }
        if !tickSecond.isEmpty {
            let series = GuideBuilder.columns.compactMap { backend -> LogChart.Series? in
                let points = tickSecond.flatMap(\.configurations)
                    .filter { $0.backend == backend && $0.starts == .spread }
                    .sorted { $0.count < $1.count }
                    .compactMap { c in c[.cpuPerEvent].flatMap { v in v.isResolved ? LogChart.Point(x: Double(c.count), y: v.value, isLowerBound: v.isLowerBound) : nil } }
                return points.isEmpty ? nil : LogChart.Series(name: backend, points: points)
            }
            var chart = LogChart(title: "CPU per delivered event, one tick a second, starts spread",
                                 xLabel: "concurrent countdowns N", yLabel: "CPU per event", series: series)
            chart.yText = { ReportFormat.decade(milliseconds: $0 / 1000) }
            charts.append(Chart(path: "\(m.folder)/guide-cpu-per-event.svg", title: chart.title, svg: chart.svg()))
        }
        return charts
    }
}
