import Foundation

/// Every figure of a run, printed as it comes and written as JSON at the end.
final class Report {
    struct Row: Encodable {
        var benchmark: String
        var subject: String
        var unit: String
        var median: Double
        var minimum: Double
        var maximum: Double
        /// The subject this row is compared with, measured in the same run.
        var baseline: String?
        /// `median / baseline median`: below 1 is faster (for times) or smaller (for bytes).
        var ratio: Double?
        var goal: String?
        var goalMet: Bool?
        var parameter: Int?
    }

    private(set) var rows: [Row] = []

    /// Prints and records one benchmark: the AppCache subject first, then each baseline with
    /// the AppCache figure's ratio to it: the ratio of the medians, or for a baseline timed in
    /// alternation with the subject (``Measurement/paired(runs:iterations:timing:subject:baseline:)``)
    /// the median of the pairs' ratios, given in `pairedRatios` by baseline name.
    func add(
        _ benchmark: String, parameter: Int? = nil, subject: (String, Measurement),
        baselines: [(String, Measurement)], goal: (baseline: String, maximumRatio: Double)? = nil,
        pairedRatios: [String: Double] = [:]
    ) {
        emit("\n\(benchmark)")
        let (name, measurement) = subject
        emit(line(name, measurement, note: ""))
        rows.append(Row(
            benchmark: benchmark, subject: name, unit: "ns/op", median: measurement.median,
            minimum: measurement.minimum, maximum: measurement.maximum, parameter: parameter))
        for (baselineName, baseline) in baselines {
            let ratio = pairedRatios[baselineName] ?? measurement.median / baseline.median
            var note = String(format: "AppCache is %.2fx this", ratio)
            if pairedRatios[baselineName] != nil { note += " (paired runs)" }
            var met: Bool?
            if let goal, goal.baseline == baselineName {
                met = ratio <= goal.maximumRatio
                note += String(format: "  [goal <= %.3gx: %@]", goal.maximumRatio, met! ? "met" : "MISSED")
            }
            emit(line(baselineName, baseline, note: note))
            rows.append(Row(
                benchmark: benchmark, subject: baselineName, unit: "ns/op", median: baseline.median,
                minimum: baseline.minimum, maximum: baseline.maximum, baseline: name, ratio: ratio,
                goal: goal.map { String(format: "<= %.3gx", $0.maximumRatio) }, goalMet: met, parameter: parameter))
        }
    }

    /// Records a figure that is not a time (bytes, operations per second).
    func addValue(
        _ benchmark: String, subject: String, unit: String, value: Double, baseline: (String, Double)? = nil,
        goal: Double? = nil, parameter: Int? = nil
    ) {
        if rows.last?.benchmark != benchmark { emit("\n\(benchmark)") }
        var text = "  " + subject.padding(toLength: 58, withPad: " ", startingAt: 0) + format(value, unit)
        var ratio: Double?
        var met: Bool?
        if let baseline {
            ratio = value / baseline.1
            text += String(format: "   (%.2fx %@: %@)", ratio!, baseline.0, format(baseline.1, unit))
            if let goal {
                met = ratio! <= goal
                text += String(format: "  [goal <= %.2fx: %@]", goal, met! ? "met" : "MISSED")
            }
        }
        emit(text)
        rows.append(Row(
            benchmark: benchmark, subject: subject, unit: unit, median: value, minimum: value, maximum: value,
            baseline: baseline?.0, ratio: ratio, goal: goal.map { String(format: "<= %.2fx", $0) }, goalMet: met,
            parameter: parameter))
    }

    func writeJSON(to url: URL, quick: Bool) throws {
        struct Document: Encodable {
            var date: String
            var cores: Int
            var build: String
            var quick: Bool
            var results: [Row]
        }
        let document = Document(
            date: ISO8601DateFormatter().string(from: Date()), cores: ProcessInfo.processInfo.activeProcessorCount,
            build: buildConfiguration, quick: quick, results: rows)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(document).write(to: url)
    }

    private func line(_ name: String, _ measurement: Measurement, note: String) -> String {
        "  " + name.padding(toLength: 58, withPad: " ", startingAt: 0)
            + formatNanoseconds(measurement.median).padding(toLength: 11, withPad: " ", startingAt: 0)
            + "(min \(formatNanoseconds(measurement.minimum)), max \(formatNanoseconds(measurement.maximum)))"
            + (note.isEmpty ? "" : "  " + note)
    }

    private func format(_ value: Double, _ unit: String) -> String {
        switch unit {
        case "bytes": return String(format: "%.1f MiB", value / 1_048_576)
        case "ops/s": return String(format: "%.0f ops/s", value)
        case "B": return String(format: "%.0f B", value)
        default: return String(format: "%.2f %@", value, unit)
        }
    }
}

#if DEBUG
let buildConfiguration = "debug"
#else
let buildConfiguration = "release"
#endif

/// Prints a line at once, unbuffered, so a long run shows its progress even into a pipe.
func emit(_ line: String = "") {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
