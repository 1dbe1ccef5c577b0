import Foundation

/// An SVG line chart of per-operation time against entry count, both axes logarithmic, drawn
/// without any library.
struct ScalingChart {
    struct Series {
        var name: String
        var color: String
        /// (entries, nanoseconds per operation)
        var points: [(Double, Double)]
    }

    var title: String
    var series: [Series]

    func svg() -> String {
        let width = 720.0, height = 440.0
        let left = 80.0, right = 200.0, top = 50.0, bottom = 60.0
        let all = series.flatMap(\.points)
        guard !all.isEmpty else { return "<svg xmlns=\"http://www.w3.org/2000/svg\"/>" }
        let xMin = log10(all.map(\.0).min()!), xMax = max(log10(all.map(\.0).max()!), xMin + 1)
        let yMin = floor(log10(all.map(\.1).min()!)), yMax = max(ceil(log10(all.map(\.1).max()!)), yMin + 1)
        func x(_ value: Double) -> Double { left + (log10(value) - xMin) / (xMax - xMin) * (width - left - right) }
        func y(_ value: Double) -> Double { top + (yMax - log10(value)) / (yMax - yMin) * (height - top - bottom) }

        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(width / 2 - 60)" y="24" font-size="15">\(escape(title))</text>

            """
        // Grid and labels: one line per power of ten.
        for exponent in stride(from: yMin, through: yMax, by: 1) {
            let value = pow(10, exponent)
            let position = y(value)
            out += "<line x1=\"\(left)\" y1=\"\(position)\" x2=\"\(width - right)\" y2=\"\(position)\" stroke=\"#ddd\"/>\n"
            out += "<text x=\"\(left - 8)\" y=\"\(position + 4)\" text-anchor=\"end\">\(escape(formatNanoseconds(value)))</text>\n"
        }
        for exponent in stride(from: ceil(xMin), through: xMax, by: 1) {
            let value = pow(10, exponent)
            let position = x(value)
            out += "<line x1=\"\(position)\" y1=\"\(top)\" x2=\"\(position)\" y2=\"\(height - bottom)\" stroke=\"#ddd\"/>\n"
            out += "<text x=\"\(position)\" y=\"\(height - bottom + 18)\" text-anchor=\"middle\">\(Self.entries(value))</text>\n"
        }
        out += "<text x=\"\((left + width - right) / 2)\" y=\"\(height - 16)\" text-anchor=\"middle\">cached entries (log scale)</text>\n"
        out += "<text x=\"18\" y=\"\((top + height - bottom) / 2)\" transform=\"rotate(-90 18 \((top + height - bottom) / 2))\" text-anchor=\"middle\">time per operation (log scale)</text>\n"
        for (index, line) in series.enumerated() {
            let path = line.points.map { "\(x($0.0)),\(y($0.1))" }.joined(separator: " ")
            out += "<polyline fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2\" points=\"\(path)\"/>\n"
            for point in line.points {
                out += "<circle cx=\"\(x(point.0))\" cy=\"\(y(point.1))\" r=\"3.5\" fill=\"\(line.color)\"/>\n"
            }
            let legendY = top + 10 + Double(index) * 20
            out += "<rect x=\"\(width - right + 16)\" y=\"\(legendY - 9)\" width=\"12\" height=\"12\" fill=\"\(line.color)\"/>\n"
            out += "<text x=\"\(width - right + 34)\" y=\"\(legendY + 1)\">\(escape(line.name))</text>\n"
        }
        out += "</svg>\n"
        return out
    }

    private static func entries(_ value: Double) -> String {
        switch value {
        case 1_000_000...: return "\(Int(value / 1_000_000))M"
        case 1_000...: return "\(Int(value / 1_000))k"
        default: return "\(Int(value))"
        }
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }
}
