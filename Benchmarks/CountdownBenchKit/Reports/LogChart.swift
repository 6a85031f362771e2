import Foundation

/// A line chart on log–log axes, drawn as SVG by hand (no dependency): one line per series,
/// hollow markers for lower bounds, an optional dashed reference line (the floor).
struct LogChart {
    struct Point {
        let x: Double
        let y: Double
        let isLowerBound: Bool
    }

    struct Series {
        let name: String
        let points: [Point]
    }

    let title: String
    let xLabel: String
    let yLabel: String
    var series: [Series]
    var reference: (label: String, y: Double)?
    /// How a value on the y axis is written at a grid line.
    var yText: (Double) -> String = { ReportFormat.significant($0) }

    private static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]
    private let width = 760.0, height = 440.0
    private let left = 78.0, right = 200.0, top = 44.0, bottom = 56.0

    func svg() -> String {
        let points = series.flatMap(\.points).filter { $0.x > 0 && $0.y > 0 }
        let ys = points.map(\.y) + (reference.map { [$0.y] } ?? [])
        guard let minX = points.map(\.x).min(), let maxX = points.map(\.x).max(),
              let minY = ys.min(), let maxY = ys.max()
        else { return emptyChart() }
        let x0 = Foundation.floor(log10(minX)), x1 = max(Foundation.ceil(log10(maxX)), x0 + 1)
        let y0 = Foundation.floor(log10(minY)), y1 = max(Foundation.ceil(log10(maxY)), y0 + 1)
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        func px(_ x: Double) -> Double { left + (log10(x) - x0) / (x1 - x0) * plotWidth }
        func py(_ y: Double) -> Double { top + plotHeight - (log10(y) - y0) / (y1 - y0) * plotHeight }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="24" font-size="15" font-weight="bold">\(escape(title))</text>

            """
        for decade in stride(from: x0, through: x1, by: 1) {
            let x = px(pow(10, decade))
            svg += line(x, top, x, top + plotHeight, stroke: "#ddd")
            svg += text(ReportFormat.count(Int(pow(10, decade))), x: x, y: top + plotHeight + 18, anchor: "middle")
        }
        for decade in stride(from: y0, through: y1, by: 1) {
            let y = py(pow(10, decade))
            svg += line(left, y, left + plotWidth, y, stroke: "#ddd")
            svg += text(yText(pow(10, decade)), x: left - 6, y: y + 4, anchor: "end")
        }
        svg += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(plotWidth)\" height=\"\(plotHeight)\" fill=\"none\" stroke=\"#888\"/>\n"
        svg += text(xLabel, x: left + plotWidth / 2, y: height - 14, anchor: "middle")
        svg += "<text transform=\"translate(18 \(top + plotHeight / 2)) rotate(-90)\" text-anchor=\"middle\">\(escape(yLabel))</text>\n"

        var legendY = top + 8
        if let reference {
            let y = py(reference.y)
            svg += "<line x1=\"\(left)\" y1=\"\(y)\" x2=\"\(left + plotWidth)\" y2=\"\(y)\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n"
            svg += legendEntry(y: legendY, color: "#555", dashed: true, label: reference.label)
            legendY += 20
        }
        for (index, series) in series.enumerated() {
            let color = Self.colors[index % Self.colors.count]
            let visible = series.points.filter { $0.x > 0 && $0.y > 0 }
            let path = visible.map { "\(fmt(px($0.x))),\(fmt(py($0.y)))" }.joined(separator: " ")
            svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"/>\n"
            for point in visible {
                let fill = point.isLowerBound ? "white" : color
                svg += "<circle cx=\"\(fmt(px(point.x)))\" cy=\"\(fmt(py(point.y)))\" r=\"4\" fill=\"\(fill)\" stroke=\"\(color)\" stroke-width=\"2\"/>\n"
            }
            svg += legendEntry(y: legendY, color: color, dashed: false, label: series.name)
            legendY += 20
        }
        if series.contains(where: { $0.points.contains(where: \.isLowerBound) }) {
            svg += text("hollow: at least (cut off", x: width - right + 16, y: legendY + 12, anchor: "start")
            svg += text("by the time limit)", x: width - right + 16, y: legendY + 27, anchor: "start")
        }
        return svg + "</svg>\n"
    }

    private func emptyChart() -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="80"><text x="10" y="40">\(escape(title)): nothing measured</text></svg>

        """
    }

    private func legendEntry(y: Double, color: String, dashed: Bool, label: String) -> String {
        let x = width - right + 16
        let dash = dashed ? " stroke-dasharray=\"6 4\"" : ""
        return "<line x1=\"\(x)\" y1=\"\(y)\" x2=\"\(x + 22)\" y2=\"\(y)\" stroke=\"\(color)\" stroke-width=\"2\"\(dash)/>\n"
            + text(label, x: x + 28, y: y + 4, anchor: "start")
    }

    private func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String) -> String {
        "<line x1=\"\(fmt(x1))\" y1=\"\(fmt(y1))\" x2=\"\(fmt(x2))\" y2=\"\(fmt(y2))\" stroke=\"\(stroke)\"/>\n"
    }

    private func text(_ content: String, x: Double, y: Double, anchor: String) -> String {
        "<text x=\"\(fmt(x))\" y=\"\(fmt(y))\" text-anchor=\"\(anchor)\">\(escape(content))</text>\n"
    }

    private func fmt(_ value: Double) -> String { String(format: "%.1f", value) }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
