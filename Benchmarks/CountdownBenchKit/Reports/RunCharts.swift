/// The run's SVG charts: p99 tick lateness against N per start pattern (the floor dashed), and
/// CPU against N, one line per backend.
struct RunCharts {
    let document: RunDocument

    /// File name → SVG.
    var files: [(String, String)] {
        document.options.starts.map { ("lateness-\($0.rawValue).svg", lateness($0).svg()) } + [("cpu.svg", cpu.svg()), ("cpu-per-event.svg", cpuPerEvent.svg())]
    }

    func lateness(_ pattern: StartPattern) -> LogChart {
        var chart = LogChart(
            title: "p99 tick lateness, \(pattern == .spread ? "starts spread over a tick" : "all started at once"), tick \(ReportFormat.milliseconds(document.options.tickMs))",
            xLabel: "concurrent countdowns N", yLabel: "p99 tick lateness", series: series(pattern, .tickP99))
        chart.yText = { ReportFormat.decade(milliseconds: $0) }
        if let floor = document.floor.summary.p99 {
            chart.reference = ("floor p99 alone (\(ReportFormat.milliseconds(floor)))", floor)
        }
        return chart
    }

    var cpu: LogChart {
        var chart = LogChart(
            title: "CPU while counting down, starts spread, tick \(ReportFormat.milliseconds(document.options.tickMs))",
            xLabel: "concurrent countdowns N", yLabel: "CPU, % of one core", series: series(.spread, .cpu))
        chart.yText = { String(format: "%g %%", $0) }
        return chart
    }

    var cpuPerEvent: LogChart {
        var chart = LogChart(
            title: "CPU per delivered event, steady state, starts spread, tick \(ReportFormat.milliseconds(document.options.tickMs))",
            xLabel: "concurrent countdowns N", yLabel: "CPU per event", series: series(.spread, .cpuPerEvent))
        chart.yText = { ReportFormat.decade(milliseconds: $0 / 1000) }
        return chart
    }

    private func series(_ pattern: StartPattern, _ figure: Figure) -> [LogChart.Series] {
        document.options.backends.map { backend in
            LogChart.Series(name: backend, points: document.configurations
                .filter { $0.backend == backend && $0.starts == pattern }
                .sorted { $0.count < $1.count }
                .compactMap { c in
                    // A percentile its samples do not resolve is not drawn.
                    c[figure].flatMap { v in
                        v.isResolved ? LogChart.Point(x: Double(c.count), y: v.value, isLowerBound: v.isLowerBound) : nil
                    }
                })
        }
    }
}
