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

    /// The same timings spread over `count` operations each (a timed pass of `count` calls).
    func divided(by count: Int) -> Measurement {
        Measurement(perOperation: [median, minimum, maximum].map { $0 / Double(count) })
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

    /// Times `subject` and `baseline` in alternating runs of `iterations` calls each, after
    /// one untimed warm-up of both. Each call is timed on its own and its result freed after
    /// the clock stopped: what is timed is producing a result, not freeing it (the same for
    /// subjects producing the same values), and memory is reused as in an app rather than
    /// piling up (and faulting fresh pages in) over a run.
    ///
    /// On a shared, noisy machine two subjects timed minutes apart can see different machines;
    /// timed in alternation, each pair of runs sees the same one, and the median of the pairs'
    /// ratios is a steadier figure than the ratio of two medians.
    ///
    /// - Returns: both measurements, and the median of `subject / baseline` over the pairs.
    ///
    /// - Parameter timing: ``Timing/eachCall`` for calls long enough that reading the clock
    ///   around each costs nothing to speak of; ``Timing/batch`` for sub-microsecond calls,
    ///   timed together (their results, freed as they come, cost the same for both subjects).
    static func paired<A, B>(
        runs: Int, iterations: Int, timing: Timing = .eachCall, subject: () -> A, baseline: () -> B
    ) -> (subject: Measurement, baseline: Measurement, ratio: Double) {
        func time<R>(_ operation: () -> R) -> Double {
            let clock = ContinuousClock()
            if timing == .batch {
                let start = clock.now
                for _ in 0..<iterations { blackHole(operation()) }
                return (clock.now - start).nanoseconds / Double(iterations)
            }
            var total = Duration.zero
            for _ in 0..<iterations {
                let start = clock.now
                let result = operation()
                total += clock.now - start
                withExtendedLifetime(result) {}
            }
            return total.nanoseconds / Double(iterations)
        }
        _ = time(subject)
        _ = time(baseline)
        var subjectSamples: [Double] = []
        var baselineSamples: [Double] = []
        var ratios: [Double] = []
        for run in 0..<runs {
            // Alternating which goes first, so neither always runs on a cache the other warmed.
            let a: Double
            let b: Double
            if run.isMultiple(of: 2) {
                a = time(subject)
                b = time(baseline)
            } else {
                b = time(baseline)
                a = time(subject)
            }
            subjectSamples.append(a)
            baselineSamples.append(b)
            ratios.append(a / b)
        }
        return (Measurement(perOperation: subjectSamples), Measurement(perOperation: baselineSamples),
                Measurement(perOperation: ratios).median)
    }

    /// How ``paired(runs:iterations:timing:subject:baseline:)`` reads the clock.
    enum Timing {
        case eachCall, batch
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
