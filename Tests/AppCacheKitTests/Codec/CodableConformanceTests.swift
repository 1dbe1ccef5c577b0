import Foundation
import Testing
@testable import AppCacheKit

/// The binary codec keeps every `Codable` model exactly as JSON would, or refuses it.
///
/// Each shape (see ``CodableShape``) is encoded and read back through `JSONEncoder` and
/// `JSONDecoder` and through the binary codec; a shape fails on any difference in the value
/// read back or in the error thrown. The shapes are written here from the shapes that
/// Foundation's encoder test suites and the standard library's `Codable` tests exercise, plus
/// the ways apps evolve their models and the misuses the binary codec once got wrong.
struct CodableConformanceTests {
    static let shapes = ConformanceShapes.all

    /// Every shape through both codecs, on one thread with a 64 MiB stack: the deepest shapes
    /// recurse through both coders hundreds of levels deep, which the sanitizers' larger frames
    /// would take past a worker thread's stack. One thread for all of them, and one test: the
    /// whole comparison takes a pool thread for about a second (two under AddressSanitizer),
    /// where a thread per shape held the pool long enough to starve the suite's waiting tests.
    @Test func everyShapeEndsAsJSONDoes() {
        let shapes = Self.shapes
        let comparisons = Self.onLargeStack { shapes.map { (name: $0.name, differences: $0.run().differences) } }
        for comparison in comparisons {
            #expect(comparison.differences.isEmpty, "\(comparison.name):\n\(comparison.differences.joined(separator: "\n"))")
        }
        #expect(comparisons.count == shapes.count)
    }

    /// Runs `body` on a thread of its own with a 64 MiB stack, the caller waiting.
    static func onLargeStack<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result?>(nil)
        let thread = Thread {
            result.withLock { $0 = body() }
            done.signal()
        }
        thread.stackSize = 64 << 20
        thread.start()
        done.wait()
        return result.withLock { $0! }
    }

    @Test func theSuiteCoversAtLeast300Shapes() {
        #expect(Self.shapes.count >= 300, "\(Self.shapes.count) shapes")
        let names = Self.shapes.map(\.name)
        #expect(Set(names).count == names.count, "each shape has a name of its own")
    }
}

/// Every shape of the conformance suite, gathered from the files in `Shapes/`.
enum ConformanceShapes {
    static var all: [CodableShape] {
        misuse + evolution + errors + foundationJSON + foundationPropertyList + corelibsJSON + standardLibrary
    }
}
