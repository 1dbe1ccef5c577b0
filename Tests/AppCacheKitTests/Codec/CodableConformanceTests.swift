import Foundation
import Testing
import AppCacheTestSupport
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

    @Test(arguments: shapes)
    func theBinaryCodecEndsAsJSONDoes(_ shape: CodableShape) async {
        let comparison = await heavy(shape.run)
        #expect(comparison.differences.isEmpty, "\(shape.name):\n\(comparison.differences.joined(separator: "\n"))")
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
