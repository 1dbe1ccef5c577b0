import Foundation

/// Per-operation timings of one benchmark subject: the median, fastest and slowest of several
/// timed runs.
struct Measurement: Sendable {
    /// Nanoseconds per operation.
    var median: Double
    var minimum: Double
    var maximum: Double

    init(perOperation samples: [Double]) {
        precondition(!samples.isEmpty, "a measurement needs at least one run")
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        median = sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
        minimum = sorted[0]
        maximum = sorted[sorted.count - 1]
    }

    /// Times `runs` runs of `operation`, each repeating it `iterations` times, after one
    /// untimed warm-up run.
    static func of(runs: Int, iterations: Int, _ operation: (Int) -> Void) -> Measurement {
        operation(iterations)
        let clock = ContinuousClock()
        var samples: [Double] = []
        for _ in 0..<runs {
            let elapsed = clock.measure { operation(iterations) }
            samples.append(elapsed.nanoseconds / Double(iterations))
        }
        return Measurement(perOperation: samples)
    }

    /// Times `runs` single operations, each after an untimed `setup`, after one untimed
    /// warm-up.
    static func each<Prepared>(runs: Int, setup: () throws -> Prepared, _ operation: (Prepared) throws -> Void) rethrows -> Measurement {
        try operation(try setup())
        let clock = ContinuousClock()
        var samples: [Double] = []
        for _ in 0..<runs {
            let prepared = try setup()
            let start = clock.now
            try operation(prepared)
            samples.append((clock.now - start).nanoseconds)
        }
        return Measurement(perOperation: samples)
    }
}

extension Duration {
    var nanoseconds: Double {
        Double(components.seconds) * 1e9 + Double(components.attoseconds) / 1e9
    }
}

/// Keeps a value alive and opaque to the optimizer, so measured work cannot be dropped.
@_optimize(none)
func blackHole<T>(_ value: T) {}

/// A human-readable duration for nanoseconds.
func formatNanoseconds(_ value: Double) -> String {
    switch value {
    case ..<1_000: return String(format: "%.0f ns", value)
    case ..<1_000_000: return String(format: "%.1f µs", value / 1_000)
    case ..<1_000_000_000: return String(format: "%.2f ms", value / 1_000_000)
    default: return String(format: "%.2f s", value / 1_000_000_000)
    }
}
