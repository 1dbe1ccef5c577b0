import Foundation

// Shapes written from the Swift project's own Codable tests (swiftlang/swift:
// test/stdlib/CodableTests.swift, TestJSONEncoder.swift, CodableEnumUnavailableElement.swift,
// CodableInvalidKeys.swift, CodableMultifile.swift): standard library types (ranges,
// collection differences, SIMD vectors, optionals, sets, dictionaries keyed by
// CodingKeyRepresentable types), synthesized enum and class conformances, and the Foundation
// values those tests carry, kept to the default strategies. Every model is written anew.

extension ConformanceShapes {
    static let standardLibrary: [CodableShape] = StandardLibraryModels.shapes
}

/// The models of the standard library shapes, and the shapes themselves.
enum StandardLibraryModels {
    static var shapes: [CodableShape] {
        ranges + differences + dictionaries + enums + classes + optionals + collections + scalars + wrappers + foundationValues + neverShapes
    }

    // MARK: - Helpers

    /// A key of any name or number.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(_ name: String) { stringValue = name }
        init(stringValue: String) { self.stringValue = stringValue }
        init(intValue: Int) {
            stringValue = "\(intValue)"
            self.intValue = intValue
        }
    }

    /// A value written exactly as spelled out, for stored shapes no model writes.
    enum Written: Encodable {
        case null
        case bool(Bool)
        case int(Int)
        case double(Double)
        case string(String)
        case list([Written])
        case object(KeyValuePairs<String, Written>)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .null:
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            case .bool(let value):
                var container = encoder.singleValueContainer()
                try container.encode(value)
            case .int(let value):
                var container = encoder.singleValueContainer()
                try container.encode(value)
            case .double(let value):
                var container = encoder.singleValueContainer()
                try container.encode(value)
            case .string(let value):
                var container = encoder.singleValueContainer()
                try container.encode(value)
            case .list(let items):
                var container = encoder.unkeyedContainer()
                for item in items { try container.encode(item) }
            case .object(let pairs):
                var container = encoder.container(keyedBy: AnyKey.self)
                for (key, value) in pairs { try container.encode(value, forKey: AnyKey(key)) }
            }
        }
    }

    /// Any stored value, read back without a model of its own.
    enum Read: Decodable, Equatable {
        case null
        case bool(Bool)
        case int(Int64)
        case uint(UInt64)
        case double(Double)
        case string(String)
        case list([Read])
        case object([String: Read])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .int(value)
            } else if let value = try? container.decode(UInt64.self) {
                self = .uint(value)
            } else if let value = try? container.decode(Double.self) {
                self = .double(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([Read].self) {
                self = .list(value)
            } else {
                self = .object(try container.decode([String: Read].self))
            }
        }
    }

    /// A value under the key "value" (the suite's TopLevelWrapper).
    struct Wrapped<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// An optional under the key "value", written with `encode` (so nil is an explicit null)
    /// and read with `decode(Value?.self)` (the suite's OptionalTopLevelWrapper).
    struct WrappedOptional<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value?

        init(_ value: Value?) { self.value = value }

        enum CodingKeys: String, CodingKey { case value }

        init(from decoder: any Decoder) throws {
            value = try decoder.container(keyedBy: CodingKeys.self).decode(Value?.self, forKey: .value)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(value, forKey: .value)
        }
    }

    // MARK: - Ranges

    /// Partial ranges compared by their bounds, stored exactly as the bare range is.
    struct From: Codable, Equatable {
        var range: PartialRangeFrom<Int>
        init(_ range: PartialRangeFrom<Int>) { self.range = range }
        init(from decoder: any Decoder) throws { range = try decoder.singleValueContainer().decode(PartialRangeFrom<Int>.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(range)
        }
        static func == (lhs: From, rhs: From) -> Bool { lhs.range.lowerBound == rhs.range.lowerBound }
    }

    struct Through: Codable, Equatable {
        var range: PartialRangeThrough<Int>
        init(_ range: PartialRangeThrough<Int>) { self.range = range }
        init(from decoder: any Decoder) throws { range = try decoder.singleValueContainer().decode(PartialRangeThrough<Int>.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(range)
        }
        static func == (lhs: Through, rhs: Through) -> Bool { lhs.range.upperBound == rhs.range.upperBound }
    }

    struct UpTo: Codable, Equatable {
        var range: PartialRangeUpTo<Int>
        init(_ range: PartialRangeUpTo<Int>) { self.range = range }
        init(from decoder: any Decoder) throws { range = try decoder.singleValueContainer().decode(PartialRangeUpTo<Int>.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(range)
        }
        static func == (lhs: UpTo, rhs: UpTo) -> Bool { lhs.range.upperBound == rhs.range.upperBound }
    }

    // MARK: - Dictionary keys

    /// A String-backed enum that is not CodingKeyRepresentable: keys become array elements.
    enum PlainLetter: String, Codable { case a, b }
    /// A String-backed enum that is CodingKeyRepresentable: keys become object keys.
    enum KeyLetter: String, Codable, CodingKeyRepresentable { case a, b }
    /// Keys spelled with Greek letters.
    enum GreekKey: Codable, CodingKeyRepresentable {
        case a, b

        init?<T: CodingKey>(codingKey: T) {
            switch codingKey.stringValue {
            case "α": self = .a
            case "β": self = .b
            default: return nil
            }
        }

        var codingKey: any CodingKey { AnyKey(self == .a ? "α" : "β") }
    }
    /// A Character-backed enum that is CodingKeyRepresentable.
    enum CharacterKey: Character, Codable, CodingKeyRepresentable {
        case a = "a", b = "b"

        init?<T: CodingKey>(codingKey: T) {
            guard codingKey.stringValue.count == 1, let first = codingKey.stringValue.first else { return nil }
            self.init(rawValue: first)
        }

        var codingKey: any CodingKey { AnyKey(String(rawValue)) }
    }
    /// An Int-backed enum, without and with CodingKeyRepresentable.
    enum PlainNumber: Int, Codable { case a = 0, b }
    enum KeyNumber: Int, Codable, CodingKeyRepresentable { case a = 0, b }
    /// Keys that are integers chosen by the type (42 and 64).
    enum IntKey: Codable, CodingKeyRepresentable {
        case a, b

        init?<T: CodingKey>(codingKey: T) {
            switch codingKey.intValue {
            case 42: self = .a
            case 64: self = .b
            default: return nil
            }
        }

        var codingKey: any CodingKey { AnyKey(intValue: self == .a ? 42 : 64) }
    }
    /// A UUID under "value", usable as a dictionary key through its string.
    struct UUIDKey: Codable, Hashable, CodingKeyRepresentable {
        var value: UUID

        init(_ value: UUID) { self.value = value }

        init?<T: CodingKey>(codingKey: T) {
            guard let uuid = UUID(uuidString: codingKey.stringValue) else { return nil }
            value = uuid
        }

        var codingKey: any CodingKey { AnyKey(value.uuidString) }
    }

    static var sampleUUID: UUID { UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")! }

    // MARK: - Enums

    /// A payload type that is unavailable, and an enum with a case that carries it.
    @available(*, unavailable)
    struct UnavailablePayload: Codable {}

    enum WithUnavailableCase: Codable, Equatable {
        case a
        @available(*, unavailable)
        case b(UnavailablePayload)

        static func == (lhs: WithUnavailableCase, rhs: WithUnavailableCase) -> Bool { true }
    }

    /// Synthesized enums whose payload labels look like the generated ones (`_0`, `a0`, ...).
    enum UnderscoreZeroFirst: Codable, Equatable { case foo(_0: Int, String) }
    enum BothUnderscored: Codable, Equatable { case foo(_0: Int, _1: String) }
    enum UnderscoreOneSecond: Codable, Equatable { case foo(Int, _1: String) }
    enum SwappedUnderscores: Codable, Equatable { case foo(_1: Int, _0: String) }
    enum UnderscoreA0: Codable, Equatable { case foo(Int, _a0: String) }
    enum LabeledA0: Codable, Equatable { case foo(a0: Int, qt: String) }
    enum A0Second: Codable, Equatable { case foo(qt: Int, a0: String) }
    enum UnderscoreOneThenA0: Codable, Equatable { case foo(_1: Int, a0: String) }
    enum B0Second: Codable, Equatable { case foo(Int, b0: String) }

    /// A synthesized enum of every case form.
    indirect enum Shape: Codable, Equatable {
        case point
        case circle(radius: Double)
        case rectangle(Double, Double)
        case labeled(String, tag: Int?)
        case nested(Shape?)
        case group([Shape])
    }

    /// Raw-value enums, stored as their raw values.
    enum Suit: String, Codable { case hearts, spades, clubs = "♣️", empty = "" }
    enum Rank: Int, Codable { case low = -1, ace = 1, king = 13 }

    // MARK: - Classes

    /// A base class that keeps its own keys, and a subclass that does not override Codable.
    class Base: Codable, Equatable {
        var baseMember: Int

        init(baseMember: Int) { self.baseMember = baseMember }

        static func == (lhs: Base, rhs: Base) -> Bool {
            type(of: lhs) == type(of: rhs) && lhs.baseMember == rhs.baseMember
        }
    }

    final class DerivedWithoutCodable: Base {
        var derivedMember = false
    }

    /// A vehicle, and a car that writes its superclass under "super" through a super encoder.
    class Vehicle: Codable, Equatable {
        var wheels: Int

        init(wheels: Int) { self.wheels = wheels }

        func sameFields(as other: Vehicle) -> Bool { wheels == other.wheels }

        static func == (lhs: Vehicle, rhs: Vehicle) -> Bool {
            type(of: lhs) == type(of: rhs) && lhs.sameFields(as: rhs)
        }
    }

    final class Car: Vehicle {
        var brand: String

        init(brand: String, wheels: Int = 4) {
            self.brand = brand
            super.init(wheels: wheels)
        }

        private enum CodingKeys: String, CodingKey { case brand }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            brand = try container.decode(String.self, forKey: .brand)
            try super.init(from: container.superDecoder())
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(brand, forKey: .brand)
            try super.encode(to: container.superEncoder())
        }

        override func sameFields(as other: Vehicle) -> Bool {
            guard let other = other as? Car, other.brand == brand else { return false }
            return super.sameFields(as: other)
        }
    }

    /// A truck that writes its superclass under a key of its own choosing.
    final class Truck: Vehicle {
        var load: Double

        init(load: Double, wheels: Int = 6) {
            self.load = load
            super.init(wheels: wheels)
        }

        private enum CodingKeys: String, CodingKey { case load, vehicle }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            load = try container.decode(Double.self, forKey: .load)
            try super.init(from: container.superDecoder(forKey: .vehicle))
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(load, forKey: .load)
            try super.encode(to: container.superEncoder(forKey: .vehicle))
        }

        override func sameFields(as other: Vehicle) -> Bool {
            guard let other = other as? Truck, other.load == load else { return false }
            return super.sameFields(as: other)
        }
    }

    /// A bike that writes its superclass through the super encoder of an unkeyed container.
    final class Bike: Vehicle {
        var gears: Int

        init(gears: Int) {
            self.gears = gears
            super.init(wheels: 2)
        }

        required init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            gears = try container.decode(Int.self)
            try super.init(from: container.superDecoder())
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(gears)
            try super.encode(to: container.superEncoder())
        }

        override func sameFields(as other: Vehicle) -> Bool {
            guard let other = other as? Bike, other.gears == gears else { return false }
            return super.sameFields(as: other)
        }
    }

    // MARK: - Optionals and other models

    /// Nested optionals held by a synthesized model.
    struct DoublyOptional: Codable, Equatable {
        var value: Int??
        var note: String?
    }

    /// Keys backed by integers, with string names that differ from their numbers.
    struct IntBackedKeys: Codable, Equatable {
        var first: String
        var second: Int
        enum CodingKeys: Int, CodingKey { case first = 1, second = 2 }
    }

    /// Key names with spaces, punctuation, a URL, an empty name and non-Latin letters.
    struct OddKeyNames: Codable, Equatable {
        var fullName: String
        var link: String
        var dotted: Int
        var blank: Bool
        var greek: Double
        enum CodingKeys: String, CodingKey {
            case fullName = "full name"
            case link = "http://example.com/key?x=1"
            case dotted = "a.b.c"
            case blank = ""
            case greek = "αβγ 🔑"
        }
    }

    /// One Foundation value of each kind that rides on a single value: Date, Data, URL, UUID, Decimal.
    struct FoundationScalars: Codable, Equatable {
        var date: Date
        var data: Data
        var url: URL
        var uuid: UUID
        var decimal: Decimal
    }

    /// A mapping of strings to URLs through a single value container, held by reference.
    final class URLMapping: Codable, Equatable {
        let values: [String: URL]

        init(values: [String: URL]) { self.values = values }

        init(from decoder: any Decoder) throws {
            values = try decoder.singleValueContainer().decode([String: URL].self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(values)
        }

        static func == (lhs: URLMapping, rhs: URLMapping) -> Bool { lhs.values == rhs.values }
    }

    /// A switch and a tri-state, as single values.
    enum Switch: Codable, Equatable {
        case off, on
        init(from decoder: any Decoder) throws {
            self = try decoder.singleValueContainer().decode(Bool.self) ? .on : .off
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(self == .on)
        }
    }

    enum TriState: Codable, Equatable {
        case yes, no, unknown
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .unknown
            } else {
                self = try container.decode(Bool.self) ? .yes : .no
            }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .yes: try container.encode(true)
            case .no: try container.encode(false)
            case .unknown: try container.encodeNil()
            }
        }
    }

    /// Tries the first type and, on any error, the second.
    enum Either<First: Decodable & Equatable, Second: Decodable & Equatable>: Decodable, Equatable {
        case first(First)
        case second(Second)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            do {
                self = .first(try container.decode(First.self))
            } catch {
                self = .second(try container.decode(Second.self))
            }
        }
    }

    /// A model that can never be decoded.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    struct Nope: Codable, Equatable {
        var no: Never
    }

    static func nameComponents(given: String? = nil, family: String? = nil, nickname: String? = nil) -> PersonNameComponents {
        var components = PersonNameComponents()
        components.givenName = given
        components.familyName = family
        components.nickname = nickname
        return components
    }

    static func calendar(_ identifier: Calendar.Identifier) -> Calendar {
        var calendar = Calendar(identifier: identifier)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }

    // MARK: - Shapes

    /// Ranges of every kind, and arrays that are not valid ranges.
    static var ranges: [CodableShape] {
        [
            .roundTrip("stdlib: ClosedRange to Int.max (test_ClosedRange_JSON)", 0...Int.max),
            .roundTrip("stdlib: Range to Int.max (test_Range_JSON)", 0..<Int.max),
            .roundTrip("stdlib: empty Range (test_Range_JSON)", 5..<5),
            .roundTrip("stdlib: Range of Doubles (test_Range_JSON)", -1.5..<2.25),
            .roundTrip("stdlib: PartialRangeFrom (test_PartialRangeFrom_JSON)", From(0...)),
            .roundTrip("stdlib: PartialRangeThrough Int.max (test_PartialRangeThrough_JSON)", Through(...Int.max)),
            .roundTrip("stdlib: PartialRangeUpTo Int.max (test_PartialRangeUpTo_JSON)", UpTo(..<Int.max)),
            .roundTrip("stdlib: ClosedRange read as [Int] (test_ClosedRange_JSON)", 3...7, as: [Int].self),
            .roundTrip("stdlib: PartialRangeFrom read as [Int] (test_PartialRangeFrom_JSON)", From((-4)...), as: [Int].self),
            .roundTrip("stdlib: [Int] read as ClosedRange (test_ClosedRange_JSON)", [2, 9], as: ClosedRange<Int>.self),
            .roundTrip("stdlib: bounds out of order read as ClosedRange (test_ClosedRange_JSON_Errors)", [5, 0], as: ClosedRange<Int>.self),
            .roundTrip("stdlib: one bound read as ClosedRange (test_ClosedRange_JSON_Errors)", [5], as: ClosedRange<Int>.self),
            .roundTrip("stdlib: a String bound read as ClosedRange (test_ClosedRange_JSON_Errors)", Written.list([.int(0), .string("Hello")]), as: ClosedRange<Int>.self),
            .roundTrip("stdlib: bounds out of order read as Range (test_Range_JSON_Errors)", [5, 0], as: Range<Int>.self),
            .roundTrip("stdlib: one bound read as Range (test_Range_JSON_Errors)", [5], as: Range<Int>.self),
            .roundTrip("stdlib: a String bound read as Range (test_Range_JSON_Errors)", Written.list([.int(0), .string("Hello")]), as: Range<Int>.self),
            .roundTrip("stdlib: three bounds read as Range (test_Range_JSON_Errors)", [1, 2, 3], as: Range<Int>.self),
        ]
    }

    /// Collection differences, valid and corrupted, and contiguous arrays.
    static var differences: [CodableShape] {
        [
            .roundTrip("stdlib: empty CollectionDifference (test_CollectionDifference_JSON)", [1, 2, 3].difference(from: [1, 2, 3])),
            .roundTrip("stdlib: CollectionDifference of one insertion (test_CollectionDifference_JSON)", [1, 2, 3].difference(from: [1, 2])),
            .roundTrip("stdlib: CollectionDifference of an insertion and a removal (test_CollectionDifference_JSON)", [1, 2, 3].difference(from: [2, 3, 4])),
            .roundTrip("stdlib: CollectionDifference replacing everything (test_CollectionDifference_JSON)", [1, 2, 3].difference(from: [6, 7, 8])),
            .roundTrip("stdlib: CollectionDifference with moves (test_CollectionDifference_JSON)", [3, 1, 2].difference(from: [1, 2, 3]).inferringMoves()),
            .roundTrip("stdlib: CollectionDifference read plainly (test_CollectionDifference_JSON)", [1, 2, 3].difference(from: [2, 3, 4]), as: Read.self),
            .roundTrip("stdlib: a removal among the insertions (test_CollectionDifference_JSON_Errors)", Written.object([
                "insertions": .list([.object(["associatedOffset": .null, "element": .int(1), "isRemove": .bool(true), "offset": .int(0)])]),
                "removals": .list([.object(["associatedOffset": .null, "element": .int(4), "isRemove": .bool(true), "offset": .int(2)])]),
            ]), as: CollectionDifference<Int>.self),
            .roundTrip("stdlib: a repeated offset (test_CollectionDifference_JSON_Errors)", Written.object([
                "insertions": .list([.object(["associatedOffset": .null, "element": .int(1), "isRemove": .bool(false), "offset": .int(2)])]),
                "removals": .list([.object(["associatedOffset": .null, "element": .int(4), "isRemove": .bool(true), "offset": .int(2)]),
                                   .object(["associatedOffset": .null, "element": .int(5), "isRemove": .bool(true), "offset": .int(2)])]),
            ]), as: CollectionDifference<Int>.self),
            .roundTrip("stdlib: a negative offset (test_CollectionDifference_JSON_Errors)", Written.object([
                "insertions": .list([.object(["associatedOffset": .null, "element": .int(1), "isRemove": .bool(false), "offset": .int(-2)])]),
                "removals": .list([.object(["associatedOffset": .null, "element": .int(4), "isRemove": .bool(true), "offset": .int(2)])]),
            ]), as: CollectionDifference<Int>.self),
            .roundTrip("stdlib: an associated offset with no partner (test_CollectionDifference_JSON_Errors)", Written.object([
                "insertions": .list([.object(["associatedOffset": .int(2), "element": .int(1), "isRemove": .bool(false), "offset": .int(0)])]),
                "removals": .list([.object(["associatedOffset": .null, "element": .int(4), "isRemove": .bool(true), "offset": .int(2)])]),
            ]), as: CollectionDifference<Int>.self),
            .roundTrip("stdlib: a valid difference spelled out (test_CollectionDifference_JSON_Errors)", Written.object([
                "insertions": .list([.object(["associatedOffset": .null, "element": .int(1), "isRemove": .bool(false), "offset": .int(0)])]),
                "removals": .list([.object(["associatedOffset": .null, "element": .int(4), "isRemove": .bool(true), "offset": .int(2)])]),
            ]), as: CollectionDifference<Int>.self),
            .roundTrip("stdlib: empty ContiguousArray (test_ContiguousArray_JSON)", ContiguousArray<String>()),
            .roundTrip("stdlib: ContiguousArray of one (test_ContiguousArray_JSON)", ["foo"] as ContiguousArray<String>),
            .roundTrip("stdlib: ContiguousArray of three (test_ContiguousArray_JSON)", ["foo", "bar", "baz"] as ContiguousArray<String>),
            .roundTrip("stdlib: ContiguousArray read as Array (test_ContiguousArray_JSON)", ["foo", "bar"] as ContiguousArray<String>, as: [String].self),
        ]
    }

    /// Dictionaries keyed by CodingKeyRepresentable types and by types stored as flat arrays.
    static var dictionaries: [CodableShape] {
        [
            .roundTrip("stdlib: String enum keys without CodingKeyRepresentable (test_Dictionary_JSON)", [PlainLetter.a: true]),
            .roundTrip("stdlib: String enum keys read as a flat array (test_Dictionary_JSON)", [PlainLetter.a: true], as: Read.self),
            .roundTrip("stdlib: CodingKeyRepresentable String enum keys (test_Dictionary_JSON)", [KeyLetter.a: true, KeyLetter.b: false]),
            .roundTrip("stdlib: CodingKeyRepresentable keys read as String keys (test_Dictionary_JSON)", [KeyLetter.a: true, KeyLetter.b: false], as: [String: Bool].self),
            .roundTrip("stdlib: Greek coding keys (test_Dictionary_JSON)", [GreekKey.a: true, GreekKey.b: false]),
            .roundTrip("stdlib: Greek coding keys read as String keys (test_Dictionary_JSON)", [GreekKey.a: true, GreekKey.b: false], as: [String: Bool].self),
            .roundTrip("stdlib: an unknown key for a CodingKeyRepresentable type (test_Dictionary_JSON)", ["γ": true], as: [GreekKey: Bool].self),
            .roundTrip("stdlib: Character enum keys (test_Dictionary_JSON)", [CharacterKey.a: true, CharacterKey.b: false]),
            .roundTrip("stdlib: UUID wrapper keys (test_Dictionary_JSON)", [UUIDKey(sampleUUID): true]),
            .roundTrip("stdlib: UUID wrapper keys read as String keys (test_Dictionary_JSON)", [UUIDKey(sampleUUID): true], as: [String: Bool].self),
            .roundTrip("stdlib: UUID keys (test_Dictionary_JSON)", [sampleUUID: true]),
            .roundTrip("stdlib: UUID keys read as a flat array (test_Dictionary_JSON)", [sampleUUID: true], as: Read.self),
            .roundTrip("stdlib: Int enum keys without CodingKeyRepresentable (test_Dictionary_JSON)", [PlainNumber.a: true]),
            .roundTrip("stdlib: CodingKeyRepresentable Int enum keys (test_Dictionary_JSON)", [KeyNumber.a: true, KeyNumber.b: false]),
            .roundTrip("stdlib: CodingKeyRepresentable Int enum keys read as String keys (test_Dictionary_JSON)", [KeyNumber.a: true, KeyNumber.b: false], as: [String: Bool].self),
            .roundTrip("stdlib: integer coding keys (test_Dictionary_JSON)", [IntKey.a: true, IntKey.b: false]),
            .roundTrip("stdlib: integer coding keys read as Int keys (test_Dictionary_JSON)", [IntKey.a: true, IntKey.b: false], as: [Int: Bool].self),
            .roundTrip("stdlib: Int keys (test_Dictionary_JSON)", [0: "zero", -1: "minus one", Int.max: "max"]),
            .roundTrip("stdlib: Int8 keys, stored as a flat array (test_Dictionary_JSON)", [Int8(1): "one"]),
            .roundTrip("stdlib: Double keys, stored as a flat array (test_Dictionary_JSON)", [1.5: "one and a half"]),
            .roundTrip("stdlib: a flat array of an odd length read as a dictionary (test_Dictionary_JSON)", Written.list([.string("a"), .bool(true), .string("b")]), as: [PlainLetter: Bool].self),
            .roundTrip("stdlib: an empty String key (test_Dictionary_JSON)", ["": 0]),
            .roundTrip("stdlib: nested dictionaries of arrays (test_Dictionary_JSON)", ["outer": ["inner": [1, 2], "empty": []]]),
        ]
    }

    /// Synthesized enum conformances, raw-value enums, and an unavailable case.
    static var enums: [CodableShape] {
        [
            .roundTrip("stdlib: an available case (CodableEnumUnavailableElement)", WithUnavailableCase.a),
            .roundTrip("stdlib: an available case spelled out (CodableEnumUnavailableElement)", ["a": [String: Int]()], as: WithUnavailableCase.self),
            .roundTrip("stdlib: an unavailable case spelled out (CodableEnumUnavailableElement)", ["b": ["_0": [String: Int]()]], as: WithUnavailableCase.self),
            .roundTrip("stdlib: payload labeled _0 then unlabeled (CodableInvalidKeys Foo5)", UnderscoreZeroFirst.foo(_0: 1, "x")),
            .roundTrip("stdlib: payload labeled _0 then unlabeled, read plainly (CodableInvalidKeys Foo5)", UnderscoreZeroFirst.foo(_0: 1, "x"), as: Read.self),
            .roundTrip("stdlib: payload labeled _0 and _1 (CodableInvalidKeys Foo6)", BothUnderscored.foo(_0: 2, _1: "y")),
            .roundTrip("stdlib: payload unlabeled then _1 (CodableInvalidKeys Foo7)", UnderscoreOneSecond.foo(3, _1: "z")),
            .roundTrip("stdlib: payload labeled _1 then _0 (CodableInvalidKeys Foo8)", SwappedUnderscores.foo(_1: 4, _0: "w")),
            .roundTrip("stdlib: payload labeled _1 then _0, read plainly (CodableInvalidKeys Foo8)", SwappedUnderscores.foo(_1: 4, _0: "w"), as: Read.self),
            .roundTrip("stdlib: payload unlabeled then _a0 (CodableInvalidKeys Foo10)", UnderscoreA0.foo(5, _a0: "v")),
            .roundTrip("stdlib: payload labeled a0 and qt (CodableInvalidKeys Foo12)", LabeledA0.foo(a0: 6, qt: "u")),
            .roundTrip("stdlib: payload labeled qt and a0 (CodableInvalidKeys Foo13)", A0Second.foo(qt: 7, a0: "t")),
            .roundTrip("stdlib: payload labeled _1 and a0 (CodableInvalidKeys Foo14)", UnderscoreOneThenA0.foo(_1: 8, a0: "s")),
            .roundTrip("stdlib: payload unlabeled then b0 (CodableInvalidKeys Foo16)", B0Second.foo(9, b0: "r")),
            .roundTrip("stdlib: a case without payload (synthesized enum)", Shape.point),
            .roundTrip("stdlib: a case with a labeled payload (synthesized enum)", Shape.circle(radius: 2.5)),
            .roundTrip("stdlib: a case with two unlabeled payloads (synthesized enum)", Shape.rectangle(3, 4)),
            .roundTrip("stdlib: a case with a nil optional payload (synthesized enum)", Shape.labeled("tag", tag: nil)),
            .roundTrip("stdlib: a case with a present optional payload (synthesized enum)", Shape.labeled("tag", tag: 7)),
            .roundTrip("stdlib: a recursive case (synthesized enum)", Shape.nested(.nested(.circle(radius: 1)))),
            .roundTrip("stdlib: a recursive case holding nil (synthesized enum)", Shape.nested(nil)),
            .roundTrip("stdlib: a case with an array of cases (synthesized enum)", Shape.group([.point, .rectangle(1, 2), .group([])])),
            .roundTrip("stdlib: a case read plainly (synthesized enum)", Shape.rectangle(3, 4), as: Read.self),
            .roundTrip("stdlib: two cases at once (synthesized enum)", ["point": [String: Int](), "circle": ["radius": 1]], as: Shape.self),
            .roundTrip("stdlib: an unknown case (synthesized enum)", ["triangle": [String: Int]()], as: Shape.self),
            .roundTrip("stdlib: a case missing its payload (synthesized enum)", ["circle": [String: Int]()], as: Shape.self),
            .roundTrip("stdlib: a case as a bare string (synthesized enum)", "point", as: Shape.self),
            .roundTrip("stdlib: String raw values (RawRepresentable)", [Suit.hearts, .clubs, .empty]),
            .roundTrip("stdlib: Int raw values (RawRepresentable)", [Rank.low, .ace, .king]),
            .roundTrip("stdlib: an unknown String raw value (RawRepresentable)", "diamonds", as: Suit.self),
            .roundTrip("stdlib: an unknown Int raw value in an array (RawRepresentable)", [1, 2], as: [Rank].self),
            .roundTrip("stdlib: a raw value of the wrong type (RawRepresentable)", 1, as: Suit.self),
        ]
    }

    /// Class hierarchies through super encoders and decoders, keyed and unkeyed.
    static var classes: [CodableShape] {
        [
            .roundTrip("stdlib: a subclass that does not override Codable (CodableMultifile)", DerivedWithoutCodable(baseMember: 2), as: Base.self),
            .roundTrip("stdlib: a base class (CodableMultifile)", Base(baseMember: 3)),
            .roundTrip("stdlib: a superclass under the default super key (superEncoder)", Car(brand: "Swift")),
            .roundTrip("stdlib: a superclass under the default super key, read plainly (superEncoder)", Car(brand: "Swift"), as: Read.self),
            .roundTrip("stdlib: a superclass under a key of its own (superEncoder(forKey:))", Truck(load: 12.5)),
            .roundTrip("stdlib: a superclass under a key of its own, read plainly (superEncoder(forKey:))", Truck(load: 12.5), as: Read.self),
            .roundTrip("stdlib: a superclass through an unkeyed super encoder (superEncoder)", Bike(gears: 21)),
            .roundTrip("stdlib: a superclass through an unkeyed super encoder, read plainly (superEncoder)", Bike(gears: 21), as: Read.self),
            .roundTrip("stdlib: subclasses in an array (superEncoder)", [Car(brand: "A"), Car(brand: "B", wheels: 3)]),
            .roundTrip("stdlib: a subclass read as its superclass (superDecoder)", Car(brand: "Swift"), as: Vehicle.self),
            .roundTrip("stdlib: a superclass read as a subclass (superDecoder)", Vehicle(wheels: 4), as: Car.self),
        ]
    }

    /// Nested optionals and explicit nulls.
    static var optionals: [CodableShape] {
        [
            .roundTrip("stdlib: Int?? holding nil inside (Optional)", Int??.some(nil)),
            .roundTrip("stdlib: Int?? holding a value (Optional)", Int??.some(1)),
            .roundTrip("stdlib: Int?? that is nil (Optional)", Int??.none),
            .roundTrip("stdlib: [Int??] of every depth (Optional)", [Int??.some(nil), nil, 1]),
            .roundTrip("stdlib: a model with Int?? holding nil inside (Optional)", DoublyOptional(value: .some(nil), note: nil)),
            .roundTrip("stdlib: a model with Int?? holding a value (Optional)", DoublyOptional(value: 5, note: "five")),
            .roundTrip("stdlib: a model with Int?? holding nil inside, read plainly (Optional)", DoublyOptional(value: .some(nil), note: nil), as: Read.self),
            .roundTrip("stdlib: a dictionary of optionals (Optional)", ["a": Int?.none, "b": 2]),
            .roundTrip("stdlib: optional strings in an array (Optional)", ["x", nil, "", nil] as [String?]),
            .roundTrip("stdlib: optional strings read as non-optional (Optional)", ["x", nil] as [String?], as: [String].self),
            .roundTrip("stdlib: a nil optional under a key with explicit null (TestJSONEncoder OptionalTopLevelWrapper)", WrappedOptional<Int>(nil)),
            .roundTrip("stdlib: a nil optional read as a required value (TestJSONEncoder OptionalTopLevelWrapper)", WrappedOptional<Int>(nil), as: Wrapped<Int>.self),
        ]
    }

    /// Sets, empty and nested collections, long and unusual strings, SIMD vectors and durations.
    static var collections: [CodableShape] {
        [
            .roundTrip("stdlib: a Set of Ints (Set)", Set([1, 2, 3])),
            .roundTrip("stdlib: an empty Set (Set)", Set<String>()),
            .roundTrip("stdlib: an array with duplicates read as a Set (Set)", [3, 1, 2, 1], as: Set<Int>.self),
            .roundTrip("stdlib: a Set of one read as an array (Set)", Set(["only"]), as: [String].self),
            .roundTrip("stdlib: an empty array inside an array (Array)", [[Int]()]),
            .roundTrip("stdlib: an empty dictionary inside an array (Array)", [[String: Int]()]),
            .roundTrip("stdlib: empty arrays three deep (Array)", [[[Int]()]]),
            .roundTrip("stdlib: an empty String (String)", ""),
            .roundTrip("stdlib: a long String (String)", String(repeating: "abc\u{E9}\u{1F600}", count: 2_000)),
            .roundTrip("stdlib: the largest scalar (String)", "\u{10FFFF}"),
            .roundTrip("stdlib: a decomposed accent (String)", ["e\u{301}"]),
            .roundTrip("stdlib: a decomposed accent read back as precomposed (String)", ["e\u{301}": 1], as: [String: Int].self),
            .roundTrip("stdlib: SIMD2 of Floats (SIMD)", SIMD2<Float>(1.5, -2)),
            .roundTrip("stdlib: SIMD3 of Doubles (SIMD)", SIMD3<Double>(0.1, 0.2, 0.3)),
            .roundTrip("stdlib: SIMD4 of Int32 (SIMD)", SIMD4<Int32>(.min, -1, 0, .max)),
            .roundTrip("stdlib: SIMD16 of UInt8 (SIMD)", SIMD16<UInt8>(repeating: 255)),
            .roundTrip("stdlib: SIMD2 read as [Float] (SIMD)", SIMD2<Float>(1.5, -2), as: [Float].self),
            .roundTrip("stdlib: three elements read as SIMD2 (SIMD)", [1, 2, 3], as: SIMD2<Int>.self),
            .roundTrip("stdlib: one element read as SIMD2 (SIMD)", [1], as: SIMD2<Int>.self),
            .roundTrip("stdlib: a Duration of seconds (Duration)", Duration.seconds(5)),
            .roundTrip("stdlib: a negative Duration (Duration)", Duration.milliseconds(-1500)),
            .roundTrip("stdlib: a Duration read plainly (Duration)", Duration.nanoseconds(7), as: Read.self),
        ]
    }

    /// Integers and floats at their extremes, and reads of one scalar type as another.
    static var scalars: [CodableShape] {
        [
            .roundTrip("stdlib: Int.min (Int)", Int.min),
            .roundTrip("stdlib: UInt.max (UInt)", UInt.max),
            .roundTrip("stdlib: Int8.min (Int8)", Int8.min),
            .roundTrip("stdlib: UInt16.max (UInt16)", UInt16.max),
            .roundTrip("stdlib: Int32.min (Int32)", Int32.min),
            .roundTrip("stdlib: UInt32.max read as Int16 (UInt32)", UInt32.max, as: Int16.self),
            .roundTrip("stdlib: the least nonzero Float (Float)", Float.leastNonzeroMagnitude),
            .roundTrip("stdlib: the least nonzero Double (Double)", Double.leastNonzeroMagnitude),
            .roundTrip("stdlib: negative zero (Double)", -0.0),
            .roundTrip("stdlib: negative zero read plainly (Double)", [-0.0], as: [Read].self),
            .roundTrip("stdlib: Float pi (Float)", Float.pi),
            .roundTrip("stdlib: Float pi read as Double (Float)", Float.pi, as: Double.self),
            .roundTrip("stdlib: Double pi read as Float (Double)", Double.pi, as: Float.self),
            .roundTrip("stdlib: the least nonzero Float read as Double (Float)", Float.leastNonzeroMagnitude, as: Double.self),
            .roundTrip("stdlib: the Float epsilon (Float)", Float.ulpOfOne),
            .roundTrip("stdlib: 2^53 + 1 as Int read as Double (Double)", 9_007_199_254_740_993, as: Double.self),
            .roundTrip("stdlib: Bool read as String (Bool)", true, as: String.self),
            .roundTrip("stdlib: Int read as String (Int)", 42, as: String.self),
            .roundTrip("stdlib: String read as Int (String)", "42", as: Int.self),
            .roundTrip("stdlib: Int read as Decimal (Decimal)", Int.max, as: Decimal.self),
            .roundTrip("stdlib: Decimal read as Double (Decimal)", Decimal(string: "0.1")!, as: Double.self),
            .roundTrip("stdlib: Decimal with many digits read as Int (Decimal)", Decimal(string: "12345678901234567890.5")!, as: Int.self),
        ]
    }

    /// Values under keys as the standard library JSON tests wrap them, and odd key names.
    static var wrappers: [CodableShape] {
        [
            .roundTrip("stdlib: switch off under a key (TestJSONEncoder testEncodingTopLevelSingleValueEnum)", Wrapped(Switch.off)),
            .roundTrip("stdlib: switch on under a key (TestJSONEncoder testEncodingTopLevelSingleValueEnum)", Wrapped(Switch.on)),
            .roundTrip("stdlib: tri-state true under a key (TestJSONEncoder testEncodingTopLevelNullableType)", Wrapped(TriState.yes)),
            .roundTrip("stdlib: tri-state null under a key (TestJSONEncoder testEncodingTopLevelNullableType)", Wrapped(TriState.unknown)),
            .roundTrip("stdlib: tri-state null under a key, optional (TestJSONEncoder testEncodingTopLevelNullableType)", WrappedOptional(TriState.unknown)),
            .roundTrip("stdlib: Date under a key, optional (TestJSONEncoder testEncodingDate)", WrappedOptional(Date(timeIntervalSinceReferenceDate: 512_345.125))),
            .roundTrip("stdlib: Data under a key, optional (TestJSONEncoder testEncodingDataBase64)", WrappedOptional(Data([0xDE, 0xAD, 0xBE, 0xEF]))),
            .roundTrip("stdlib: Decimal 1e127 under a key, optional (TestJSONEncoder testInterceptDecimal)", WrappedOptional(Decimal(sign: .plus, exponent: 127, significand: 1))),
            .roundTrip("stdlib: URL under a key, optional (TestJSONEncoder testInterceptURL)", WrappedOptional(URL(string: "http://swift.org")!)),
            .roundTrip("stdlib: Float infinity under a key (TestJSONEncoder testEncodingNonConformingFloats)", Wrapped(Float.infinity)),
            .roundTrip("stdlib: Double NaN under a key, optional (TestJSONEncoder testEncodingNonConformingFloats)", WrappedOptional(Double.nan), as: WrappedOptional<Int>.self),
            .roundTrip("stdlib: URLs through a single value container (TestJSONEncoder Mapping)", URLMapping(values: ["Apple": URL(string: "http://apple.com")!, "localhost": URL(string: "http://127.0.0.1")!])),
            .roundTrip("stdlib: Int read as Date or else Int (TestJSONEncoder testDecoderStateThrowOnDecodeCustomDate)", Wrapped(1), as: Either<Wrapped<Date>, Wrapped<Int>>.self),
            .roundTrip("stdlib: Int read as Data or else Int (TestJSONEncoder testDecoderStateThrowOnDecodeCustomData)", Wrapped(1), as: Either<Wrapped<Data>, Wrapped<Int>>.self),
            .roundTrip("stdlib: [Int] read as [String] or else [Int] (TestJSONEncoder testDecoderStateThrowOnDecode)", [1, 2, 3], as: Either<[String], [Int]>.self),
            .roundTrip("stdlib: integer-backed coding keys (CodingKey)", IntBackedKeys(first: "one", second: 2)),
            .roundTrip("stdlib: integer-backed coding keys read plainly (CodingKey)", IntBackedKeys(first: "one", second: 2), as: Read.self),
            .roundTrip("stdlib: key names with spaces, punctuation, a URL, nothing and emoji (CodingKey)", OddKeyNames(fullName: "Jane", link: "x", dotted: 1, blank: true, greek: 0.5)),
            .roundTrip("stdlib: odd key names read as a dictionary (CodingKey)", OddKeyNames(fullName: "Jane", link: "x", dotted: 1, blank: true, greek: 0.5), as: Read.self),
            .roundTrip("stdlib: Foundation scalars under keys (TestJSONEncoder)", FoundationScalars(date: Date(timeIntervalSinceReferenceDate: -1.5), data: Data(), url: URL(string: "https://swift.org/a?b=c#d")!, uuid: sampleUUID, decimal: Decimal(string: "-0.0001")!)),
            .roundTrip("stdlib: Foundation scalars read plainly (TestJSONEncoder)", FoundationScalars(date: Date(timeIntervalSinceReferenceDate: -1.5), data: Data([1, 2, 3]), url: URL(string: "https://swift.org/a?b=c#d")!, uuid: sampleUUID, decimal: Decimal(string: "-0.0001")!), as: Read.self),
        ]
    }

    /// Foundation values from CodableTests not covered by the corelibs shapes.
    static var foundationValues: [CodableShape] {
        [
            .roundTrip("stdlib: DateInterval of zero length (test_DateInterval_JSON)", DateInterval(start: Date(timeIntervalSinceReferenceDate: 0), duration: 0)),
            .roundTrip("stdlib: DateInterval from the distant past (test_DateInterval_JSON)", DateInterval(start: .distantPast, end: Date(timeIntervalSinceReferenceDate: 1000))),
            .roundTrip("stdlib: DateInterval to the distant future (test_DateInterval_JSON)", DateInterval(start: Date(timeIntervalSinceReferenceDate: 1000), end: .distantFuture)),
            .roundTrip("stdlib: DateInterval over all time (test_DateInterval_JSON)", DateInterval(start: .distantPast, end: .distantFuture)),
            .roundTrip("stdlib: least finite Decimal under a key (test_Decimal_JSON)", Wrapped(Decimal.leastFiniteMagnitude)),
            .roundTrip("stdlib: greatest finite Decimal under a key (test_Decimal_JSON)", Wrapped(Decimal.greatestFiniteMagnitude)),
            .roundTrip("stdlib: least normal Decimal under a key (test_Decimal_JSON)", Wrapped(Decimal.leastNormalMagnitude)),
            .roundTrip("stdlib: least nonzero Decimal under a key (test_Decimal_JSON)", Wrapped(Decimal.leastNonzeroMagnitude)),
            .roundTrip("stdlib: Decimal() under a key (test_Decimal_JSON)", Wrapped(Decimal())),
            .roundTrip("stdlib: IndexSet of several ranges (test_IndexSet_JSON)", IndexSet([1, 3, 4, 5, 9])),
            .roundTrip("stdlib: NSRange of five and twenty (test_NSRange_JSON)", NSRange(location: 5, length: 20)),
            .roundTrip("stdlib: en Locale (test_Locale_JSON)", Locale(identifier: "en")),
            .roundTrip("stdlib: uk Locale (test_Locale_JSON)", Locale(identifier: "uk")),
            .roundTrip("stdlib: fr_FR Locale (test_Locale_JSON)", Locale(identifier: "fr_FR")),
            .roundTrip("stdlib: name components of a nickname only (test_PersonNameComponents_JSON)", nameComponents(nickname: "Janie")),
            .roundTrip("stdlib: name components read plainly (test_PersonNameComponents_JSON)", nameComponents(given: "John", family: "Appleseed"), as: Read.self),
            .roundTrip("stdlib: an invalid time zone identifier (test_TimeZone_JSON_Errors)", ["identifier": "invalid-time-zone"], as: TimeZone.self),
            .roundTrip("stdlib: a fixed-offset time zone (test_TimeZone_JSON)", TimeZone(secondsFromGMT: -3600)!),
            .roundTrip("stdlib: a URL with a non-ASCII host (test_URL_JSON_Errors)", "http://swîft.org", as: URL.self),
            .roundTrip("stdlib: an empty string read as URL (test_URL_JSON_Errors)", "", as: URL.self),
            .roundTrip("stdlib: web URL under a key (test_URL_JSON)", Wrapped(URL(string: "http://swift.org")!)),
            .roundTrip("stdlib: root file URL under a key (test_URL_JSON)", Wrapped(URL(fileURLWithPath: "/"))),
            .roundTrip("stdlib: relative URL made absolute under a key (test_URL_JSON)", Wrapped(URL(string: "documentation", relativeTo: URL(string: "http://swift.org")!)!.absoluteURL)),
            .roundTrip("stdlib: Chinese calendar (test_Calendar_JSON)", calendar(.chinese)),
            .roundTrip("stdlib: Coptic calendar (test_Calendar_JSON)", calendar(.coptic)),
            .roundTrip("stdlib: Ethiopic Amete Mihret calendar (test_Calendar_JSON)", calendar(.ethiopicAmeteMihret)),
            .roundTrip("stdlib: Islamic civil calendar (test_Calendar_JSON)", calendar(.islamicCivil)),
            .roundTrip("stdlib: Persian calendar (test_Calendar_JSON)", calendar(.persian)),
            .roundTrip("stdlib: Republic of China calendar (test_Calendar_JSON)", calendar(.republicOfChina)),
            .roundTrip("stdlib: letters set (test_CharacterSet_JSON)", CharacterSet.letters),
            .roundTrip("stdlib: newlines set (test_CharacterSet_JSON)", CharacterSet.newlines),
            .roundTrip("stdlib: punctuation set (test_CharacterSet_JSON)", CharacterSet.punctuationCharacters),
            .roundTrip("stdlib: UUID wrapper under a key (test_UUID_JSON)", Wrapped(UUIDKey(sampleUUID))),
        ]
    }

    /// Never, where the platform has its conformance.
    static var neverShapes: [CodableShape] {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return [] }
        return [
            .roundTrip("stdlib: a value for a Never property (test_Never)", ["no": "never"], as: Nope.self),
            .roundTrip("stdlib: no value for a Never property (test_Never)", [String: String](), as: Nope.self),
        ]
    }
}
