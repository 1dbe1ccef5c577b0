import Foundation
import Testing
@testable import AppCacheKit

/// One `Codable` shape for the conformance suite: a value, the type it is read back as, and
/// what `JSONEncoder`/`JSONDecoder` and the binary codec each make of it.
///
/// The binary codec passes a shape when its round trip ends exactly as JSON's does: the same
/// decoded value (by `==`), or the same error (its kind, its coding path, and the type or key
/// it names), or a refusal to encode (``BinaryEncodingUnsupported``), after which the cache
/// writes that collection as JSON and so ends as JSON does by construction. Each shape runs
/// twice: as a single value, and as three items of a collection through the path the cache
/// itself takes (``PayloadCodec/encode(_:)``, which falls back to JSON, and `decodeItems`),
/// where containers and key tables are shared from item to item.
struct CodableShape: Sendable, CustomTestStringConvertible {
    /// Where the shape comes from and what it is, as the test list shows it.
    let name: String
    /// Runs the shape both ways and says how they compare.
    let run: @Sendable () -> Comparison

    var testDescription: String { name }

    /// What one shape's runs found.
    struct Comparison: Sendable {
        /// Differences from JSON, one line each; empty when the shape passes.
        var differences: [String] = []
        /// Whether the binary encoder refused the value (the cache then writes JSON).
        var refused = false
    }

    /// A value read back as its own type.
    static func roundTrip<Value: Codable & Equatable & SendableMetatype>(
        _ name: String, _ value: @autoclosure @escaping @Sendable () -> Value
    ) -> CodableShape {
        roundTrip(name, value(), as: Value.self)
    }

    /// A value encoded as it is and read back as `Target` (a model that changed, or a reader
    /// that looks at the stored shape).
    static func roundTrip<Value: Encodable & SendableMetatype, Target: Decodable & Equatable & SendableMetatype>(
        _ name: String, _ value: @autoclosure @escaping @Sendable () -> Value, as target: Target.Type
    ) -> CodableShape {
        CodableShape(name: name) {
            var comparison = Comparison()
            let single = compare(value(), as: Target.self)
            let items = compareItems([value(), value(), value()], as: Target.self)
            for (label, outcome) in [("value", single), ("items", items)] {
                comparison.refused = comparison.refused || outcome.refused
                if let difference = outcome.difference { comparison.differences.append("\(label): \(difference)") }
            }
            return comparison
        }
    }

    /// The end of one round trip: the value read back (compared with `==`), or the error.
    enum Outcome<Target: Equatable>: Equatable, CustomStringConvertible {
        case value(Target)
        case encodingFailed(String)
        case decodingFailed(String)

        var description: String {
            switch self {
            case .value(let value): "value \(CodableShape.show(value))"
            case .encodingFailed(let text): "encoding error \(text)"
            case .decodingFailed(let text): "decoding error \(text)"
            }
        }
    }

    /// One run's verdict: the difference, if any, and whether the binary encoder refused.
    struct Verdict {
        var difference: String?
        var refused = false
    }

    private static func compare<Value: Encodable, Target: Decodable & Equatable>(_ value: Value, as target: Target.Type) -> Verdict {
        let json = outcome(encode: { try JSONEncoder().encode(value) }, decode: { try JSONDecoder().decode(Target.self, from: $0) })
        let binaryPayload: Data
        do {
            binaryPayload = try BinaryPayloadEncoder.encode(value).payload
        } catch is BinaryEncodingUnsupported {
            return Verdict(refused: true)
        } catch {
            return verdict(json: json, binary: Outcome<Target>.encodingFailed(describe(error)))
        }
        let binary = outcome(encode: { binaryPayload }, decode: { try PayloadCodec.binary.decode(Target.self, from: $0) })
        return verdict(json: json, binary: binary)
    }

    private static func compareItems<Value: Encodable, Target: Decodable & Equatable>(_ items: [Value], as target: Target.Type) -> Verdict {
        let json = outcome(encode: { try JSONEncoder().encode(items) }, decode: { try JSONDecoder().decode([Target].self, from: $0) })
        let stored: (payload: Data, codec: PayloadCodec)
        do {
            let encoded = try PayloadCodec.binary.encode(items)
            stored = (encoded.payload, encoded.codec)
        } catch {
            return verdict(json: json, binary: Outcome<[Target]>.encodingFailed(describe(error)))
        }
        let binary = outcome(encode: { stored.payload }, decode: { try stored.codec.decodeItems(Target.self, from: $0) })
        return Verdict(difference: verdict(json: json, binary: binary).difference, refused: stored.codec == .json)
    }

    private static func verdict<Target>(json: Outcome<Target>, binary: Outcome<Target>) -> Verdict {
        Verdict(difference: json == binary ? nil : "JSON gives \(json), binary gives \(binary)")
    }

    private static func outcome<Target: Equatable>(encode: () throws -> Data, decode: (Data) throws -> Target) -> Outcome<Target> {
        let data: Data
        do {
            data = try encode()
        } catch {
            return .encodingFailed(describe(error))
        }
        do {
            return .value(try decode(data))
        } catch {
            return .decodingFailed(describe(error))
        }
    }

    /// An error as the comparison sees it: its kind, coding path and the type or key it names,
    /// not its wording (each coder words its messages its own way).
    static func describe(_ error: any Error) -> String {
        func path(_ path: [any CodingKey]) -> String {
            "[" + path.map { key in key.intValue.map { "\(key.stringValue)#\($0)" } ?? key.stringValue }.joined(separator: ", ") + "]"
        }
        switch error {
        case let error as EncodingError:
            switch error {
            case .invalidValue(_, let context): return "invalidValue at \(path(context.codingPath))"
            @unknown default: return "EncodingError \(error)"
            }
        case let error as DecodingError:
            switch error {
            case .typeMismatch(let type, let context): return "typeMismatch(\(type)) at \(path(context.codingPath))"
            case .valueNotFound(let type, let context): return "valueNotFound(\(type)) at \(path(context.codingPath))"
            case .keyNotFound(let key, let context): return "keyNotFound(\(key.stringValue)) at \(path(context.codingPath))"
            case .dataCorrupted(let context): return "dataCorrupted at \(path(context.codingPath))"
            @unknown default: return "DecodingError \(error)"
            }
        default:
            return "\(type(of: error)): \(error)"
        }
    }

    /// A value's parts, as `dump` would list them, with dates as their seconds: `Date`'s own
    /// description traps on a date that is not finite, which is what some shapes are about.
    static func show(_ value: Any) -> String {
        if let date = value as? Date { return "Date(\(date.timeIntervalSinceReferenceDate))" }
        let mirror = Mirror(reflecting: value)
        guard !mirror.children.isEmpty else { return String(reflecting: value) }
        let parts = mirror.children.map { child in (child.label.map { "\($0): " } ?? "") + show(child.value) }
        return "\(mirror.subjectType)(" + parts.joined(separator: ", ") + ")"
    }
}
