import Foundation
import Testing
@testable import AppCacheKit

/// Where hand-written `Codable` code can tell one coder from another (a key written twice, an
/// array's count, a missing super key, a decoding error's path), the binary codec answers as
/// `JSONEncoder` and `JSONDecoder` do, so a model that works with JSON works when cached.
struct BinaryCodecParityTests {
    private func viaBinary<T: Codable>(_ value: T, as type: T.Type = T.self) throws -> T {
        try BinaryPayloadDecoder.decode(T.self, from: BinaryPayloadEncoder.encode(value).payload)
    }

    private func viaJSON<T: Codable>(_ value: T, as type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }

    // MARK: - A key written twice

    /// A class hierarchy whose subclass writes its type name into the container its superclass
    /// wrote one into (a common pattern for polymorphic models).
    class Shape: Encodable, @unchecked Sendable {
        var kind: String { "shape" }
        var label: String
        init(label: String) { self.label = label }
        enum CodingKeys: String, CodingKey { case kind, label, extra }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("shape", forKey: .kind)
            try container.encode(label, forKey: .label)
            // Something nested under a key written again below: its bytes are dropped too.
            var nested = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .extra)
            try nested.encode([1, 2, 3], forKey: .label)
        }
    }

    final class Circle: Shape, @unchecked Sendable {
        override var kind: String { "circle" }
        var radius: Double
        init(label: String, radius: Double) {
            self.radius = radius
            super.init(label: label)
        }
        enum MoreKeys: String, CodingKey { case kind, radius, extra }

        override func encode(to encoder: any Encoder) throws {
            try super.encode(to: encoder)
            var container = encoder.container(keyedBy: MoreKeys.self)
            try container.encode("circle", forKey: .kind)
            try container.encode(radius, forKey: .radius)
            try container.encode("flat", forKey: .extra)
        }
    }

    /// What a reader of either sees.
    struct Decoded: Codable, Equatable {
        var kind: String
        var label: String
        var radius: Double?
        var extra: String?
        var keyNames: [String]

        enum CodingKeys: String, CodingKey { case kind, label, radius, extra }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            keyNames = container.allKeys.map(\.stringValue).sorted()
            kind = try container.decode(String.self, forKey: .kind)
            label = try container.decode(String.self, forKey: .label)
            radius = try container.decodeIfPresent(Double.self, forKey: .radius)
            extra = try? container.decodeIfPresent(String.self, forKey: .extra)
        }

        func encode(to encoder: any Encoder) throws {}
    }

    @Test func aKeyWrittenTwiceKeepsItsLastValueAsJSONDoes() throws {
        let shapes: [Shape] = [Circle(label: "wheel", radius: 2.5), Shape(label: "blob"), Circle(label: "coin", radius: 0.5)]
        let payload = try BinaryPayloadEncoder.encode(shapes).payload
        let binary = try BinaryPayloadDecoder.decode([Decoded].self, from: payload)
        let json = try JSONDecoder().decode([Decoded].self, from: JSONEncoder().encode(shapes))
        #expect(binary == json)
        #expect(binary.map(\.kind) == ["circle", "shape", "circle"])
        #expect(binary[0].keyNames == ["extra", "kind", "label", "radius"], "each key once, as JSON has it")
        #expect(binary[0].extra == "flat")
        #expect(binary[1].extra == nil, "a keyed container, not a string: never replaced in the plain shape")
        // The earlier values' bytes are gone, not just hidden.
        #expect(!String(decoding: payload, as: UTF8.self).contains("shape\u{5}wheel"))
    }

    /// A value that asks for its container again while one nested in it is still open, at the
    /// top of an item and through a super encoder, writes to the one container.
    struct TwoRequests: Encodable {
        enum Keys: String, CodingKey { case one, list, two }
        func encode(to encoder: any Encoder) throws {
            var first = encoder.container(keyedBy: Keys.self)
            try first.encode("a", forKey: .one)
            var list = first.nestedUnkeyedContainer(forKey: .list)
            try list.encode(1)
            var second = encoder.container(keyedBy: Keys.self)
            try second.encode("b", forKey: .two)
        }
    }

    struct Holder: Encodable {
        enum Keys: String, CodingKey { case tagged, after }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try TwoRequests().encode(to: container.superEncoder(forKey: .tagged))
            try container.encode(5, forKey: .after)
        }
    }

    struct Parts: Decodable, Equatable {
        var one: String
        var list: [Int]
        var two: String
    }

    struct HeldParts: Decodable, Equatable {
        var tagged: Parts
        var after: Int
    }

    @Test func aValueAskingForItsContainerAgainGetsTheSameOne() throws {
        let expected = Parts(one: "a", list: [1], two: "b")
        #expect(try JSONDecoder().decode([Parts].self, from: JSONEncoder().encode([TwoRequests()])) == [expected])
        #expect(try BinaryPayloadDecoder.decode([Parts].self, from: BinaryPayloadEncoder.encode([TwoRequests()]).payload) == [expected])
        let held = HeldParts(tagged: expected, after: 5)
        #expect(try JSONDecoder().decode(HeldParts.self, from: JSONEncoder().encode(Holder())) == held)
        #expect(try BinaryPayloadDecoder.decode(HeldParts.self, from: BinaryPayloadEncoder.encode(Holder()).payload) == held)
    }

    /// Two keyed containers nested under `a` (merged, as JSON merges them), then a number under
    /// `b` with an unkeyed container nested under it too: two kinds under one key, which
    /// `JSONEncoder` traps on and the binary encoder refuses with an `EncodingError`.
    struct NestedTwice: Encodable {
        enum Keys: String, CodingKey { case a, b, c }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var first = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
            try first.encode(1, forKey: .b)
            var second = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
            try second.encode(2, forKey: .c)
            try container.encode(3, forKey: .b)
            var list = container.nestedUnkeyedContainer(forKey: .b)
            try list.encode(4)
        }
    }

    /// The second nested container under `a` is the first one again (JSON merges them); a
    /// nested unkeyed container under `b`, which holds a number, is what `JSONEncoder` traps on:
    /// an error here, never a trap, and never a payload that reads back something else.
    @Test func aSecondContainerUnderOneKeyIsTheFirstAndOneOfAnotherKindIsAnError() throws {
        struct Merged: Encodable {
            enum Keys: String, CodingKey { case a, b, c }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                var first = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
                try first.encode(1, forKey: .b)
                var second = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
                try second.encode(2, forKey: .c)
            }
        }
        struct MergedRead: Decodable, Equatable { var a: [String: Int] }
        let payload = try BinaryPayloadEncoder.encode(Merged()).payload
        #expect(try BinaryPayloadDecoder.decode(MergedRead.self, from: payload) == MergedRead(a: ["b": 1, "c": 2]))
        #expect(throws: EncodingError.self) { try BinaryPayloadEncoder.encode(NestedTwice()) }
        #expect(throws: EncodingError.self) { try PayloadCodec.binary.encode([NestedTwice()]) }
    }

    /// A container written to after it was closed, found where nothing can throw (asking it for
    /// a nested container) and never written to again: the collection is stored as JSON, as
    /// for any such interleaving, rather than as a payload that reads back wrong.
    struct LateNested: Encodable {
        enum Keys: String, CodingKey { case list, a, b }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try container.encode(1, forKey: .a)
            var inner = list.nestedContainer(keyedBy: Keys.self)
            try inner.encode(2, forKey: .b)
        }
    }

    struct LateNestedRead: Decodable, Equatable {
        var list: [[String: Int]]
        var a: Int
    }

    @Test func interleavingFoundWhereNothingThrowsFallsBackToJSON() throws {
        let (payload, codec, _, _) = try PayloadCodec.binary.encode([LateNested()])
        #expect(codec == .json)
        #expect(try PayloadCodec.json.decodeItems(LateNestedRead.self, from: payload) == [LateNestedRead(list: [["b": 2]], a: 1)])
        #expect(throws: EncodingError.self) { try PayloadCodec.binary.encodeItems([LateNested()]) }
    }

    /// A container with far more keys than any small table (a large dictionary) keeps all of
    /// them, and a key written again among them still keeps only its last value.
    @Test func largeContainersKeepEveryKeyAndTheLastOfARepeatedOne() throws {
        let large = Dictionary(uniqueKeysWithValues: (0..<1_000).map { ("key-\($0)", $0) })
        #expect(try viaBinary(large) == large)

        struct Repeating: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                for index in 0..<300 { try container.encode(index, forKey: AnyKey(stringValue: "k\(index)")) }
                try container.encode(-1, forKey: AnyKey(stringValue: "k150"))
                try container.encode(-2, forKey: AnyKey(stringValue: "k0"))
            }
        }
        let payload = try BinaryPayloadEncoder.encode(Repeating()).payload
        let decoded = try BinaryPayloadDecoder.decode([String: Int].self, from: payload)
        let json = try JSONDecoder().decode([String: Int].self, from: JSONEncoder().encode(Repeating()))
        #expect(decoded == json)
        #expect(decoded.count == 300)
        #expect(decoded["k150"] == -1 && decoded["k0"] == -2 && decoded["k299"] == 299)
        #expect(try BinaryPayloadDecoder.decode(KeyCount.self, from: payload).count == 300, "each key once")
    }

    struct KeyCount: Decodable {
        var count: Int
        init(from decoder: any Decoder) throws {
            count = try decoder.container(keyedBy: AnyKey.self).allKeys.count
        }
    }

    // MARK: - Counts, missing super keys, not-a-number

    /// A pair stored as a two-element array, checked by its count, as hand-written models do.
    struct Pair: Codable, Equatable {
        var first: Int
        var second: Int

        init(_ first: Int, _ second: Int) {
            (self.first, self.second) = (first, second)
        }

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            guard container.count == 2 else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(String(describing: container.count)) elements")
            }
            first = try container.decode(Int.self)
            second = try container.decode(Int.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(first)
            try container.encode(second)
        }
    }

    @Test func arraysTellTheirCountAsJSONDoes() throws {
        let pairs = [Pair(1, 2), Pair(-3, 300_000)]
        #expect(try viaBinary(pairs) == pairs)
        #expect(try viaJSON(pairs) == pairs)
        // Elements of a byte or two: the count is known all the same; collections of them
        // decode, and so do collections of such items read as the cache reads them.
        let flags = (0..<1_000).map { $0 % 3 == 0 }
        #expect(try viaBinary(flags) == flags)
        let absent = [Int?](repeating: nil, count: 500)
        #expect(try viaBinary(absent) == absent)
        #expect(try PayloadCodec.binary.decodeItems(Bool.self, from: PayloadCodec.binary.encodeItems(flags)) == flags)
        #expect(try PayloadCodec.binary.decodeItems(Pair.self, from: PayloadCodec.binary.encodeItems(pairs)) == pairs)
    }

    /// A model that keeps an optional part through a super decoder, read from a payload written
    /// before that part existed.
    struct Evolved: Codable, Equatable {
        var name: String
        var note: String?

        enum CodingKeys: String, CodingKey { case name, note }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            note = try String?(from: container.superDecoder(forKey: .note))
        }
    }

    struct Original: Codable {
        var name: String
    }

    struct Strict: Decodable {
        var name: String
        enum CodingKeys: String, CodingKey { case name, note }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try String(from: container.superDecoder(forKey: .note))
        }
    }

    @Test func aMissingSuperKeyDecodesAsNilAsJSONDoes() throws {
        let old = [Original(name: "tea")]
        let binary = try BinaryPayloadEncoder.encode(old).payload
        let json = try JSONEncoder().encode(old)
        let fromBinary = try BinaryPayloadDecoder.decode([Evolved].self, from: binary)
        #expect(fromBinary == (try JSONDecoder().decode([Evolved].self, from: json)))
        #expect(fromBinary.first?.note == nil)
        // A required value there is missing, for both.
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Strict].self, from: json) }
        func notFound(_ decode: () throws -> Any) -> [String]? {
            do {
                _ = try decode()
                return nil
            } catch DecodingError.valueNotFound(_, let context) {
                return context.codingPath.map(\.stringValue)
            } catch {
                return ["unexpected: \(error)"]
            }
        }
        #expect(notFound { try BinaryPayloadDecoder.decode([Strict].self, from: binary) } == ["Index 0", "note"])
        #expect(notFound { try BinaryPayloadDecoder.decode([Strict].self, from: binary) } == notFound { try JSONDecoder().decode([Strict].self, from: json) })
    }

    /// JSON writes `Decimal.nan` as `NaN`, which no JSON parse reads back: the binary encoder
    /// leaves a collection holding one to JSON, so the cache ends as it does with `.json`.
    /// An archive an older build wrote with the binary form of not-a-number still reads.
    @Test func decimalNotANumberIsLeftToJSON() throws {
        #expect(throws: BinaryEncodingUnsupported.self) { try BinaryPayloadEncoder.encode([Decimal.nan, 1]) }
        let stored = try PayloadCodec.binary.encode([Decimal.nan, 1])
        #expect(stored.codec == .json)
        #expect(throws: DecodingError.self) { try PayloadCodec.json.decodeItems(Decimal.self, from: stored.payload) }
        let finite: [Decimal] = [1, Decimal(string: "-12.5")!, .greatestFiniteMagnitude]
        #expect(try viaBinary(finite) == finite)
        // An older archive's not-a-number: a decimal value spelled `NaN`, no keys.
        let older = Data([BinaryFormat.decimal, 3] + Array("NaN".utf8) + [0, 5, 0, 0, 0])
        #expect(try BinaryPayloadDecoder.decode(Decimal.self, from: older).isNaN)
    }

    // MARK: - Where a decoding error happened

    struct Price: Codable {
        var amount: String
    }

    struct Dish: Codable {
        var name: String
        var prices: [Price]
    }

    struct PricedDish: Codable {
        struct Price: Codable { var amount: Double }
        var name: String
        var prices: [Price]
    }

    /// A property whose type changed without a schema bump: the error (which the cache reports
    /// to `diagnostics` with the miss) names the item and property, as JSON's does.
    @Test func decodingErrorsNameWhereTheyHappenedAsJSONDoes() throws {
        let dishes = [
            Dish(name: "soup", prices: []),
            Dish(name: "stew", prices: [Price(amount: "x"), Price(amount: "7.5")]),
        ]
        func path(_ decode: () throws -> Any) -> [String]? {
            do {
                _ = try decode()
                return nil
            } catch let DecodingError.typeMismatch(_, context) {
                return context.codingPath.map(\.stringValue)
            } catch {
                return ["unexpected: \(error)"]
            }
        }
        let binary = path { try PayloadCodec.binary.decodeItems(PricedDish.self, from: PayloadCodec.binary.encodeItems(dishes)) }
        let json = path { try JSONDecoder().decode([PricedDish].self, from: JSONEncoder().encode(dishes)) }
        #expect(binary == ["Index 1", "prices", "Index 0", "amount"])
        #expect(binary == json)
    }

    @Test func theCacheReportsWhereDecodingFailed() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let key = ArchiveKey(user: "alice", cacheName: "Plains", key: nil)
        struct WrongPlain: Codable { var value: String }
        try fixture.plant(
            ArchiveRecord(
                payload: try PayloadCodec.binary.encodeItems([WrongPlain(value: "seven")]),
                codec: PayloadCodec.binary.headerValue, schemaVersion: 1, cachedDate: Date()),
            forKey: key)
        #expect(try cache.getCachedItems(Plain.self) == nil)
        #expect(fixture.diagnostics.codes == [.modelMismatch])
        #expect(fixture.diagnostics.errors.first?.message.contains("`items[0].value`: expected Int, found String") == true)
        let cause = try #require(fixture.diagnostics.errors.first?.underlyingError as? DecodingError)
        guard case .typeMismatch(_, let context) = cause else {
            Issue.record("expected a type mismatch, got \(cause)")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["Index 0", "value"])
    }
}
