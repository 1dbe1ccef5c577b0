import Foundation

// Shapes the binary codec once got wrong (issue 33): super encoders and decoders of every
// kind, containers asked for again, a `try?` that failed half-way, keys spelled in another
// normalisation form, metatypes, and containers or decoders kept past `init(from:)`.

extension ConformanceShapes {
    static let misuse: [CodableShape] = superCoders + amendedContainers + failedWrites + keyNames + metatypes + keptCoders
}

/// The types of the misuse shapes.
enum MisuseModels {
    struct Failure: Error, Equatable {}

    // MARK: - Class hierarchies and super coders

    /// A superclass with fields of its own, read and written through whatever coder it is given.
    class Vehicle: Codable, Equatable, @unchecked Sendable {
        var wheels: Int
        var name: String

        init(wheels: Int, name: String) {
            self.wheels = wheels
            self.name = name
        }

        enum CodingKeys: String, CodingKey { case wheels, name }

        static func == (lhs: Vehicle, rhs: Vehicle) -> Bool {
            type(of: lhs) == type(of: rhs) && lhs.isEqual(to: rhs)
        }

        func isEqual(to other: Vehicle) -> Bool { wheels == other.wheels && name == other.name }
    }

    /// A subclass that writes its superclass under `super` through `superEncoder()`.
    final class Car: Vehicle, @unchecked Sendable {
        var doors: Int

        init(doors: Int) {
            self.doors = doors
            super.init(wheels: 4, name: "car")
        }

        enum Keys: String, CodingKey { case doors }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            doors = try container.decode(Int.self, forKey: .doors)
            try super.init(from: container.superDecoder())
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(doors, forKey: .doors)
            try super.encode(to: container.superEncoder())
        }

        override func isEqual(to other: Vehicle) -> Bool { super.isEqual(to: other) && doors == (other as? Car)?.doors }
    }

    /// A subclass that writes its superclass first, then its own fields.
    final class Bike: Vehicle, @unchecked Sendable {
        var gears: Int

        init(gears: Int) {
            self.gears = gears
            super.init(wheels: 2, name: "bike")
        }

        enum Keys: String, CodingKey { case gears, base }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            let base = try container.superDecoder(forKey: .base)
            gears = try container.decode(Int.self, forKey: .gears)
            try super.init(from: base)
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try super.encode(to: container.superEncoder(forKey: .base))
            try container.encode(gears, forKey: .gears)
        }

        override func isEqual(to other: Vehicle) -> Bool { super.isEqual(to: other) && gears == (other as? Bike)?.gears }
    }

    /// A subclass that stores itself as an array: its field, then its superclass.
    final class Train: Vehicle, @unchecked Sendable {
        var cars: Int

        init(cars: Int) {
            self.cars = cars
            super.init(wheels: 8 * cars, name: "train")
        }

        required init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            cars = try container.decode(Int.self)
            try super.init(from: container.superDecoder())
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(cars)
            try super.encode(to: container.superEncoder())
        }

        override func isEqual(to other: Vehicle) -> Bool { super.isEqual(to: other) && cars == (other as? Train)?.cars }
    }

    /// A subclass that shares its superclass's container (`super.encode(to: encoder)`),
    /// writing a key the superclass wrote too.
    final class Van: Vehicle, @unchecked Sendable {
        var seats: Int

        init(seats: Int) {
            self.seats = seats
            super.init(wheels: 4, name: "van")
        }

        enum Keys: String, CodingKey { case seats, name }

        required init(from decoder: any Decoder) throws {
            seats = try decoder.container(keyedBy: Keys.self).decode(Int.self, forKey: .seats)
            try super.init(from: decoder)
        }

        override func encode(to encoder: any Encoder) throws {
            try super.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(seats, forKey: .seats)
            try container.encode("van, \(seats) seats", forKey: .name)
        }

        override func isEqual(to other: Vehicle) -> Bool { super.isEqual(to: other) && seats == (other as? Van)?.seats }
    }

    /// Three levels, each through `superEncoder()`.
    class Animal: Codable, Equatable, @unchecked Sendable {
        var legs: Int
        init(legs: Int) { self.legs = legs }
        static func == (lhs: Animal, rhs: Animal) -> Bool { type(of: lhs) == type(of: rhs) && lhs.describe() == rhs.describe() }
        func describe() -> [String] { ["legs \(legs)"] }
    }

    class Dog: Animal, @unchecked Sendable {
        var name: String
        init(name: String) {
            self.name = name
            super.init(legs: 4)
        }
        enum Keys: String, CodingKey { case name }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            name = try container.decode(String.self, forKey: .name)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(name, forKey: .name)
            try super.encode(to: container.superEncoder())
        }
        override func describe() -> [String] { super.describe() + ["name \(name)"] }
    }

    final class Puppy: Dog, @unchecked Sendable {
        var ageInWeeks: Int
        init(name: String, ageInWeeks: Int) {
            self.ageInWeeks = ageInWeeks
            super.init(name: name)
        }
        enum MoreKeys: String, CodingKey { case ageInWeeks }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: MoreKeys.self)
            ageInWeeks = try container.decode(Int.self, forKey: .ageInWeeks)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: MoreKeys.self)
            try super.encode(to: container.superEncoder())
            try container.encode(ageInWeeks, forKey: .ageInWeeks)
        }
        override func describe() -> [String] { super.describe() + ["weeks \(ageInWeeks)"] }
    }

    /// A super encoder asked for and never used: JSON writes `{}` under `super`.
    struct UnusedSuper: Codable, Equatable, Sendable {
        var value: Int
        var superKeys: [String]
        enum Keys: String, CodingKey { case value }

        init(value: Int) {
            self.value = value
            superKeys = []
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            value = try container.decode(Int.self, forKey: .value)
            superKeys = try container.superDecoder().container(keyedBy: AnyCodingKey.self).allKeys.map(\.stringValue)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(value, forKey: .value)
            _ = container.superEncoder()
        }
    }

    /// Super encoders holding a single value, an array and a nested super encoder.
    struct SuperValues: Codable, Equatable, Sendable {
        var number: Int
        var list: [String]
        var deep: String

        enum Keys: String, CodingKey { case number, list, deep }
        enum DeepKeys: String, CodingKey { case inner }

        init(number: Int, list: [String], deep: String) {
            (self.number, self.list, self.deep) = (number, list, deep)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            number = try Int(from: container.superDecoder(forKey: .number))
            list = try [String](from: container.superDecoder(forKey: .list))
            let deepContainer = try container.superDecoder(forKey: .deep).container(keyedBy: DeepKeys.self)
            deep = try String(from: deepContainer.superDecoder(forKey: .inner))
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try number.encode(to: container.superEncoder(forKey: .number))
            try list.encode(to: container.superEncoder(forKey: .list))
            var deepContainer = container.superEncoder(forKey: .deep).container(keyedBy: DeepKeys.self)
            try deep.encode(to: deepContainer.superEncoder(forKey: .inner))
        }
    }

    /// An unkeyed super encoder asked for before more elements are appended and used after:
    /// JSON puts its value where it was asked for.
    struct EarlyUnkeyedSuper: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(1)
            let early = container.superEncoder()
            try container.encode(2)
            try container.encode(3)
            var single = early.singleValueContainer()
            try single.encode(99)
        }
    }

    /// A keyed super encoder asked for first and used after other fields were written, under
    /// a key that was written before it was used.
    struct LateKeyedSuper: Encodable {
        enum Keys: String, CodingKey { case a, b, shared }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            let late = container.superEncoder(forKey: .shared)
            try container.encode(1, forKey: .a)
            try container.encode("before", forKey: .shared)
            try container.encode(2, forKey: .b)
            try "after".encode(to: late)
        }
    }

    /// A super encoder whose container is asked for twice.
    struct SuperTwice: Encodable {
        enum Keys: String, CodingKey { case sup, after }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            let superEncoder = container.superEncoder(forKey: .sup)
            var first = superEncoder.container(keyedBy: AnyCodingKey.self)
            try first.encode(1, forKey: AnyCodingKey("x"))
            var second = superEncoder.container(keyedBy: AnyCodingKey.self)
            try second.encode(2, forKey: AnyCodingKey("y"))
            try container.encode(3, forKey: .after)
        }
    }

    /// A keyed super decoder and unkeyed super decoders read in every order.
    struct SuperReads: Decodable, Equatable {
        var fromSuper: [String: Int]
        var elements: [Int]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            fromSuper = try [String: Int](from: container.superDecoder())
            var list = try container.nestedUnkeyedContainer(forKey: AnyCodingKey("list"))
            let first = try list.superDecoder()
            let second = try list.superDecoder()
            elements = [try Int(from: second), try Int(from: first)]
        }
    }

    struct SuperSource: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encode(["x": 1, "y": 2], forKey: AnyCodingKey("super"))
            try container.encode([10, 20], forKey: AnyCodingKey("list"))
        }
    }

    // MARK: - Containers asked for again

    enum Keys: String, CodingKey { case a, b, c, nested, list }
    enum InnerKeys: String, CodingKey { case x, y, z }

    /// A field read back as a dictionary, whatever was written there.
    struct Dictionaries: Codable, Equatable {
        var nested: [String: Int]?
        var list: [Int]?
        var a: Int?
        var b: Int?
    }

    /// Two nested keyed containers for one key, one after the other: JSON merges them.
    struct TwoNestedForOneKey: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var first = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
            try first.encode(1, forKey: .x)
            var second = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
            try second.encode(2, forKey: .y)
        }
    }

    /// The same with a field written between the two.
    struct TwoNestedApart: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var first = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
            try first.encode(1, forKey: .x)
            try container.encode(5, forKey: .a)
            var second = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
            try second.encode(2, forKey: .y)
        }
    }

    /// A value encoded under a key, then a nested container for that key: JSON adds to it.
    struct ValueThenNested: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(["x": 1], forKey: .nested)
            var more = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
            try more.encode(3, forKey: .z)
        }
    }

    /// Two nested unkeyed containers for one key: JSON appends to the first.
    struct TwoListsForOneKey: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var first = container.nestedUnkeyedContainer(forKey: .list)
            try first.encode(1)
            var second = container.nestedUnkeyedContainer(forKey: .list)
            try second.encode(2)
            try container.encode(7, forKey: .a)
        }
    }

    /// A nested container for a key, then a plain value for it: the value replaces it.
    struct NestedThenValue: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var nested = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
            try nested.encode(1, forKey: .x)
            try container.encode(["y": 9], forKey: .nested)
        }
    }

    /// A single value that is a keyed value, then a keyed container at the same level:
    /// JSON adds the container's fields to it.
    struct SingleThenKeyed: Encodable {
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(["a": 1])
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(2, forKey: .b)
        }
    }

    /// A single value that is an array, then an unkeyed container at the same level.
    struct SingleThenUnkeyed: Encodable {
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode([1, 2])
            var container = encoder.unkeyedContainer()
            try container.encode(3)
        }
    }

    /// A keyed container, then a single value at the same level: JSON keeps the container.
    struct KeyedThenSingle: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .a)
            var single = encoder.singleValueContainer()
            try single.encode(["b": 2])
        }
    }

    /// The keyed container asked for twice at the top of a value, with a nested container of
    /// the first still open.
    struct KeyedTwice: Encodable {
        func encode(to encoder: any Encoder) throws {
            var first = encoder.container(keyedBy: Keys.self)
            try first.encode(1, forKey: .a)
            var list = first.nestedUnkeyedContainer(forKey: .list)
            try list.encode(4)
            var second = encoder.container(keyedBy: Keys.self)
            try second.encode(2, forKey: .b)
        }
    }

    /// The unkeyed container asked for twice.
    struct UnkeyedTwice: Encodable {
        func encode(to encoder: any Encoder) throws {
            var first = encoder.unkeyedContainer()
            try first.encode(1)
            var second = encoder.unkeyedContainer()
            try second.encode(2)
            try first.encode(3)
        }
    }

    /// Everything a value could hold is asked for, used, and discarded in a nested value.
    struct Holder<Inner: Encodable>: Encodable {
        var inner: Inner
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(0, forKey: .a)
            try container.encode(inner, forKey: .nested)
            try container.encode(1, forKey: .b)
        }
    }

    // MARK: - Writes that failed

    /// A value whose `encode(to:)` writes part of itself, then throws.
    struct HalfWritten: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: InnerKeys.self)
            try container.encode(1, forKey: .x)
            var nested = container.nestedUnkeyedContainer(forKey: .y)
            try nested.encode("partial")
            throw Failure()
        }
    }

    /// `try?` around fields that fail half-way, in a keyed container.
    struct TolerantKeyed: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .a)
            try? container.encode(HalfWritten(), forKey: .nested)
            try? container.encode(HalfWritten(), forKey: .a)
            try container.encode(2, forKey: .b)
        }
    }

    /// `try?` around elements that fail half-way, in an unkeyed container.
    struct TolerantUnkeyed: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(1)
            try? container.encode(HalfWritten())
            try container.encode(2)
            try? container.encode(Double.nan)
            try container.encode(3)
        }
    }

    /// `try?` around numbers JSON refuses.
    struct TolerantFloats: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1.5, forKey: .a)
            try? container.encode(Double.infinity, forKey: .a)
            try? container.encode(Float.nan, forKey: .b)
            try container.encode(2.5, forKey: .c)
        }
    }

    /// A field that failed deep inside nested values, the failure caught at the top.
    struct TolerantDeep: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try? container.encode([["ok": [1.0]], ["bad": [2.0, .nan]]], forKey: .list)
            try container.encode(3, forKey: .a)
        }
    }

    struct Tolerant: Codable, Equatable {
        var a: Double?
        var b: Double?
        var c: Double?
        var nested: [String: [String]]?
        var list: [[String: [Double]]]?
    }

    // MARK: - Key names

    /// "café" spelled precomposed (NFC) and decomposed (NFD).
    static let precomposed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    struct DecomposedKey: Codable, Equatable {
        var value: Int
        enum CodingKeys: String, CodingKey { case value = "cafe\u{301}" }
    }

    struct PrecomposedKey: Codable, Equatable {
        var value: Int
        enum CodingKeys: String, CodingKey { case value = "caf\u{E9}" }
    }

    struct BothSpellings: Codable, Equatable {
        var first: Int
        var second: Int
        enum CodingKeys: String, CodingKey { case first = "caf\u{E9}", second = "cafe\u{301}" }
    }

    /// More names than the decoder compares one by one, with one in each spelling.
    struct ManyKeysDecomposed: Codable, Equatable {
        var k0 = 0, k1 = 1, k2 = 2, k3 = 3, k4 = 4, k5 = 5, k6 = 6, k7 = 7, k8 = 8, k9 = 9
        var k10 = 10, k11 = 11, k12 = 12, k13 = 13, k14 = 14, k15 = 15, k16 = 16, k17 = 17
        var accent = 18
        enum CodingKeys: String, CodingKey {
            case k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14, k15, k16, k17
            case accent = "cafe\u{301}"
        }
    }

    struct ManyKeysPrecomposed: Codable, Equatable {
        var k0: Int, k17: Int, accent: Int
        enum CodingKeys: String, CodingKey {
            case k0, k17
            case accent = "caf\u{E9}"
        }
    }

    struct CaseOnly: Codable, Equatable {
        var lower: Int
        var upper: Int
        enum CodingKeys: String, CodingKey { case lower = "id", upper = "ID" }
    }

    struct OddNames: Codable, Equatable {
        var empty: Int
        var space: Int
        var emoji: String
        var family: String
        enum CodingKeys: String, CodingKey { case empty = "", space = " ", emoji = "🔑", family = "👨‍👩‍👧" }
    }

    // MARK: - Metatypes

    /// Reads its field through a metatype chosen at run time.
    struct ThroughMetatype: Decodable, Equatable {
        var vehicle: Vehicle
        var vehicles: [Vehicle]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            let type: Vehicle.Type = Car.self
            vehicle = try container.decode(type, forKey: AnyCodingKey("vehicle"))
            let optional = try container.decodeIfPresent(type, forKey: AnyCodingKey("vehicle"))
            var list = try container.nestedUnkeyedContainer(forKey: AnyCodingKey("vehicles"))
            vehicles = [try list.decode(type)] + (optional.map { [$0] } ?? [])
            let single = try container.superDecoder(forKey: AnyCodingKey("vehicle")).singleValueContainer()
            vehicles.append(try single.decode(type))
        }
    }

    struct MetatypeSource: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encode(Car(doors: 3), forKey: AnyCodingKey("vehicle"))
            try container.encode([Car(doors: 5)], forKey: AnyCodingKey("vehicles"))
        }
    }

    // MARK: - Containers and decoders kept past `init(from:)`

    /// Keeps its keyed container and reads its fields only when asked (after decoding ended).
    struct LazyKeyed: Decodable, Equatable {
        let container: KeyedDecodingContainer<AnyCodingKey>

        init(from decoder: any Decoder) throws {
            container = try decoder.container(keyedBy: AnyCodingKey.self)
        }

        var fields: [String] {
            container.allKeys.map(\.stringValue).sorted().map { key in
                let value = (try? container.decode(String.self, forKey: AnyCodingKey(key))) ?? "?"
                return "\(key)=\(value)"
            }
        }

        static func == (lhs: LazyKeyed, rhs: LazyKeyed) -> Bool { lhs.fields == rhs.fields }
    }

    /// Keeps its unkeyed container and reads its elements only when asked.
    struct LazyUnkeyed: Decodable, Equatable {
        let container: any UnkeyedDecodingContainer & Sendable

        init(from decoder: any Decoder) throws {
            container = Kept(try decoder.unkeyedContainer())
        }

        var elements: [String] {
            var copy = (container as! Kept).container
            var found: [String] = []
            while !copy.isAtEnd, let element = try? copy.decode(String.self) { found.append(element) }
            return found
        }

        static func == (lhs: LazyUnkeyed, rhs: LazyUnkeyed) -> Bool { lhs.elements == rhs.elements }
    }

    /// Keeps the decoder itself and reads from it when asked.
    struct LazyDecoder: Decodable, Equatable {
        let decoder: Kept

        init(from decoder: any Decoder) throws {
            self.decoder = Kept(decoder)
        }

        var reading: String {
            guard let decoder = decoder.decoder else { return "none" }
            if let keyed = try? decoder.container(keyedBy: AnyCodingKey.self) {
                return "keyed " + keyed.allKeys.map(\.stringValue).sorted().joined(separator: ",")
            }
            if var unkeyed = try? decoder.unkeyedContainer() { return "unkeyed \(unkeyed.count ?? -1) \((try? unkeyed.decode(String.self)) ?? "?")" }
            return "single " + ((try? decoder.singleValueContainer().decode(String.self)) ?? "?")
        }

        static func == (lhs: LazyDecoder, rhs: LazyDecoder) -> Bool { lhs.reading == rhs.reading }
    }

    /// Keeps a super decoder and a nested container, read when asked.
    struct LazySuper: Decodable, Equatable {
        let kept: Kept
        let nested: KeyedDecodingContainer<AnyCodingKey>

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            kept = Kept(try container.superDecoder(forKey: AnyCodingKey("name")))
            nested = try container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: AnyCodingKey("inner"))
        }

        var reading: [String] {
            let name = (try? kept.decoder?.singleValueContainer().decode(String.self)) ?? "?"
            let inner = (try? nested.decode(Int.self, forKey: AnyCodingKey("x"))) ?? -1
            return [name, String(inner)]
        }

        static func == (lhs: LazySuper, rhs: LazySuper) -> Bool { lhs.reading == rhs.reading }
    }

    /// A box that lets a decoder or a container be stored in a `Sendable` value.
    struct Kept: @unchecked Sendable, UnkeyedDecodingContainer {
        var decoder: (any Decoder)?
        var container: any UnkeyedDecodingContainer

        init(_ decoder: any Decoder) {
            self.decoder = decoder
            container = Empty()
        }

        init(_ container: any UnkeyedDecodingContainer) {
            decoder = nil
            self.container = container
        }

        var codingPath: [any CodingKey] { container.codingPath }
        var count: Int? { container.count }
        var isAtEnd: Bool { container.isAtEnd }
        var currentIndex: Int { container.currentIndex }
        mutating func decodeNil() throws -> Bool { try container.decodeNil() }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try container.decode(type) }
        mutating func nestedContainer<N: CodingKey>(keyedBy type: N.Type) throws -> KeyedDecodingContainer<N> { try container.nestedContainer(keyedBy: type) }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try container.nestedUnkeyedContainer() }
        mutating func superDecoder() throws -> any Decoder { try container.superDecoder() }

        struct Empty: UnkeyedDecodingContainer {
            var codingPath: [any CodingKey] { [] }
            var count: Int? { 0 }
            var isAtEnd: Bool { true }
            var currentIndex: Int { 0 }
            mutating func decodeNil() throws -> Bool { throw Failure() }
            mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw Failure() }
            mutating func nestedContainer<N: CodingKey>(keyedBy type: N.Type) throws -> KeyedDecodingContainer<N> { throw Failure() }
            mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Failure() }
            mutating func superDecoder() throws -> any Decoder { throw Failure() }
        }
    }

    struct Named: Codable, Equatable {
        var name: String
        var inner: [String: Int]
    }
}

/// A key known only by its name.
struct AnyCodingKey: CodingKey, Hashable, Sendable {
    var stringValue: String
    var intValue: Int?
    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension ConformanceShapes {
    typealias M = MisuseModels

    static let superCoders: [CodableShape] = [
        .roundTrip("super: keyed superEncoder() under `super`", M.Car(doors: 2)),
        .roundTrip("super: keyed superEncoder(forKey:) written first", M.Bike(gears: 21)),
        .roundTrip("super: unkeyed superEncoder() after an element", M.Train(cars: 3)),
        .roundTrip("super: super.encode(to: encoder) into the same container, a key rewritten", M.Van(seats: 7)),
        .roundTrip("super: three levels through superEncoder()", M.Puppy(name: "Rex", ageInWeeks: 9)),
        .roundTrip("super: a super encoder asked for and never used", M.UnusedSuper(value: 5)),
        .roundTrip("super: super encoders of a single value, an array, a nested super encoder", M.SuperValues(number: 4, list: ["a", "b"], deep: "d")),
        .roundTrip("super: an unkeyed super encoder used after later elements", M.EarlyUnkeyedSuper(), as: [Int].self),
        .roundTrip("super: a keyed super encoder used late, read as strings", M.LateKeyedSuper(), as: LateKeyedReading.self),
        .roundTrip("super: a super encoder's container asked for twice", M.SuperTwice(), as: SuperTwiceReading.self),
        .roundTrip("super: super decoders, keyed and unkeyed, read out of order", M.SuperSource(), as: M.SuperReads.self),
        .roundTrip("super: a missing super key read through superDecoder()", 5, as: MissingSuperReading.self),
    ]

    /// Reads what ``MisuseModels/LateKeyedSuper`` wrote.
    struct LateKeyedReading: Decodable, Equatable {
        var a: Int
        var b: Int
        var shared: String
    }

    /// Reads what ``MisuseModels/SuperTwice`` wrote.
    struct SuperTwiceReading: Decodable, Equatable {
        var sup: [String: Int]
        var after: Int
    }

    /// A value whose container has no `super` key, read through `superDecoder()`.
    struct MissingSuperReading: Decodable, Equatable {
        var isNil: Bool
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            isNil = try container.superDecoder().singleValueContainer().decodeNil()
        }
    }

    static let amendedContainers: [CodableShape] = [
        .roundTrip("amend: two nested keyed containers for one key merge", M.TwoNestedForOneKey(), as: M.Dictionaries.self),
        .roundTrip("amend: two nested keyed containers for one key, a field between", M.TwoNestedApart(), as: M.Dictionaries.self),
        .roundTrip("amend: a value, then a nested container for its key", M.ValueThenNested(), as: M.Dictionaries.self),
        .roundTrip("amend: two nested unkeyed containers for one key", M.TwoListsForOneKey(), as: M.Dictionaries.self),
        .roundTrip("amend: a nested container replaced by a value", M.NestedThenValue(), as: M.Dictionaries.self),
        .roundTrip("amend: a keyed single value, then a keyed container", M.SingleThenKeyed(), as: M.Dictionaries.self),
        .roundTrip("amend: an array single value, then an unkeyed container", M.SingleThenUnkeyed(), as: [Int].self),
        .roundTrip("amend: a keyed container, then a single value", M.KeyedThenSingle(), as: M.Dictionaries.self),
        .roundTrip("amend: the keyed container asked for twice, a nested one open", M.KeyedTwice(), as: M.Dictionaries.self),
        .roundTrip("amend: the unkeyed container asked for twice, used in turn", M.UnkeyedTwice(), as: [Int].self),
        .roundTrip("amend: a nested value merging containers, inside a field", M.Holder(inner: M.TwoNestedForOneKey()), as: HolderReading.self),
        .roundTrip("amend: a nested value whose keyed single value is extended", M.Holder(inner: M.SingleThenKeyed()), as: HolderReading.self),
        .roundTrip("amend: a nested value whose container was asked for twice", M.Holder(inner: M.KeyedTwice()), as: HolderReading.self),
    ]

    /// Reads what ``MisuseModels/Holder`` wrote.
    struct HolderReading: Decodable, Equatable {
        var a: Int
        var nested: M.Dictionaries
        var b: Int
    }

    static let failedWrites: [CodableShape] = [
        .roundTrip("try?: keyed fields that failed half-way leave no trace", M.TolerantKeyed(), as: M.Tolerant.self),
        .roundTrip("try?: unkeyed elements that failed half-way leave no trace", M.TolerantUnkeyed(), as: [Int].self),
        .roundTrip("try?: numbers JSON refuses are left out", M.TolerantFloats(), as: M.Tolerant.self),
        .roundTrip("try?: a failure deep in nested values", M.TolerantDeep(), as: M.Tolerant.self),
        .roundTrip("failure: a value that throws half-way fails the encoding", M.Holder(inner: M.HalfWritten()), as: HolderReading.self),
        .roundTrip("failure: Double.nan in a field", ["a": Double.nan], as: [String: Double].self),
        .roundTrip("failure: Float.infinity in an array", [Float(1), .infinity], as: [Float].self),
        .roundTrip("failure: -Double.infinity at the top", -Double.infinity, as: Double.self),
        .roundTrip("failure: a date that is not finite", Date(timeIntervalSinceReferenceDate: .nan), as: Date.self),
        .roundTrip("failure: Decimal.nan", [Decimal.nan], as: [Decimal].self),
    ]

    static let keyNames: [CodableShape] = [
        .roundTrip("keys: a decomposed key read back", M.DecomposedKey(value: 1)),
        .roundTrip("keys: a decomposed key read by a precomposed one", M.DecomposedKey(value: 2), as: M.PrecomposedKey.self),
        .roundTrip("keys: a precomposed key read by a decomposed one", M.PrecomposedKey(value: 3), as: M.DecomposedKey.self),
        .roundTrip("keys: both spellings of one name in one model", M.BothSpellings(first: 1, second: 2)),
        .roundTrip("keys: both spellings read as a dictionary", M.BothSpellings(first: 1, second: 2), as: [String: Int].self),
        .roundTrip("keys: more names than compared in turn, decomposed", M.ManyKeysDecomposed()),
        .roundTrip("keys: more names than compared in turn, read precomposed", M.ManyKeysDecomposed(), as: M.ManyKeysPrecomposed.self),
        .roundTrip("keys: names that differ in case only", M.CaseOnly(lower: 1, upper: 2)),
        .roundTrip("keys: empty, space, emoji and joined emoji names", M.OddNames(empty: 1, space: 2, emoji: "k", family: "f")),
    ]

    static let metatypes: [CodableShape] = [
        .roundTrip("metatype: fields read through a subclass metatype", M.MetatypeSource(), as: M.ThroughMetatype.self),
    ]

    static let keptCoders: [CodableShape] = [
        .roundTrip("kept: a keyed container read after decoding ended", M.Named(name: "n", inner: ["x": 1]), as: M.LazyKeyed.self),
        .roundTrip("kept: an unkeyed container read after decoding ended", ["a", "b", "c"], as: M.LazyUnkeyed.self),
        .roundTrip("kept: the decoder read after decoding ended", M.Named(name: "n", inner: ["x": 1]), as: M.LazyDecoder.self),
        .roundTrip("kept: a decoder of an array read after decoding ended", ["x", "y"], as: M.LazyDecoder.self),
        .roundTrip("kept: a super decoder and a nested container read after decoding ended", M.Named(name: "n", inner: ["x": 7]), as: M.LazySuper.self),
    ]
}
