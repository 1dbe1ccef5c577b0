import Foundation

// Shapes written from the values and models that swift-foundation's JSON encoder suite
// (Tests/FoundationEssentialsTests/JSONEncoderTests.swift) round-trips, kept to the default
// strategies. Every model here is written anew for this suite.

extension ConformanceShapes {
    static let foundationJSON: [CodableShape] = FoundationJSONModels.shapes
}

/// The models of the swift-foundation JSON shapes, and the shapes themselves.
enum FoundationJSONModels {
    static var shapes: [CodableShape] {
        topLevel + structured + numbers + int128 + strings + keys + containers + errors + keptContainers
    }

    // MARK: - Helpers

    /// A key of any name, for models that choose their keys at run time.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) {
            stringValue = "\(intValue)"
            self.intValue = intValue
        }
    }

    /// Whatever was stored, read without a model of its own: what a reader of the raw JSON sees.
    enum Stored: Decodable, Equatable {
        case null
        case bool(Bool)
        case integer(Int64)
        case unsigned(UInt64)
        case real(Double)
        case string(String)
        case array([Stored])
        case object([String: Stored])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else if let value = try? container.decode(UInt64.self) {
                self = .unsigned(value)
            } else if let value = try? container.decode(Double.self) {
                self = .real(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([Stored].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: Stored].self))
            }
        }
    }

    // MARK: - Top-level empty and single-value types

    /// A struct with nothing in it: stored as an empty object.
    struct EmptyStruct: Codable, Equatable {}

    /// A class with nothing in it: stored as an empty object.
    final class EmptyClass: Codable, Equatable {
        init() {}
        static func == (lhs: EmptyClass, rhs: EmptyClass) -> Bool { true }
    }

    /// An on/off switch stored as a single Bool.
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

    /// A timestamp stored as a single Double.
    struct Timestamp: Codable, Equatable {
        var seconds: Double

        init(_ seconds: Double) { self.seconds = seconds }

        init(from decoder: any Decoder) throws {
            seconds = try decoder.singleValueContainer().decode(Double.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(seconds)
        }
    }

    /// A reference-typed counter stored as a single Int.
    final class Counter: Codable, Equatable {
        var count: Int

        init(count: Int = 0) { self.count = count }

        init(from decoder: any Decoder) throws {
            count = try decoder.singleValueContainer().decode(Int.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(count)
        }

        static func == (lhs: Counter, rhs: Counter) -> Bool { lhs.count == rhs.count }
    }

    /// A tri-state stored as a Bool or as null.
    enum EnhancedBool: Codable, Equatable {
        case yes, no, fileNotFound

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .fileNotFound
            } else {
                self = try container.decode(Bool.self) ? .yes : .no
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .yes: try container.encode(true)
            case .no: try container.encode(false)
            case .fileNotFound: try container.encodeNil()
            }
        }
    }

    // MARK: - Structured types

    /// A postal address: a flat keyed model.
    struct Address: Codable, Equatable {
        var street: String
        var city: String
        var state: String
        var zipCode: Int
        var country: String

        static var sample: Address {
            Address(street: "1 Infinite Loop", city: "Cupertino", state: "CA", zipCode: 95014, country: "United States")
        }
    }

    /// A person: a class whose subclass shares its encoder and decoder.
    class Person: Codable, Equatable {
        let name: String
        let email: String
        let website: URL?

        init(name: String, email: String, website: URL? = nil) {
            self.name = name
            self.email = email
            self.website = website
        }

        func matches(_ other: Person) -> Bool {
            name == other.name && email == other.email && website == other.website
        }

        static func == (lhs: Person, rhs: Person) -> Bool {
            type(of: lhs) == type(of: rhs) && lhs.matches(rhs)
        }
    }

    /// An employee: writes its id into the same container its superclass writes into.
    final class Employee: Person {
        let id: Int

        init(name: String, email: String, website: URL? = nil, id: Int) {
            self.id = id
            super.init(name: name, email: email, website: website)
        }

        private enum CodingKeys: String, CodingKey { case id }

        required init(from decoder: any Decoder) throws {
            id = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .id)
            try super.init(from: decoder)
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try super.encode(to: encoder)
        }

        override func matches(_ other: Person) -> Bool {
            guard let other = other as? Employee, other.id == id else { return false }
            return super.matches(other)
        }

        static var sample: Employee {
            Employee(name: "Johnny Appleseed", email: "appleseed@apple.com", id: 42)
        }
    }

    /// A company: nested models, one of them an array of subclass instances.
    struct Company: Codable, Equatable {
        var address: Address
        var employees: [Employee]
    }

    /// Reads a person through a metatype that is really `Employee`'s, and says which class came back.
    struct DynamicTypeProbe: Decodable, Equatable {
        var className: String
        var id: Int?

        init(from decoder: any Decoder) throws {
            let type: Person.Type = Employee.self
            let person = try decoder.singleValueContainer().decode(type)
            className = String(describing: Swift.type(of: person))
            id = (person as? Employee)?.id
        }
    }

    /// Numbers stored as an array through a single value container.
    struct LuckyNumbers: Codable, Equatable {
        var values: [Int]

        init(values: [Int] = [4, 8, 15, 16, 23, 42]) { self.values = values }

        init(from decoder: any Decoder) throws {
            values = try decoder.singleValueContainer().decode([Int].self)
            guard values == [4, 8, 15, 16, 23, 42] else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "Wrong numbers"))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(values)
        }
    }

    /// A mapping stored as an object through a single value container.
    final class Mapping: Codable, Equatable {
        let values: [String: Int]

        init(values: [String: Int]) { self.values = values }

        init(from decoder: any Decoder) throws {
            values = try decoder.singleValueContainer().decode([String: Int].self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(values)
        }

        static func == (lhs: Mapping, rhs: Mapping) -> Bool { lhs.values == rhs.values }
    }

    /// Opens keyed and unkeyed containers at every level and leaves them empty, directly or
    /// through a super encoder.
    struct NestedContainersWriter: Encodable {
        var throughSuperEncoder: Bool

        enum TopKeys: Int, CodingKey { case a, b, c }
        enum InnerKeys: Int, CodingKey { case one, two }

        func encode(to encoder: any Encoder) throws {
            if throughSuperEncoder {
                var top = encoder.container(keyedBy: TopKeys.self)
                writeNested(into: top.superEncoder(forKey: .a))
            } else {
                writeNested(into: encoder)
            }
        }

        private func writeNested(into encoder: any Encoder) {
            var first = encoder.container(keyedBy: TopKeys.self)
            var keyed = first.nestedContainer(keyedBy: InnerKeys.self, forKey: .a)
            _ = keyed.nestedContainer(keyedBy: InnerKeys.self, forKey: .one)
            _ = keyed.nestedUnkeyedContainer(forKey: .two)
            var unkeyed = first.nestedUnkeyedContainer(forKey: .b)
            _ = unkeyed.nestedContainer(keyedBy: InnerKeys.self)
            _ = unkeyed.nestedUnkeyedContainer()
        }
    }

    /// Arrays of each primitive kind, written directly.
    struct Arrays: Codable, Equatable {
        var integers: [Int]
        var doubles: [Double]
        var strings: [String]
    }

    /// A level that writes its one child into a nested unkeyed container under its key.
    struct Level1: Codable, Equatable {
        var level2: Level2

        struct Level2: Codable, Equatable { var name: String }

        enum CodingKeys: String, CodingKey { case level2 }

        init(level2: Level2) { self.level2 = level2 }

        init(from decoder: any Decoder) throws {
            var nested = try decoder.container(keyedBy: CodingKeys.self).nestedUnkeyedContainer(forKey: .level2)
            level2 = try nested.decode(Level2.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var nested = container.nestedUnkeyedContainer(forKey: .level2)
            try nested.encode(level2)
        }
    }

    /// Two nested keyed containers asked for under the same key, each with its own keys.
    struct TwoNestedUnderOneKey: Codable, Equatable {
        var first: String
        var second: String

        enum TopKeys: String, CodingKey { case top }
        enum FirstKeys: String, CodingKey { case first }
        enum SecondKeys: String, CodingKey { case second }

        init(first: String, second: String) {
            self.first = first
            self.second = second
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: TopKeys.self)
            first = try container.nestedContainer(keyedBy: FirstKeys.self, forKey: .top).decode(String.self, forKey: .first)
            second = try container.nestedContainer(keyedBy: SecondKeys.self, forKey: .top).decode(String.self, forKey: .second)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: TopKeys.self)
            var firstNested = container.nestedContainer(keyedBy: FirstKeys.self, forKey: .top)
            try firstNested.encode(first, forKey: .first)
            var secondNested = container.nestedContainer(keyedBy: SecondKeys.self, forKey: .top)
            try secondNested.encode(second, forKey: .second)
        }
    }

    /// Writes a model under a key, then asks for a nested keyed container under the same key
    /// and adds to it.
    struct ValueThenNestedUnderOneKey: Encodable {
        enum Keys: String, CodingKey { case container, somethingElse }
        struct Nested: Encodable { var foo = "Test" }

        func encode(to encoder: any Encoder) throws {
            var top = encoder.container(keyedBy: Keys.self)
            try top.encode("Foo", forKey: .somethingElse)
            try top.encode(Nested(), forKey: .container)
            var again = top.nestedContainer(keyedBy: Keys.self, forKey: .container)
            try again.encode("SecondAgain", forKey: .somethingElse)
        }
    }

    /// Writes a dictionary through a single value container, then amends it through a keyed one.
    struct SingleValueThenKeyed: Encodable {
        enum Keys: String, CodingKey { case a }

        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(["a": "b", "other": "foo"])
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode("c", forKey: .a)
        }
    }

    /// Super encoders taken from a keyed and an unkeyed container, some filled after later values.
    struct SuperEncoders: Encodable {
        enum Keys: String, CodingKey { case firstSuper, secondSuper, unkeyed, direct }

        func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: Keys.self)
            let keyedSuper1 = keyed.superEncoder(forKey: .firstSuper)
            let keyedSuper2 = keyed.superEncoder(forKey: .secondSuper)
            var keyedSingle1 = keyedSuper1.singleValueContainer()
            var keyedSingle2 = keyedSuper2.singleValueContainer()
            try keyedSingle1.encode("First")
            try keyedSingle2.encode("Second")

            var unkeyed = keyed.nestedUnkeyedContainer(forKey: .unkeyed)
            try unkeyed.encode(0)
            let unkeyedSuper1 = unkeyed.superEncoder()
            let unkeyedSuper2 = unkeyed.superEncoder()
            try unkeyed.encode(42)
            var unkeyedSingle1 = unkeyedSuper1.singleValueContainer()
            var unkeyedSingle2 = unkeyedSuper2.singleValueContainer()
            try unkeyedSingle1.encode("First")
            try unkeyedSingle2.encode("Second")

            try ["direct": "super"].encode(to: keyed.superEncoder(forKey: .direct))
        }
    }

    /// Writes something under a key, then writes 42 under the same key (last write wins).
    struct RedundantKey: Encodable {
        enum FirstWrite { case value, keyedContainer, unkeyedContainer }
        var firstWrite: FirstWrite
        var secondThroughSuperEncoder: Bool

        enum Keys: String, CodingKey { case key }

        func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: Keys.self)
            switch firstWrite {
            case .value: try keyed.encode(0, forKey: .key)
            case .keyedContainer: _ = keyed.nestedContainer(keyedBy: Keys.self, forKey: .key)
            case .unkeyedContainer: _ = keyed.nestedUnkeyedContainer(forKey: .key)
            }
            if secondThroughSuperEncoder {
                var single = keyed.superEncoder(forKey: .key).singleValueContainer()
                try single.encode(42)
            } else {
                try keyed.encode(42, forKey: .key)
            }
        }
    }

    /// A dictionary keyed by a Codable struct (stored as a flat array of keys and values).
    struct NonStringKeys: Codable, Equatable {
        struct Key: Codable, Hashable { var x: String }
        var dict: [Key: String]
    }

    /// A value that fails to encode, written with `try?` before nils under other keys.
    struct AlwaysFails: Encodable {
        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(0, .init(codingPath: encoder.codingPath, debugDescription: "never encodes"))
        }
    }

    /// A value that failed to encode, written with `try?`, then one or two explicit nils. (The
    /// suite's own case puts the failing value in a dictionary; this toolchain's JSONEncoder
    /// traps on that, so the failing value stands alone here.)
    struct NilsAfterFailedValue: Encodable {
        var nilCount: Int
        enum Keys: String, CodingKey { case failed, nilField1, nilField2 }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try? container.encode(AlwaysFails(), forKey: .failed)
            try? container.encode(nil as Int?, forKey: .nilField1)
            if nilCount > 1 { try? container.encode(nil as Int?, forKey: .nilField2) }
        }
    }

    /// A type that writes nothing at all.
    struct EncodesNothing: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    // MARK: - Optionals of every kind

    /// One optional of each primitive kind, and an array.
    struct OptionalsOfEveryKind: Equatable {
        var bool: Bool?, string: String?
        var i: Int?, i8: Int8?, i16: Int16?, i32: Int32?, i64: Int64?
        var u: UInt?, u8: UInt8?, u16: UInt16?, u32: UInt32?, u64: UInt64?
        var float: Float?, double: Double?, other: [Int]?

        static var allNils: OptionalsOfEveryKind { OptionalsOfEveryKind() }
        static var allOnes: OptionalsOfEveryKind {
            OptionalsOfEveryKind(bool: true, string: "1", i: 1, i8: 1, i16: 1, i32: 1, i64: 1, u: 1, u8: 1, u16: 1, u32: 1, u64: 1, float: 1, double: 1, other: [1])
        }

        enum Keys: String, CodingKey { case bool, string, i, i8, i16, i32, i64, u, u8, u16, u32, u64, float, double, other }
    }

    /// Writes the optionals keyed or unkeyed, with explicit nulls or leaving nils out.
    struct OptionalsWriter: Encodable {
        var values: OptionalsOfEveryKind
        var keyed: Bool
        var writesNulls: Bool

        func encode(to encoder: any Encoder) throws {
            let v = values
            typealias K = OptionalsOfEveryKind.Keys
            switch (keyed, writesNulls) {
            case (true, true):
                var c = encoder.container(keyedBy: K.self)
                try c.encode(v.bool, forKey: .bool)
                try c.encode(v.string, forKey: .string)
                try c.encode(v.i, forKey: .i)
                try c.encode(v.i8, forKey: .i8)
                try c.encode(v.i16, forKey: .i16)
                try c.encode(v.i32, forKey: .i32)
                try c.encode(v.i64, forKey: .i64)
                try c.encode(v.u, forKey: .u)
                try c.encode(v.u8, forKey: .u8)
                try c.encode(v.u16, forKey: .u16)
                try c.encode(v.u32, forKey: .u32)
                try c.encode(v.u64, forKey: .u64)
                try c.encode(v.float, forKey: .float)
                try c.encode(v.double, forKey: .double)
                try c.encode(v.other, forKey: .other)
            case (true, false):
                var c = encoder.container(keyedBy: K.self)
                try c.encodeIfPresent(v.bool, forKey: .bool)
                try c.encodeIfPresent(v.string, forKey: .string)
                try c.encodeIfPresent(v.i, forKey: .i)
                try c.encodeIfPresent(v.i8, forKey: .i8)
                try c.encodeIfPresent(v.i16, forKey: .i16)
                try c.encodeIfPresent(v.i32, forKey: .i32)
                try c.encodeIfPresent(v.i64, forKey: .i64)
                try c.encodeIfPresent(v.u, forKey: .u)
                try c.encodeIfPresent(v.u8, forKey: .u8)
                try c.encodeIfPresent(v.u16, forKey: .u16)
                try c.encodeIfPresent(v.u32, forKey: .u32)
                try c.encodeIfPresent(v.u64, forKey: .u64)
                try c.encodeIfPresent(v.float, forKey: .float)
                try c.encodeIfPresent(v.double, forKey: .double)
                try c.encodeIfPresent(v.other, forKey: .other)
            case (false, true):
                var c = encoder.unkeyedContainer()
                try c.encode(v.bool)
                try c.encode(v.string)
                try c.encode(v.i)
                try c.encode(v.i8)
                try c.encode(v.i16)
                try c.encode(v.i32)
                try c.encode(v.i64)
                try c.encode(v.u)
                try c.encode(v.u8)
                try c.encode(v.u16)
                try c.encode(v.u32)
                try c.encode(v.u64)
                try c.encode(v.float)
                try c.encode(v.double)
                try c.encode(v.other)
            case (false, false):
                var c = encoder.unkeyedContainer()
                if let bool = v.bool { try c.encode(bool) }
                if let string = v.string { try c.encode(string) }
                if let i = v.i { try c.encode(i) }
                if let i8 = v.i8 { try c.encode(i8) }
                if let i16 = v.i16 { try c.encode(i16) }
                if let i32 = v.i32 { try c.encode(i32) }
                if let i64 = v.i64 { try c.encode(i64) }
                if let u = v.u { try c.encode(u) }
                if let u8 = v.u8 { try c.encode(u8) }
                if let u16 = v.u16 { try c.encode(u16) }
                if let u32 = v.u32 { try c.encode(u32) }
                if let u64 = v.u64 { try c.encode(u64) }
                if let float = v.float { try c.encode(float) }
                if let double = v.double { try c.encode(double) }
                if let other = v.other { try c.encode(other) }
            }
        }
    }

    /// Reads the optionals from a keyed container with `decodeIfPresent`.
    struct KeyedOptionalsReader: Decodable, Equatable {
        var values = OptionalsOfEveryKind()

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: OptionalsOfEveryKind.Keys.self)
            values.bool = try c.decodeIfPresent(Bool.self, forKey: .bool)
            values.string = try c.decodeIfPresent(String.self, forKey: .string)
            values.i = try c.decodeIfPresent(Int.self, forKey: .i)
            values.i8 = try c.decodeIfPresent(Int8.self, forKey: .i8)
            values.i16 = try c.decodeIfPresent(Int16.self, forKey: .i16)
            values.i32 = try c.decodeIfPresent(Int32.self, forKey: .i32)
            values.i64 = try c.decodeIfPresent(Int64.self, forKey: .i64)
            values.u = try c.decodeIfPresent(UInt.self, forKey: .u)
            values.u8 = try c.decodeIfPresent(UInt8.self, forKey: .u8)
            values.u16 = try c.decodeIfPresent(UInt16.self, forKey: .u16)
            values.u32 = try c.decodeIfPresent(UInt32.self, forKey: .u32)
            values.u64 = try c.decodeIfPresent(UInt64.self, forKey: .u64)
            values.float = try c.decodeIfPresent(Float.self, forKey: .float)
            values.double = try c.decodeIfPresent(Double.self, forKey: .double)
            values.other = try c.decodeIfPresent([Int].self, forKey: .other)
        }
    }

    /// Reads the optionals in order from an unkeyed container with `decodeIfPresent`.
    struct UnkeyedOptionalsReader: Decodable, Equatable {
        var values = OptionalsOfEveryKind()

        init(from decoder: any Decoder) throws {
            var c = try decoder.unkeyedContainer()
            values.bool = try c.decodeIfPresent(Bool.self)
            values.string = try c.decodeIfPresent(String.self)
            values.i = try c.decodeIfPresent(Int.self)
            values.i8 = try c.decodeIfPresent(Int8.self)
            values.i16 = try c.decodeIfPresent(Int16.self)
            values.i32 = try c.decodeIfPresent(Int32.self)
            values.i64 = try c.decodeIfPresent(Int64.self)
            values.u = try c.decodeIfPresent(UInt.self)
            values.u8 = try c.decodeIfPresent(UInt8.self)
            values.u16 = try c.decodeIfPresent(UInt16.self)
            values.u32 = try c.decodeIfPresent(UInt32.self)
            values.u64 = try c.decodeIfPresent(UInt64.self)
            values.float = try c.decodeIfPresent(Float.self)
            values.double = try c.decodeIfPresent(Double.self)
            values.other = try c.decodeIfPresent([Int].self)
        }
    }

    // MARK: - Keys

    /// Writes one string under a key named at run time.
    struct SingleKeyWriter: Codable, Equatable {
        var keyName: String
        var value = "test"

        init(keyName: String, value: String = "test") {
            self.keyName = keyName
            self.value = value
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            guard let key = container.allKeys.first else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no key"))
            }
            keyName = key.stringValue
            value = try container.decode(String.self, forKey: key)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(value, forKey: AnyKey(keyName))
        }
    }

    /// Writes `"camelCaseKey": name` and then `name: true`.
    struct KeyNamingWriter: Encodable {
        var keyName: String

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(keyName, forKey: AnyKey("camelCaseKey"))
            try container.encode(true, forKey: AnyKey(keyName))
        }
    }

    /// Reads the name of a key from one value and then looks that key up.
    struct KeyNamedByValue: Decodable, Equatable {
        var found: Bool

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            let name = try container.decode(String.self, forKey: AnyKey("camelCaseKey"))
            found = try container.decode(Bool.self, forKey: AnyKey(name))
        }
    }

    /// Three levels of keyed models with a run-time key at the bottom.
    struct OuterValue: Encodable { var outerValue: NestedValue }
    struct NestedValue: Encodable { var nestedValue: SingleKeyWriter }

    /// A model that writes two keys and reads back how many keys it finds.
    struct KeyCounter: Codable, Equatable {
        var oneTwo: String
        var numberOfKeys: Int

        enum CodingKeys: String, CodingKey { case oneTwo, oneTwoThree }

        init(oneTwo: String, numberOfKeys: Int) {
            self.oneTwo = oneTwo
            self.numberOfKeys = numberOfKeys
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            oneTwo = try container.decode(String.self, forKey: .oneTwo)
            numberOfKeys = container.allKeys.count
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(oneTwo, forKey: .oneTwo)
            try container.encode("test2", forKey: .oneTwoThree)
        }
    }

    /// Writes true under "café" spelled precomposed, then false under it spelled decomposed.
    struct CanonicallyEqualKeys: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(true, forKey: AnyKey("caf\u{E9}"))
            try container.encode(false, forKey: AnyKey("cafe\u{301}"))
        }
    }

    /// A model with a camel-case key, and one holding a string with a NUL in it.
    struct CamelCaseHolder: Codable, Equatable { var thisIsCamelCase: String }
    struct StringHolder: Codable, Equatable { var s: String }

    // MARK: - Decoding failures and recoveries

    /// A model that wants an Int where a writer may put something else.
    struct IntHolder: Codable, Equatable { var intValue: Int }
    struct IntHolderNested: Codable, Equatable { var nestedValue: IntHolder }

    /// A model with a Double, to fail encoding on non-finite values.
    struct Measured: Codable, Equatable { var someValue: Double }
    struct MeasuredNested: Codable, Equatable { var nestedValue: Measured }

    /// Throws an error of its own when the string it reads is not "foo".
    struct CheckedString: Decodable, Equatable {
        enum Failure: Error { case unexpectedString }
        enum CodingKeys: String, CodingKey { case checkedString }
        var checkedString: String

        init(from decoder: any Decoder) throws {
            let string = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .checkedString)
            guard string == "foo" else { throw Failure.unexpectedString }
            checkedString = string
        }
    }

    /// Reads a single string where a writer put an object.
    struct SingleStringReader: Decodable, Equatable {
        var value: String
        init(from decoder: any Decoder) throws {
            value = try decoder.singleValueContainer().decode(String.self)
        }
    }

    /// Reads an optional through a super decoder and treats `valueNotFound` as nil.
    struct OptionalViaSuperDecoder: Decodable, Equatable {
        var a: Bool
        var nope: String?

        enum CodingKeys: String, CodingKey { case a, nope }

        init(from decoder: any Decoder) throws {
            let keyed = try decoder.container(keyedBy: CodingKeys.self)
            a = try keyed.decode(Bool.self, forKey: .a)
            do {
                nope = try keyed.superDecoder(forKey: .nope).singleValueContainer().decode(String.self)
            } catch DecodingError.valueNotFound {
                nope = nil
            }
        }
    }

    /// The writer for ``OptionalViaSuperDecoder``.
    struct FlagAndNote: Encodable {
        var a: Bool
        var nope: String?
    }

    /// Checks for nil twice before each value of an unkeyed container.
    struct RepeatedNilChecks: Decodable, Equatable {
        enum Failure: Error { case unexpectedNil }
        var values: [Int] = []

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            while !container.isAtEnd {
                guard try !container.decodeNil(), try !container.decodeNil() else { throw Failure.unexpectedNil }
                values.append(try container.decode(Int.self))
            }
        }
    }

    /// Keeps its unkeyed container past `init(from:)` and reads it only when compared.
    struct ContainerKeptPastInit: Decodable, Equatable, CustomStringConvertible {
        let container: any UnkeyedDecodingContainer

        init(from decoder: any Decoder) throws {
            container = try decoder.unkeyedContainer()
        }

        var first: Int? {
            var copy = container
            return try? copy.decode(Int.self)
        }

        var description: String { "ContainerKeptPastInit(first: \(String(describing: first)))" }

        static func == (lhs: ContainerKeptPastInit, rhs: ContainerKeptPastInit) -> Bool { lhs.first == rhs.first }
    }

    /// Reads one type, and when that fails, another, from the same single value container.
    enum FirstThatFits<First: Decodable & Equatable, Second: Decodable & Equatable>: Decodable, Equatable {
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

    /// Accepts only null.
    struct NullReader: Decodable, Equatable {
        enum Failure: Error { case expectedNull }
        init(from decoder: any Decoder) throws {
            guard try decoder.singleValueContainer().decodeNil() else { throw Failure.expectedNull }
        }
    }

    /// Writes its value three levels down: an unkeyed container, a super encoder, and its own
    /// unkeyed container.
    struct ReferencingEncoderWrapper<Value: Encodable>: Encodable {
        var value: Value

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            var nested = container.superEncoder().unkeyedContainer()
            try nested.encode(value)
        }
    }

    /// Decimals at and past the 64-bit integer limits.
    struct BigDecimals: Codable, Equatable {
        var uint64Max = Decimal(UInt64.max)
        var uint64MaxPlus1 = Decimal(string: "18446744073709551616")!
        var int64Min = Decimal(Int64.min)
        var int64MinMinus1 = Decimal(string: "-9223372036854775809")!
    }

    /// Doubles and decimals keyed by their own spelling.
    struct DoublesAndDecimals: Codable, Equatable {
        var doubles: [String: Double]
        var decimals: [String: Decimal]
    }

    /// Floats and doubles at the ends of their ranges.
    struct Extremes: Codable, Equatable {
        var floats: [Float]
        var doubles: [Double]
    }

    // MARK: - Shapes

    /// Top-level values of each kind: empty types, single values, Foundation scalars, decimals.
    static var topLevel: [CodableShape] {
        [
            .roundTrip("swift-foundation JSON: empty struct (encodingTopLevelEmptyStruct)", EmptyStruct()),
            .roundTrip("swift-foundation JSON: empty class (encodingTopLevelEmptyClass)", EmptyClass()),
            .roundTrip("swift-foundation JSON: empty struct read as [String: Int] (encodingTopLevelEmptyStruct)", EmptyStruct(), as: [String: Int].self),
            .roundTrip("swift-foundation JSON: single-value enum off (encodingTopLevelSingleValueEnum)", Switch.off),
            .roundTrip("swift-foundation JSON: single-value enum on (encodingTopLevelSingleValueEnum)", Switch.on),
            .roundTrip("swift-foundation JSON: single-value enum read as Bool (encodingTopLevelSingleValueEnum)", Switch.on, as: Bool.self),
            .roundTrip("swift-foundation JSON: single-value struct of a Double (encodingTopLevelSingleValueStruct)", Timestamp(3141592653)),
            .roundTrip("swift-foundation JSON: single-value class of an Int (encodingTopLevelSingleValueClass)", Counter()),
            .roundTrip("swift-foundation JSON: nullable type true (encodingTopLevelNullableType)", EnhancedBool.yes),
            .roundTrip("swift-foundation JSON: nullable type false (encodingTopLevelNullableType)", EnhancedBool.no),
            .roundTrip("swift-foundation JSON: nullable type null at top level (encodingTopLevelNullableType)", EnhancedBool.fileNotFound),
            .roundTrip("swift-foundation JSON: nullable type null read as Bool? (encodingTopLevelNullableType)", EnhancedBool.fileNotFound, as: Bool?.self),
            .roundTrip("swift-foundation JSON: top-level array of Int (encodingTopLevelArrayOfInt)", [1, 2, 3]),
            .roundTrip("swift-foundation JSON: top-level empty array of Int (encodingTopLevelArrayOfInt)", [Int]()),
            .roundTrip("swift-foundation JSON: top-level Date (encodingDate)", Date(timeIntervalSince1970: 1000)),
            .roundTrip("swift-foundation JSON: top-level Date? (encodingDate)", Date?(Date(timeIntervalSince1970: 1000))),
            .roundTrip("swift-foundation JSON: Date read as its reference-date seconds (encodingDate)", Date(timeIntervalSinceReferenceDate: 123_456.789), as: Double.self),
            .roundTrip("swift-foundation JSON: top-level Data as base64 (encodingDataBase64)", Data([0xDE, 0xAD, 0xBE, 0xEF])),
            .roundTrip("swift-foundation JSON: top-level Data? (encodingDataBase64)", Data?(Data([0xDE, 0xAD, 0xBE, 0xEF]))),
            .roundTrip("swift-foundation JSON: Data read as its base64 string (encodingDataBase64)", Data([0xDE, 0xAD, 0xBE, 0xEF]), as: String.self),
            .roundTrip("swift-foundation JSON: empty Data (encodingData)", Data()),
            .roundTrip("swift-foundation JSON: top-level URL (interceptURL)", URL(string: "http://swift.org")!),
            .roundTrip("swift-foundation JSON: top-level URL? (interceptURL)", URL?(URL(string: "http://swift.org")!)),
            .roundTrip("swift-foundation JSON: URL read as String (interceptURLWithoutEscapingOption)", URL(string: "http://swift.org")!, as: String.self),
            .roundTrip("swift-foundation JSON: top-level Decimal 1e127 (interceptDecimal)", Decimal(sign: .plus, exponent: 127, significand: 1)),
            .roundTrip("swift-foundation JSON: top-level Decimal? 1e127 (interceptDecimal)", Decimal?(Decimal(sign: .plus, exponent: 127, significand: 1))),
            .roundTrip("swift-foundation JSON: huge Decimal of 77 digits (hugeNumbers)", Decimal(string: "23456789012000000000000000000000000000000000000000000000000000000000000000000")!),
            .roundTrip("swift-foundation JSON: Decimals around the 64-bit limits (interceptLargeDecimal)", BigDecimals()),
            .roundTrip("swift-foundation JSON: Double 1e202 read as Decimal (overlargeDecimal)", 1e202, as: Decimal.self),
            .roundTrip("swift-foundation JSON: top-level nil Int? read by a null reader (NullReader)", Int?.none, as: NullReader.self),
            .roundTrip("swift-foundation JSON: top-level Int read by a null reader (NullReader)", 1, as: NullReader.self),
        ]
    }

    /// Keyed models, class hierarchies, nested and redundant containers, super encoders, optionals.
    static var structured: [CodableShape] {
        [
            .roundTrip("swift-foundation JSON: keyed struct (encodingTopLevelStructuredStruct)", Address.sample),
            .roundTrip("swift-foundation JSON: keyed class (encodingTopLevelStructuredClass)", Person(name: "Johnny Appleseed", email: "appleseed@apple.com")),
            .roundTrip("swift-foundation JSON: keyed class with a URL (encodingTopLevelStructuredClass)", Person(name: "Johnny Appleseed", email: "appleseed@apple.com", website: URL(string: "https://www.apple.com/")!)),
            .roundTrip("swift-foundation JSON: array through a single value container (encodingTopLevelStructuredSingleStruct)", LuckyNumbers()),
            .roundTrip("swift-foundation JSON: wrong array through a single value container (encodingTopLevelStructuredSingleStruct)", LuckyNumbers(values: [4, 8, 15]), as: LuckyNumbers.self),
            .roundTrip("swift-foundation JSON: dictionary through a single value container (encodingTopLevelStructuredSingleClass)", Mapping(values: ["Apple": 42, "localhost": 127])),
            .roundTrip("swift-foundation JSON: deep structure with subclass instances (encodingTopLevelDeepStructuredType)", Company(address: .sample, employees: [.sample])),
            .roundTrip("swift-foundation JSON: subclass sharing its superclass's container (encodingClassWhichSharesEncoderWithSuper)", Employee.sample),
            .roundTrip("swift-foundation JSON: subclass read as its superclass's keys (encodingClassWhichSharesEncoderWithSuper)", Employee.sample, as: [String: String].self),
            .roundTrip("swift-foundation JSON: subclass decoded through a superclass metatype (decodingConcreteTypeParameter)", Employee.sample, as: DynamicTypeProbe.self),
            .roundTrip("swift-foundation JSON: superclass read where a subclass is expected (decodingConcreteTypeParameter)", Person(name: "Jane", email: "jane@example.com"), as: Employee.self),
            .roundTrip("swift-foundation JSON: empty nested containers (nestedContainerCodingPaths)", NestedContainersWriter(throughSuperEncoder: false), as: Stored.self),
            .roundTrip("swift-foundation JSON: empty nested containers under a super encoder (superEncoderCodingPaths)", NestedContainersWriter(throughSuperEncoder: true), as: Stored.self),
            .roundTrip("swift-foundation JSON: directly encoded arrays (directlyEncodedArrays)", Arrays(integers: [.min, 0, 42, .max], doubles: [42.0, 3.14, -0.5], strings: ["Hello", "World", "true", "0\n1", "\u{0008}"])),
            .roundTrip("swift-foundation JSON: directly encoded arrays with infinity (directlyEncodedArrays)", Arrays(integers: [1], doubles: [42.0, 3.14, .infinity, -.infinity], strings: [])),
            .roundTrip("swift-foundation JSON: nested unkeyed container in keyed (issue106506794)", Level1(level2: .init(name: "level2"))),
            .roundTrip("swift-foundation JSON: two nested keyed containers under one key (encodingMultipleNestedContainersWithTheSameTopLevelKey)", TwoNestedUnderOneKey(first: "Johnny Appleseed", second: "appleseed@apple.com")),
            .roundTrip("swift-foundation JSON: value then nested container under one key (redundantKeyedContainer)", ValueThenNestedUnderOneKey(), as: Stored.self),
            .roundTrip("swift-foundation JSON: single value dictionary amended by a keyed container (singleValueDictionaryAmendedByContainer)", SingleValueThenKeyed(), as: [String: String].self),
            .roundTrip("swift-foundation JSON: super encoders from keyed and unkeyed containers (superEncoders)", SuperEncoders(), as: Stored.self),
            .roundTrip("swift-foundation JSON: value replaced by value (redundantKeys)", RedundantKey(firstWrite: .value, secondThroughSuperEncoder: false), as: [String: Int].self),
            .roundTrip("swift-foundation JSON: value replaced through a super encoder (redundantKeys)", RedundantKey(firstWrite: .value, secondThroughSuperEncoder: true), as: [String: Int].self),
            .roundTrip("swift-foundation JSON: keyed container replaced by value (redundantKeys)", RedundantKey(firstWrite: .keyedContainer, secondThroughSuperEncoder: false), as: [String: Int].self),
            .roundTrip("swift-foundation JSON: keyed container replaced through a super encoder (redundantKeys)", RedundantKey(firstWrite: .keyedContainer, secondThroughSuperEncoder: true), as: [String: Int].self),
            .roundTrip("swift-foundation JSON: unkeyed container replaced by value (redundantKeys)", RedundantKey(firstWrite: .unkeyedContainer, secondThroughSuperEncoder: false), as: [String: Int].self),
            .roundTrip("swift-foundation JSON: unkeyed container replaced through a super encoder (redundantKeys)", RedundantKey(firstWrite: .unkeyedContainer, secondThroughSuperEncoder: true), as: [String: Int].self),
            .roundTrip("swift-foundation JSON: empty dictionary with struct keys (SR17581_codingEmptyDictionaryWithNonstringKeyDoesRoundtrip)", NonStringKeys(dict: [:])),
            .roundTrip("swift-foundation JSON: dictionary with struct keys (SR17581_codingEmptyDictionaryWithNonstringKeyDoesRoundtrip)", NonStringKeys(dict: [.init(x: "a"): "1"])),
            .roundTrip("swift-foundation JSON: nils after a value that failed (sharedSubEncoderStaleStateCrash)", NilsAfterFailedValue(nilCount: 2), as: Stored.self),
            .roundTrip("swift-foundation JSON: one nil after a value that failed (sharedSubEncoderStaleStateDataCorrectness)", NilsAfterFailedValue(nilCount: 1), as: Stored.self),
            .roundTrip("swift-foundation JSON: top-level type that encodes nothing (typeEncodesNothing)", EncodesNothing(), as: [String: Int].self),
            .roundTrip("swift-foundation JSON: array of a type that encodes nothing (typeEncodesNothing)", [EncodesNothing()], as: [[String: Int]].self),
            .roundTrip("swift-foundation JSON: dictionary of a type that encodes nothing (typeEncodesNothing)", ["test": EncodesNothing()], as: [String: [String: Int]].self),
            .roundTrip("swift-foundation JSON: keyed optionals left out, read with decodeIfPresent (decodeIfPresent)", OptionalsWriter(values: .allNils, keyed: true, writesNulls: false), as: KeyedOptionalsReader.self),
            .roundTrip("swift-foundation JSON: keyed optionals as nulls, read with decodeIfPresent (decodeIfPresent)", OptionalsWriter(values: .allNils, keyed: true, writesNulls: true), as: KeyedOptionalsReader.self),
            .roundTrip("swift-foundation JSON: keyed optionals all ones, read with decodeIfPresent (decodeIfPresent)", OptionalsWriter(values: .allOnes, keyed: true, writesNulls: true), as: KeyedOptionalsReader.self),
            .roundTrip("swift-foundation JSON: unkeyed optionals left out, read with decodeIfPresent (decodeIfPresent)", OptionalsWriter(values: .allNils, keyed: false, writesNulls: false), as: UnkeyedOptionalsReader.self),
            .roundTrip("swift-foundation JSON: unkeyed optionals as nulls, read with decodeIfPresent (decodeIfPresent)", OptionalsWriter(values: .allNils, keyed: false, writesNulls: true), as: UnkeyedOptionalsReader.self),
            .roundTrip("swift-foundation JSON: unkeyed optionals all ones, read with decodeIfPresent (decodeIfPresent)", OptionalsWriter(values: .allOnes, keyed: false, writesNulls: false), as: UnkeyedOptionalsReader.self),
        ]
    }

    /// Numbers at their extremes, number fragments, non-conforming floats and type coercions.
    static var numbers: [CodableShape] {
        [
            .roundTrip("swift-foundation JSON: Float and Double extremes (roundTrippingExtremeValues)", Extremes(floats: [.greatestFiniteMagnitude, .leastNormalMagnitude], doubles: [.greatestFiniteMagnitude, .leastNormalMagnitude])),
            .roundTrip("swift-foundation JSON: Doubles and Decimals keyed by spelling (roundTrippingDoubleValues)", DoublesAndDecimals(
                doubles: [
                    "-55.66": -55.66, "-9.81": -9.81, "-0.284": -0.284,
                    "-3.4028234663852886e+38": Double(-Float.greatestFiniteMagnitude),
                    "-1.1754943508222875e-38": Double(-Float.leastNormalMagnitude),
                    "-1.7976931348623157e+308": -.greatestFiniteMagnitude,
                    "-2.2250738585072014e-308": -.leastNormalMagnitude,
                    "0.000001": 0.000001,
                ],
                decimals: [
                    "1.234567891011121314": Decimal(string: "1.234567891011121314")!,
                    "-0.1234567891011121314": Decimal(string: "-0.1234567891011121314")!,
                    "123.4567891011121314e-100": Decimal(string: "123.4567891011121314e-100")!,
                    "-1234567891011121314e-100": Decimal(string: "-1234567891011121314e-100")!,
                    "3.14159265358979323846264338327950288419": Decimal(string: "3.14159265358979323846264338327950288419")!,
                    "440474310512876335.18692524723746578303827301433673643795": Decimal(string: "440474310512876335.18692524723746578303827301433673643795")!,
                ]
            )),
            .roundTrip("swift-foundation JSON: a very small Double in nested collections (smallFloatNumber)", [["magic_number": 7.45673334164903e-115]]),
            .roundTrip("swift-foundation JSON: a large UInt64 in a dictionary (largeIntegerNumber)", ["a": UInt64(6032314514195021674)]),
            .roundTrip("swift-foundation JSON: a large UInt64 read as Int (largeIntegerNumber)", ["a": UInt64(6032314514195021674)], as: [String: Int].self),
            .roundTrip("swift-foundation JSON: a large UInt64 read as Double (largeIntegerNumber)", ["a": UInt64(6032314514195021674)], as: [String: Double].self),
            .roundTrip("swift-foundation JSON: Int64.min (largeIntegerNumberIsNotRoundedToNearestDoubleWhenDecodingAsAnInteger)", Int64.min),
            .roundTrip("swift-foundation JSON: Int64.max (largeIntegerNumberIsNotRoundedToNearestDoubleWhenDecodingAsAnInteger)", Int64.max),
            .roundTrip("swift-foundation JSON: UInt64.max (largeIntegerNumberIsNotRoundedToNearestDoubleWhenDecodingAsAnInteger)", UInt64.max),
            .roundTrip("swift-foundation JSON: 2^63 + 1025 as UInt64 (largeIntegerNumberIsNotRoundedToNearestDoubleWhenDecodingAsAnInteger)", UInt64(1) << 63 + 1025),
            .roundTrip("swift-foundation JSON: 2^63 read as Int64 (largeIntegerNumberIsNotRoundedToNearestDoubleWhenDecodingAsAnInteger)", UInt64(1) << 63, as: Int64.self),
            .roundTrip("swift-foundation JSON: 2^63 - 1 as UInt64 read as Int64 (largeIntegerNumberIsNotRoundedToNearestDoubleWhenDecodingAsAnInteger)", UInt64(Int64.max), as: Int64.self),
            .roundTrip("swift-foundation JSON: UInt64.max read as Int64 (largeIntegerNumberIsNotRoundedToNearestDoubleWhenDecodingAsAnInteger)", UInt64.max, as: Int64.self),
            .roundTrip("swift-foundation JSON: Int64.min read as UInt64 (largeIntegerNumberIsNotRoundedToNearestDoubleWhenDecodingAsAnInteger)", Int64.min, as: UInt64.self),
            .roundTrip("swift-foundation JSON: greatest Double read as UInt64 (decodeLargeDoubleAsInteger)", Double.greatestFiniteMagnitude, as: UInt64.self),
            .roundTrip("swift-foundation JSON: a decimal value in a dictionary (localeDecimalPolicyIndependence)", ["decimalValue": 1.1]),
            .roundTrip("swift-foundation JSON: number fragment 0 (jsonNumberFragments)", 0.0),
            .roundTrip("swift-foundation JSON: number fragment 0.1 (jsonNumberFragments)", 0.1),
            .roundTrip("swift-foundation JSON: number fragment -2.01e-3 (jsonNumberFragments)", -2.01e-3),
            .roundTrip("swift-foundation JSON: number fragment 1e3 read as Int (jsonNumberFragments)", 1e3, as: Int.self),
            .roundTrip("swift-foundation JSON: number fragment 0.1 read as Int (jsonNumberFragments)", 0.1, as: Int.self),
            .roundTrip("swift-foundation JSON: number fragment 3.14 read as Float (topLevelNumberFragmentsWithJunkDigitCharacters)", 3.14, as: Float.self),
            .roundTrip("swift-foundation JSON: Float infinity (encodingNonConformingFloats)", Float.infinity),
            .roundTrip("swift-foundation JSON: Float negative infinity (encodingNonConformingFloats)", -Float.infinity),
            .roundTrip("swift-foundation JSON: Float NaN (encodingNonConformingFloats)", Float.nan),
            .roundTrip("swift-foundation JSON: Double infinity (encodingNonConformingFloats)", Double.infinity),
            .roundTrip("swift-foundation JSON: Double negative infinity (encodingNonConformingFloats)", -Double.infinity),
            .roundTrip("swift-foundation JSON: Double NaN (encodingNonConformingFloats)", Double.nan),
            .roundTrip("swift-foundation JSON: optional Float infinity (encodingNonConformingFloats)", Float?(.infinity)),
            .roundTrip("swift-foundation JSON: optional Double NaN (encodingNonConformingFloats)", Double?(.nan)),
            .roundTrip("swift-foundation JSON: NaN inside a dictionary (encodingDictionaryFailureKeyPath)", ["key": Measured(someValue: .nan)]),
            .roundTrip("swift-foundation JSON: NaN two dictionaries deep (encodingDictionaryFailureKeyPathNested)", ["key": ["sub_key": MeasuredNested(nestedValue: Measured(someValue: .nan))]]),
            .roundTrip("swift-foundation JSON: infinity three levels down through a super encoder (encoderStateThrowOnEncode)", ReferencingEncoderWrapper(value: [Float.infinity]), as: [[[Float]]].self),
            .roundTrip("swift-foundation JSON: a value three levels down through a super encoder (encoderStateThrowOnEncode)", ReferencingEncoderWrapper(value: [1.5]), as: [[[Double]]].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [Int] (typeCoercion)", [false, true], as: [Int].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [Int8] (typeCoercion)", [false, true], as: [Int8].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [Int16] (typeCoercion)", [false, true], as: [Int16].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [Int32] (typeCoercion)", [false, true], as: [Int32].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [Int64] (typeCoercion)", [false, true], as: [Int64].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [UInt] (typeCoercion)", [false, true], as: [UInt].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [UInt8] (typeCoercion)", [false, true], as: [UInt8].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [UInt16] (typeCoercion)", [false, true], as: [UInt16].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [UInt32] (typeCoercion)", [false, true], as: [UInt32].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [UInt64] (typeCoercion)", [false, true], as: [UInt64].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [Float] (typeCoercion)", [false, true], as: [Float].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [Double] (typeCoercion)", [false, true], as: [Double].self),
            .roundTrip("swift-foundation JSON: [Bool] read as [Decimal] (typeCoercion)", [false, true], as: [Decimal].self),
            .roundTrip("swift-foundation JSON: [Int] read as [Bool] (typeCoercion)", [0, 1] as [Int], as: [Bool].self),
            .roundTrip("swift-foundation JSON: [Double] read as [Bool] (typeCoercion)", [0.0, 1.0] as [Double], as: [Bool].self),
        ]
    }

    /// 128-bit integers, where the platform has them.
    static var int128: [CodableShape] {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return [] }
        return [
            .roundTrip("swift-foundation JSON: Int128.min (roundTrippingInt128)", Int128.min),
            .roundTrip("swift-foundation JSON: Int128.max (roundTrippingInt128)", Int128.max),
            .roundTrip("swift-foundation JSON: Int128 -2^64 (roundTrippingInt128)", -0x1_0000_0000_0000_0000 as Int128),
            .roundTrip("swift-foundation JSON: Int128 -1 (roundTrippingInt128)", -1 as Int128),
            .roundTrip("swift-foundation JSON: Int128 2^64 - 1 (roundTrippingInt128)", 0xffff_ffff_ffff_ffff as Int128),
            .roundTrip("swift-foundation JSON: UInt128.max (roundTrippingUInt128)", UInt128.max),
            .roundTrip("swift-foundation JSON: UInt128 2^127 (roundTrippingUInt128)", 0x8000_0000_0000_0000_0000_0000_0000_0000 as UInt128),
            .roundTrip("swift-foundation JSON: UInt128 2^64 (roundTrippingUInt128)", 0x1_0000_0000_0000_0000 as UInt128),
            .roundTrip("swift-foundation JSON: Int128 2^64 read as Int64 (int128SlowPath)", 0x1_0000_0000_0000_0000 as Int128, as: Int64.self),
            .roundTrip("swift-foundation JSON: Int64 read as Int128 (int128SlowPath)", Int64.min, as: Int128.self),
            .roundTrip("swift-foundation JSON: [Bool] read as [Int128] (typeCoercion)", [false, true], as: [Int128].self),
            .roundTrip("swift-foundation JSON: [UInt128] read as [Bool] (typeCoercion)", [0, 1] as [UInt128], as: [Bool].self),
        ]
    }

    /// Strings with escapes, control characters, NULs and non-ASCII text, and keys made of them.
    static var strings: [CodableShape] {
        [
            .roundTrip("swift-foundation JSON: escaped slashes in a string (jsonEscapedSlashes)", "/test/path"),
            .roundTrip("swift-foundation JSON: backslashes before slashes (jsonEscapedSlashes)", "\\/test\\/path"),
            .roundTrip("swift-foundation JSON: a slash as a dictionary key (jsonEscapedForwardSlashes)", ["/": 1]),
            .roundTrip("swift-foundation JSON: CJK characters (jsonUnicodeCharacters)", ["閆崬밺뀫颒"]),
            .roundTrip("swift-foundation JSON: Japanese characters (jsonUnicodeCharacters)", ["本日"]),
            .roundTrip("swift-foundation JSON: e-acute and greater-or-equal (jsonUnicodeEscapes)", "\u{00E9}\u{2265}"),
            .roundTrip("swift-foundation JSON: escapes between digits (jsonUnicodeEscapes)", "42\u{00E9}42\u{2265}42"),
            .roundTrip("swift-foundation JSON: a surrogate pair G clef (jsonUnicodeEscapes)", "\u{1D11E}"),
            .roundTrip("swift-foundation JSON: low control characters (encodingJSONHexUnicodeEscapes)", "\u{0001}\u{0002}\u{0003}"),
            .roundTrip("swift-foundation JSON: high control characters (encodingJSONHexUnicodeEscapes)", "\u{0010}\u{0018}\u{001F}"),
            .roundTrip("swift-foundation JSON: every control character and space (jsonControlCharacters)", String(decoding: Array(0...0x20 as ClosedRange<UInt8>), as: UTF8.self)),
            .roundTrip("swift-foundation JSON: a NUL inside an array string (nullByte)", ["abc\u{0000}def"]),
            .roundTrip("swift-foundation JSON: a NUL in a dictionary key and value (nullByte)", ["abc\u{0000}def": "abc\u{0000}def"]),
            .roundTrip("swift-foundation JSON: a NUL in a model's string (nullByte)", StringHolder(s: "abc\u{0000}def")),
            .roundTrip("swift-foundation JSON: backslashes before letters (superfluouslyEscapedCharacters)", ["\\h\\e\\l\\l\\o"]),
            .roundTrip("swift-foundation JSON: a byte order mark inside a string (bomPrefixes)", "\u{FEFF}hello"),
            .roundTrip("swift-foundation JSON: a trailing-comma shaped dictionary of arrays (jsonPermitsTrailingCommas)", ["key": [true]]),
            .roundTrip("swift-foundation JSON: keys with line breaks (whitespace)", ["v\n": true, "v\r\n": false, "v\r": true]),
            .roundTrip("swift-foundation JSON: canonically equal keys written twice (equivalentUTF8Sequences)", CanonicallyEqualKeys(), as: [String: Bool].self),
            .roundTrip("swift-foundation JSON: canonically equal dictionary keys read back (equivalentUTF8Sequences)", ["caf\u{E9}": true], as: [String: Bool].self),
        ]
    }

    /// Keys chosen at run time, with special characters, and dictionaries with many keys.
    static var keys: [CodableShape] {
        [
            .roundTrip("swift-foundation JSON: run-time key (encodingKeyStrategyCustom)", SingleKeyWriter(keyName: "hello")),
            .roundTrip("swift-foundation JSON: empty key (encodingKeyStrategySnake)", SingleKeyWriter(keyName: ""), as: [String: String].self),
            .roundTrip("swift-foundation JSON: combining-mark key (encodingKeyStrategySnake)", SingleKeyWriter(keyName: "m͉̟̹y̦̳G͍͚͎̳r̤͉̤͕ͅea̲͕t͇̥̼͖U͇̝̠R͙̻̥͓̣L̥̖͎͓̪̫ͅR̩͖̩eq͈͓u̞e̱s̙t̤̺ͅ")),
            .roundTrip("swift-foundation JSON: emoji key (encodingKeyStrategySnake)", SingleKeyWriter(keyName: "🐧🐟")),
            .roundTrip("swift-foundation JSON: diacritic key (encodingKeyStrategySnake)", SingleKeyWriter(keyName: "asdfĆqer"), as: [String: String].self),
            .roundTrip("swift-foundation JSON: underscores-only key (decodingKeyStrategyCamel)", SingleKeyWriter(keyName: "___")),
            .roundTrip("swift-foundation JSON: key named by a value, snake case (decodingKeyStrategyCamel)", KeyNamingWriter(keyName: "snake_case"), as: KeyNamedByValue.self),
            .roundTrip("swift-foundation JSON: key named by a value, empty (decodingKeyStrategyCamel)", KeyNamingWriter(keyName: ""), as: KeyNamedByValue.self),
            .roundTrip("swift-foundation JSON: key named by a value, emoji (decodingKeyStrategyCamel)", KeyNamingWriter(keyName: "🐧_🐟"), as: KeyNamedByValue.self),
            .roundTrip("swift-foundation JSON: run-time key three levels down (encodingKeyStrategyPath)", OuterValue(outerValue: NestedValue(nestedValue: SingleKeyWriter(keyName: "helloWorld"))), as: [String: [String: [String: String]]].self),
            .roundTrip("swift-foundation JSON: dictionary keys left as written (decodingDictionaryStringKeyConversionUntouched)", ["leave_me_alone": "test"]),
            .roundTrip("swift-foundation JSON: camel-case dictionary keys (encodingDictionaryStringKeyConversionUntouched)", ["leaveMeAlone": "test"]),
            .roundTrip("swift-foundation JSON: camel-case model (decodingKeyStrategyCamelGenerated)", CamelCaseHolder(thisIsCamelCase: "test")),
            .roundTrip("swift-foundation JSON: two keys counted on decode (keyStrategyDuplicateKeys)", KeyCounter(oneTwo: "test", numberOfKeys: 2)),
            .roundTrip("swift-foundation JSON: keys in numeric and human order (encodingSortedKeys)", ["Foo": 1, "FOO": 2, "foo": 3, "foo1": 4, "Foo2": 5, "foo3": 6, "foo12": 7, "Foo11": 8, "føo": 9, "bar": 10]),
            .roundTrip("swift-foundation JSON: many keys sharing prefixes (encodingSortedKeysStableOrdering)", Dictionary(uniqueKeysWithValues: (0..<256).map { ("key\($0)", $0) }).merging(["AAA": 1, "AAAAAAB": 2]) { $1 }),
        ]
    }

    /// Readers that probe their containers: nil checks, fallbacks, super decoders.
    static var containers: [CodableShape] {
        [
            .roundTrip("swift-foundation JSON: nil checks before each element (repeatedFailedNilChecks)", [1, 2, 3], as: RepeatedNilChecks.self),
            .roundTrip("swift-foundation JSON: [Int] read as [String] or else [Int] (decoderStateThrowOnDecode)", [1, 2, 3], as: FirstThatFits<[String], [Int]>.self),
            .roundTrip("swift-foundation JSON: [String] read as [String] or else [Int] (decoderStateThrowOnDecode)", ["1", "2"], as: FirstThatFits<[String], [Int]>.self),
            .roundTrip("swift-foundation JSON: Int read as Date or else Int (decoderStateThrowOnDecodeCustomDate)", 1, as: FirstThatFits<Date, Int>.self),
            .roundTrip("swift-foundation JSON: Int read as Data or else Int (decoderStateThrowOnDecodeCustomData)", 1, as: FirstThatFits<Data, Int>.self),
            .roundTrip("swift-foundation JSON: optional read through a missing super decoder key (valueNotFoundError)", FlagAndNote(a: true, nope: nil), as: OptionalViaSuperDecoder.self),
            .roundTrip("swift-foundation JSON: optional read through a present super decoder key (valueNotFoundError)", FlagAndNote(a: true, nope: "yes"), as: OptionalViaSuperDecoder.self),
        ]
    }

    /// A container kept past `init(from:)` and read later (the binary decoder once read freed
    /// memory there).
    static var keptContainers: [CodableShape] {
        [
            .roundTrip("swift-foundation JSON: unkeyed container kept past init (delayedDecoding)", [42], as: ContainerKeptPastInit.self),
        ]
    }

    /// Decoding errors: their kind, path and the type or key they name.
    static var errors: [CodableShape] {
        [
            .roundTrip("swift-foundation JSON: String where Int expected in a dictionary (decodingDictionaryFailureKeyPath)", ["leave_me_alone": "test"], as: [String: Int].self),
            .roundTrip("swift-foundation JSON: String where Int expected four levels down (decodingDictionaryFailureKeyPathNested)", ["top_level": ["sub_level": ["nestedValue": ["intValue": "not_an_int"]]]], as: [String: [String: IntHolderNested]].self),
            .roundTrip("swift-foundation JSON: null where String expected (decodingStringExpectedType)", ["thisIsCamelCase": String?.none], as: CamelCaseHolder.self),
            .roundTrip("swift-foundation JSON: missing key (decodingStringExpectedType)", [String: String](), as: CamelCaseHolder.self),
            .roundTrip("swift-foundation JSON: error thrown from init after a keyed read (decodingFailureThrowInInitKeyedContainer)", ["checkedString": "baz"], as: CheckedString.self),
            .roundTrip("swift-foundation JSON: checked string accepted (decodingFailureThrowInInitKeyedContainer)", ["checkedString": "foo"], as: CheckedString.self),
            .roundTrip("swift-foundation JSON: object read through a single value container as String (decodingFailureThrowInInitSingleContainer)", ["checkedString": "baz"], as: SingleStringReader.self),
            .roundTrip("swift-foundation JSON: String where a model expected (invalidFragment)", "foo", as: CamelCaseHolder.self),
            .roundTrip("swift-foundation JSON: String where Bool expected (topLevelFragmentsWithGarbage)", "tru", as: Bool.self),
            .roundTrip("swift-foundation JSON: nil where Int expected in an array (valueNotFoundError)", [1, nil] as [Int?], as: [Int].self),
        ]
    }
}
