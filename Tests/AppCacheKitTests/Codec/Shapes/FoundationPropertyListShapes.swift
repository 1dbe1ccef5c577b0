import Foundation

// Shapes written from the Codable values and models that swift-foundation's property list
// encoder suite (Tests/FoundationEssentialsTests/PropertyListEncoderTests.swift) exercises.
// They are compared with JSON here, not with property lists, so shapes that only a plist can
// hold (bare top-level scalars excepted) are kept as the Codable shape they are; every model is
// written anew for this suite.

extension ConformanceShapes {
    static let foundationPropertyList: [CodableShape] = FoundationPropertyListModels.shapes
}

/// The models of the swift-foundation property list shapes, and the shapes themselves.
enum FoundationPropertyListModels {
    static var shapes: [CodableShape] {
        topLevel + structured + coercions + numbers + dates + strings + containers
    }

    // MARK: - Helpers

    /// A key of any name.
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

    /// Any stored value, read without a model of its own.
    enum Plain: Decodable, Equatable {
        case null
        case bool(Bool)
        case int(Int64)
        case uint(UInt64)
        case double(Double)
        case string(String)
        case list([Plain])
        case table([String: Plain])

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
            } else if let value = try? container.decode([Plain].self) {
                self = .list(value)
            } else {
                self = .table(try container.decode([String: Plain].self))
            }
        }
    }

    /// Wraps a value under the key "value", as property lists need a collection at the top.
    struct Boxed<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    // MARK: - Top-level types

    /// Nothing at all, as a struct and as a class.
    struct Nothing: Codable, Equatable {}
    final class NothingClass: Codable, Equatable {
        init() {}
        static func == (lhs: NothingClass, rhs: NothingClass) -> Bool { true }
    }

    /// A light switch stored as a Bool.
    enum Light: Codable, Equatable {
        case off, on

        init(from decoder: any Decoder) throws {
            let isOn = try decoder.singleValueContainer().decode(Bool.self)
            self = isOn ? .on : .off
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(self == .on)
        }
    }

    /// A moment stored as a Double.
    struct Moment: Codable, Equatable {
        var value: Double

        init(_ value: Double) { self.value = value }

        init(from decoder: any Decoder) throws {
            value = try decoder.singleValueContainer().decode(Double.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    /// A tally stored as an Int, held by reference.
    final class Tally: Codable, Equatable {
        var count: Int

        init(count: Int) { self.count = count }

        init(from decoder: any Decoder) throws {
            count = try decoder.singleValueContainer().decode(Int.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(count)
        }

        static func == (lhs: Tally, rhs: Tally) -> Bool { lhs.count == rhs.count }
    }

    /// True, false, or not found (null).
    enum Maybe: Codable, Equatable {
        case yes, no, notFound

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .notFound
            } else {
                self = try container.decode(Bool.self) ? .yes : .no
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .yes: try container.encode(true)
            case .no: try container.encode(false)
            case .notFound: try container.encodeNil()
            }
        }
    }

    // MARK: - Structured types

    /// A street address.
    struct StreetAddress: Codable, Equatable {
        var street: String
        var city: String
        var state: String
        var zipCode: Int
        var country: String

        static var sample: StreetAddress {
            StreetAddress(street: "1 Infinite Loop", city: "Cupertino", state: "CA", zipCode: 95014, country: "United States")
        }
    }

    /// A contact whose website is a plain string, and a subclass that shares its container.
    class Contact: Codable, Equatable {
        let name: String
        let email: String
        let website: String?

        init(name: String, email: String, website: String? = nil) {
            self.name = name
            self.email = email
            self.website = website
        }

        func sameFields(as other: Contact) -> Bool {
            name == other.name && email == other.email && website == other.website
        }

        static func == (lhs: Contact, rhs: Contact) -> Bool {
            type(of: lhs) == type(of: rhs) && lhs.sameFields(as: rhs)
        }
    }

    final class StaffMember: Contact {
        let id: Int

        init(name: String, email: String, id: Int) {
            self.id = id
            super.init(name: name, email: email)
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

        override func sameFields(as other: Contact) -> Bool {
            guard let other = other as? StaffMember, other.id == id else { return false }
            return super.sameFields(as: other)
        }

        static var sample: StaffMember { StaffMember(name: "Johnny Appleseed", email: "appleseed@apple.com", id: 42) }
    }

    /// An office with its staff.
    struct Office: Codable, Equatable {
        var address: StreetAddress
        var staff: [StaffMember]
    }

    /// Says which class a `Contact.Type` holding `StaffMember.self` decodes.
    struct MetatypeProbe: Decodable, Equatable {
        var isStaffMember: Bool

        init(from decoder: any Decoder) throws {
            let type: Contact.Type = StaffMember.self
            isStaffMember = try decoder.singleValueContainer().decode(type) is StaffMember
        }
    }

    /// Numbers stored as an array through a single value container.
    struct NumberSequence: Codable, Equatable {
        var values = [4, 8, 15, 16, 23, 42]

        init() {}

        init(from decoder: any Decoder) throws {
            values = try decoder.singleValueContainer().decode([Int].self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(values)
        }
    }

    /// Strings stored as an object through a single value container, held by reference.
    final class Lookup: Codable, Equatable {
        let values: [String: String]

        init(values: [String: String]) { self.values = values }

        init(from decoder: any Decoder) throws {
            values = try decoder.singleValueContainer().decode([String: String].self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(values)
        }

        static func == (lhs: Lookup, rhs: Lookup) -> Bool { lhs.values == rhs.values }
    }

    /// Two nested keyed containers under one key.
    struct SharedTopKey: Codable, Equatable {
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

    /// Empty keyed and unkeyed containers at two levels, directly or under a super encoder.
    struct EmptyContainersWriter: Encodable {
        var underSuperEncoder: Bool

        enum Outer: Int, CodingKey { case a, b, c }
        enum Inner: Int, CodingKey { case one, two }

        func encode(to encoder: any Encoder) throws {
            if underSuperEncoder {
                var top = encoder.container(keyedBy: Outer.self)
                fill(top.superEncoder(forKey: .a))
            } else {
                fill(encoder)
            }
        }

        private func fill(_ encoder: any Encoder) {
            var outer = encoder.container(keyedBy: Outer.self)
            var keyed = outer.nestedContainer(keyedBy: Inner.self, forKey: .a)
            _ = keyed.nestedContainer(keyedBy: Inner.self, forKey: .one)
            _ = keyed.nestedUnkeyedContainer(forKey: .two)
            var unkeyed = outer.nestedUnkeyedContainer(forKey: .b)
            _ = unkeyed.nestedContainer(keyedBy: Inner.self)
            _ = unkeyed.nestedUnkeyedContainer()
        }
    }

    /// A model whose optional, array of optionals and dictionary of Data arrays came from the
    /// keyed-archiver round trip.
    struct Archived: Codable, Equatable {
        var willBeNil: String?
        var arrayOfOptionals: [String?]
        var dictionaryOfArrays: [String: [Data]]
    }

    /// An array of optional strings written with explicit `encodeNil` and read with `decodeNil`.
    struct ExplicitNulls: Codable, Equatable {
        var array: [String?]

        init(array: [String?]) { self.array = array }

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            array = []
            while !container.isAtEnd {
                if try container.decodeNil() {
                    array.append(nil)
                } else {
                    array.append(try container.decode(String.self))
                }
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            for value in array {
                if let value { try container.encode(value) } else { try container.encodeNil() }
            }
        }
    }

    /// An array of mixed kinds next to two strings, as a generic properties file holds them.
    struct GenericPropertiesWriter: Encodable {
        enum Keys: String, CodingKey { case array1, item1, item2 }

        func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: Keys.self)
            var array = keyed.nestedUnkeyedContainer(forKey: .array1)
            try array.encode("arr0")
            try array.encode(42)
            try array.encode(false)
            try array.encode(Date(timeIntervalSinceReferenceDate: -789_652_800))
            try array.encode(Data([0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33]))
            try keyed.encode("value1", forKey: .item1)
            try keyed.encode("value2", forKey: .item2)
        }
    }

    /// Reads the generic properties back and lists what did not match.
    struct GenericPropertiesReader: Decodable, Equatable {
        var mismatches: [String] = []

        init(from decoder: any Decoder) throws {
            let keyed = try decoder.container(keyedBy: GenericPropertiesWriter.Keys.self)
            var array = try keyed.nestedUnkeyedContainer(forKey: .array1)
            if try array.decode(String.self) != "arr0" { mismatches.append("arr0") }
            if try array.decode(Int.self) != 42 { mismatches.append("42") }
            if try array.decode(Bool.self) != false { mismatches.append("false") }
            if try array.decode(Date.self) != Date(timeIntervalSinceReferenceDate: -789_652_800) { mismatches.append("date") }
            if try array.decode(Data.self) != Data([0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33]) { mismatches.append("data") }
            if try keyed.decode(String.self, forKey: .item1) != "value1" { mismatches.append("item1") }
            if try keyed.decode(String.self, forKey: .item2) != "value2" { mismatches.append("item2") }
        }
    }

    /// Super encoders and decoders from keyed containers (by key and by default) and from an
    /// unkeyed container filled out of order; records what it read wrongly.
    struct UsesSupers: Codable, Equatable {
        var failures: [String] = []

        init() {}

        enum CodingKeys: String, CodingKey { case a, b, unkeyed }

        func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: CodingKeys.self)
            try keyed.encodeNil(forKey: .a)

            var bSingle = keyed.superEncoder(forKey: .b).singleValueContainer()
            try bSingle.encode("b")

            var defaultSingle = keyed.superEncoder().singleValueContainer()
            try defaultSingle.encode("super")

            var unkeyed = keyed.superEncoder(forKey: .unkeyed).unkeyedContainer()
            try unkeyed.encodeNil()
            let middle = unkeyed.superEncoder()
            try unkeyed.encode("final")
            var middleSingle = middle.singleValueContainer()
            try middleSingle.encode("middle")
        }

        init(from decoder: any Decoder) throws {
            let keyed = try decoder.container(keyedBy: CodingKeys.self)
            if try !keyed.decodeNil(forKey: .a) { failures.append("a") }
            if try keyed.superDecoder(forKey: .b).singleValueContainer().decode(String.self) != "b" { failures.append("b") }
            if try keyed.superDecoder().singleValueContainer().decode(String.self) != "super" { failures.append("super") }
            var unkeyed = try keyed.superDecoder(forKey: .unkeyed).unkeyedContainer()
            if try !unkeyed.decodeNil() { failures.append("nil") }
            if try unkeyed.superDecoder().singleValueContainer().decode(String.self) != "middle" { failures.append("middle") }
            if try unkeyed.decode(String.self) != "final" { failures.append("final") }
        }
    }

    /// Three string properties in an order that is not alphabetical.
    struct FauxStable: Codable, Equatable {
        var a = "a"
        var z = "z"
        var n = "n"
    }

    /// A value written as an Int, a Float or a String, read back by trying each in turn.
    struct MultipleDecodeOptions: Codable, Equatable {
        enum Option: Equatable { case string, int, float }
        var value: String
        var option: Option

        init(_ value: String, _ option: Option) {
            self.value = value
            self.option = option
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            switch option {
            case .string: try container.encode(value)
            case .int: try container.encode(Int(value)!)
            case .float: try container.encode(Float(value)!)
            }
        }

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            if let int = try? container.decode(Int.self) {
                value = "\(int)"
                option = .int
            } else if let float = try? container.decode(Float.self) {
                value = "\(float)"
                option = .float
            } else {
                value = try container.decode(String.self)
                option = .string
            }
        }
    }

    /// Tries one type and then another on the same single value container, with `try?`.
    enum OneOrOther<First: Decodable & Equatable, Second: Decodable & Equatable>: Decodable, Equatable {
        case first(First)
        case second(Second)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(First.self) {
                self = .first(value)
            } else if let value = try? container.decode(Second.self) {
                self = .second(value)
            } else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "neither"))
            }
        }
    }

    /// Throws an error of its own from `encode(to:)`.
    struct Throwing: Encodable {
        enum Refusal: Error { case refused }
        func encode(to encoder: any Encoder) throws { throw Refusal.refused }
    }

    /// Writes its value inside an unkeyed container of a super encoder of an unkeyed container.
    struct SuperEncoderWrapper<Value: Encodable>: Encodable {
        var value: Value

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            var nested = container.superEncoder().unkeyedContainer()
            try nested.encode(value)
        }
    }

    /// Optionals of every primitive kind, written keyed and read with `decodeIfPresent`.
    struct KeyedExtremes: Codable, Equatable {
        var bool: Bool?, string: String?
        var i8: Int8?, i16: Int16?, i32: Int32?, i64: Int64?, u8: UInt8?, u16: UInt16?, u32: UInt32?, u64: UInt64?
        var float: Float?, double: Double?

        static var maxima: KeyedExtremes {
            KeyedExtremes(bool: true, string: "max", i8: .max, i16: .max, i32: .max, i64: .max, u8: .max, u16: .max, u32: .max, u64: .max, float: .greatestFiniteMagnitude, double: .greatestFiniteMagnitude)
        }

        static var minima: KeyedExtremes {
            KeyedExtremes(bool: false, string: "", i8: .min, i16: .min, i32: .min, i64: .min, u8: .min, u16: .min, u32: .min, u64: .min, float: -.greatestFiniteMagnitude, double: -.leastNonzeroMagnitude)
        }
    }

    // MARK: - Shapes

    /// Top-level and boxed single values, Data and Date.
    static var topLevel: [CodableShape] {
        [
            .roundTrip("swift-foundation plist: empty struct (encodingTopLevelEmptyStruct)", Nothing()),
            .roundTrip("swift-foundation plist: empty class (encodingTopLevelEmptyClass)", NothingClass()),
            .roundTrip("swift-foundation plist: single-value enum off (encodingTopLevelSingleValueEnum)", Light.off),
            .roundTrip("swift-foundation plist: single-value enum on, boxed (encodingTopLevelSingleValueEnum)", Boxed(Light.on)),
            .roundTrip("swift-foundation plist: single-value struct (encodingTopLevelSingleValueStruct)", Moment(3141592653)),
            .roundTrip("swift-foundation plist: single-value struct, boxed (encodingTopLevelSingleValueStruct)", Boxed(Moment(3141592653))),
            .roundTrip("swift-foundation plist: single-value class (encodingTopLevelSingleValueClass)", Tally(count: 0)),
            .roundTrip("swift-foundation plist: single-value class, boxed (encodingTopLevelSingleValueClass)", Boxed(Tally(count: -7))),
            .roundTrip("swift-foundation plist: nullable type true, boxed (encodingTopLevelNullableType)", Boxed(Maybe.yes)),
            .roundTrip("swift-foundation plist: nullable type false, boxed (encodingTopLevelNullableType)", Boxed(Maybe.no)),
            .roundTrip("swift-foundation plist: nullable type null, boxed (encodingTopLevelNullableType)", Boxed(Maybe.notFound)),
            .roundTrip("swift-foundation plist: nullable type null, read as Bool? (encodingTopLevelNullableType)", Boxed(Maybe.notFound), as: [String: Bool?].self),
            .roundTrip("swift-foundation plist: nullable types in an array (encodingTopLevelNullableType)", [Maybe.yes, .notFound, .no]),
            .roundTrip("swift-foundation plist: Data of an empty JSON array (encodingTopLevelData)", Data("[]".utf8)),
            .roundTrip("swift-foundation plist: Data under a key (interceptData)", Boxed(Data("[]".utf8))),
            .roundTrip("swift-foundation plist: Date under a key (interceptDate)", Boxed(Date(timeIntervalSinceReferenceDate: 0))),
            .roundTrip("swift-foundation plist: Date under a key read as Double (interceptDate)", Boxed(Date(timeIntervalSinceReferenceDate: 0)), as: [String: Double].self),
        ]
    }

    /// Keyed models, class hierarchies, nested containers, nulls, super encoders and decoders.
    static var structured: [CodableShape] {
        [
            .roundTrip("swift-foundation plist: keyed struct (encodingTopLevelStructuredStruct)", StreetAddress.sample),
            .roundTrip("swift-foundation plist: keyed class (encodingTopLevelStructuredClass)", Contact(name: "Johnny Appleseed", email: "appleseed@apple.com")),
            .roundTrip("swift-foundation plist: keyed class with a website (encodingTopLevelStructuredClass)", Contact(name: "Johnny Appleseed", email: "appleseed@apple.com", website: "apple.com")),
            .roundTrip("swift-foundation plist: array through a single value container (encodingTopLevelStructuredSingleStruct)", NumberSequence()),
            .roundTrip("swift-foundation plist: dictionary of strings through a single value container (encodingTopLevelStructuredSingleClass)", Lookup(values: ["Apple": "Inc.", "localhost": "127.0.0.1"])),
            .roundTrip("swift-foundation plist: deep structure (encodingTopLevelDeepStructuredType)", Office(address: .sample, staff: [.sample, StaffMember(name: "Jane", email: "jane@example.com", id: 7)])),
            .roundTrip("swift-foundation plist: subclass sharing its superclass's container (encodingClassWhichSharesEncoderWithSuper)", StaffMember.sample),
            .roundTrip("swift-foundation plist: subclass read as its superclass (encodingClassWhichSharesEncoderWithSuper)", StaffMember.sample, as: Contact.self),
            .roundTrip("swift-foundation plist: subclass read through a superclass metatype (decodingConcreteTypeParameter)", StaffMember.sample, as: MetatypeProbe.self),
            .roundTrip("swift-foundation plist: two nested containers under one key (encodingMultipleNestedContainersWithTheSameTopLevelKey)", SharedTopKey(first: "Johnny Appleseed", second: "appleseed@apple.com")),
            .roundTrip("swift-foundation plist: two nested containers under one key read plainly (encodingMultipleNestedContainersWithTheSameTopLevelKey)", SharedTopKey(first: "Johnny Appleseed", second: "appleseed@apple.com"), as: [String: [String: String]].self),
            .roundTrip("swift-foundation plist: empty nested containers (nestedContainerCodingPaths)", EmptyContainersWriter(underSuperEncoder: false), as: Plain.self),
            .roundTrip("swift-foundation plist: empty nested containers under a super encoder (superEncoderCodingPaths)", EmptyContainersWriter(underSuperEncoder: true), as: Plain.self),
            .roundTrip("swift-foundation plist: optional, optionals in an array and Data arrays (archiving)", Archived(willBeNil: nil, arrayOfOptionals: ["a", "b", nil, "c"], dictionaryOfArrays: ["data": [Data([0xFE, 0xED, 0xFA, 0xCE]), Data([0xBA, 0xAA, 0xAA, 0xAD])]])),
            .roundTrip("swift-foundation plist: explicit nulls in an unkeyed container (unkeyedContainerContainingNulls)", ExplicitNulls(array: [nil, "test", nil])),
            .roundTrip("swift-foundation plist: explicit nulls read as [String?] (unkeyedContainerContainingNulls)", ExplicitNulls(array: [nil, "test", nil]), as: [String?].self),
            .roundTrip("swift-foundation plist: mixed array next to strings (genericProperties_XML)", GenericPropertiesWriter(), as: GenericPropertiesReader.self),
            .roundTrip("swift-foundation plist: super encoders and decoders everywhere (supers)", UsesSupers()),
            .roundTrip("swift-foundation plist: super encoders read plainly (supers)", UsesSupers(), as: Plain.self),
            .roundTrip("swift-foundation plist: properties in a non-alphabetical order (fauxStability_struct)", FauxStable()),
            .roundTrip("swift-foundation plist: properties read as a dictionary (fauxStability_struct)", FauxStable(), as: [String: String].self),
            .roundTrip("swift-foundation plist: dictionary of three strings (fauxStability_dict)", ["a": "a", "z": "z", "n": "n"]),
            .roundTrip("swift-foundation plist: Int read back by trying Int first (multipleDecodeOptions)", MultipleDecodeOptions("1", .int)),
            .roundTrip("swift-foundation plist: Float read back by trying Int first (multipleDecodeOptions)", MultipleDecodeOptions("1.2", .float)),
            .roundTrip("swift-foundation plist: String read back by trying Int first (multipleDecodeOptions)", MultipleDecodeOptions("foo", .string)),
            .roundTrip("swift-foundation plist: keyed optionals at their maxima (decodeIfPresent)", KeyedExtremes.maxima),
            .roundTrip("swift-foundation plist: keyed optionals at their minima (decodeIfPresent)", KeyedExtremes.minima),
            .roundTrip("swift-foundation plist: keyed optionals all nil (decodeIfPresent)", KeyedExtremes()),
            .roundTrip("swift-foundation plist: all-nil optionals read as an empty dictionary (decodeIfPresent)", KeyedExtremes(), as: [String: Int].self),
        ]
    }

    /// Reads of one numeric kind as another, both the ones that fail and the ones that succeed.
    static var coercions: [CodableShape] {
        [
            .roundTrip("swift-foundation plist: [Int] read as [Bool] (typeCoercion)", [0, 1] as [Int], as: [Bool].self),
            .roundTrip("swift-foundation plist: [Int8] read as [Bool] (typeCoercion)", [0, 1] as [Int8], as: [Bool].self),
            .roundTrip("swift-foundation plist: [Int16] read as [Bool] (typeCoercion)", [0, 1] as [Int16], as: [Bool].self),
            .roundTrip("swift-foundation plist: [Int32] read as [Bool] (typeCoercion)", [0, 1] as [Int32], as: [Bool].self),
            .roundTrip("swift-foundation plist: [Int64] read as [Bool] (typeCoercion)", [0, 1] as [Int64], as: [Bool].self),
            .roundTrip("swift-foundation plist: [UInt] read as [Bool] (typeCoercion)", [0, 1] as [UInt], as: [Bool].self),
            .roundTrip("swift-foundation plist: [UInt8] read as [Bool] (typeCoercion)", [0, 1] as [UInt8], as: [Bool].self),
            .roundTrip("swift-foundation plist: [UInt16] read as [Bool] (typeCoercion)", [0, 1] as [UInt16], as: [Bool].self),
            .roundTrip("swift-foundation plist: [UInt32] read as [Bool] (typeCoercion)", [0, 1] as [UInt32], as: [Bool].self),
            .roundTrip("swift-foundation plist: [UInt64] read as [Bool] (typeCoercion)", [0, 1] as [UInt64], as: [Bool].self),
            .roundTrip("swift-foundation plist: [Float] read as [Bool] (typeCoercion)", [0.0, 1.0] as [Float], as: [Bool].self),
            .roundTrip("swift-foundation plist: [Bool] read as [String] (typeCoercion)", [false, true], as: [String].self),
            .roundTrip("swift-foundation plist: 256.0 read as UInt8 (typeCoercion)", [256] as [Double], as: [UInt8].self),
            .roundTrip("swift-foundation plist: -129.0 read as Int8 (typeCoercion)", [-129] as [Double], as: [Int8].self),
            .roundTrip("swift-foundation plist: -1.0 read as UInt64 (typeCoercion)", [-1.0] as [Double], as: [UInt64].self),
            .roundTrip("swift-foundation plist: 3.14159 read as UInt64 (typeCoercion)", [3.14159] as [Double], as: [UInt64].self),
            .roundTrip("swift-foundation plist: infinity read as UInt64 (typeCoercion)", [.infinity] as [Double], as: [UInt64].self),
            .roundTrip("swift-foundation plist: Int64 -1 read as UInt64 (typeCoercion)", [Int64(-1)], as: [UInt64].self),
            .roundTrip("swift-foundation plist: UInt64.max read as Int64 (typeCoercion)", [UInt64.max], as: [Int64].self),
            .roundTrip("swift-foundation plist: UInt64 1 read as Double (integerRealCoercion)", [1 as UInt64], as: [Double].self),
            .roundTrip("swift-foundation plist: Int64 -1 read as Float (integerRealCoercion)", [-1 as Int64], as: [Float].self),
            .roundTrip("swift-foundation plist: UInt64.max read as Double (integerRealCoercion)", [UInt64.max], as: [Double].self),
            .roundTrip("swift-foundation plist: Int64.min read as Double (integerRealCoercion)", [Int64.min], as: [Double].self),
            .roundTrip("swift-foundation plist: 1.0 read as UInt8 (integerRealCoercion)", [1.0], as: [UInt8].self),
            .roundTrip("swift-foundation plist: 1.0 read as UInt64 (integerRealCoercion)", [1.0], as: [UInt64].self),
            .roundTrip("swift-foundation plist: 1.0 read as Int32 (integerRealCoercion)", [1.0], as: [Int32].self),
            .roundTrip("swift-foundation plist: -1.0 read as Int8 (integerRealCoercion)", [-1.0], as: [Int8].self),
            .roundTrip("swift-foundation plist: 255.0 read as UInt8 (integerRealCoercion)", [255.0], as: [UInt8].self),
            .roundTrip("swift-foundation plist: -127.0 read as Int8 (integerRealCoercion)", [-127.0], as: [Int8].self),
            .roundTrip("swift-foundation plist: 2.99792458e8 read as Int (integerRealCoercion)", [2.99792458e8], as: [Int].self),
            .roundTrip("swift-foundation plist: Float 2.0 read as Int (realEncodeRemoveZeroSuffix)", [Float(2.0)], as: [Int].self),
        ]
    }

    /// Integers and reals at the edges of their types.
    static var numbers: [CodableShape] {
        [
            .roundTrip("swift-foundation plist: Int8.max (binaryNumberEdgeCases)", [Int8.max]),
            .roundTrip("swift-foundation plist: Int8.min (binaryNumberEdgeCases)", [Int8.min]),
            .roundTrip("swift-foundation plist: Int16.max (binaryNumberEdgeCases)", [Int16.max]),
            .roundTrip("swift-foundation plist: Int16.min (binaryNumberEdgeCases)", [Int16.min]),
            .roundTrip("swift-foundation plist: Int32.max (binaryNumberEdgeCases)", [Int32.max]),
            .roundTrip("swift-foundation plist: Int32.min (binaryNumberEdgeCases)", [Int32.min]),
            .roundTrip("swift-foundation plist: Int64.max (binaryNumberEdgeCases)", [Int64.max]),
            .roundTrip("swift-foundation plist: UInt8.max (binaryNumberEdgeCases)", [UInt8.max]),
            .roundTrip("swift-foundation plist: UInt16.max (binaryNumberEdgeCases)", [UInt16.max]),
            .roundTrip("swift-foundation plist: UInt32.max (binaryNumberEdgeCases)", [UInt32.max]),
            .roundTrip("swift-foundation plist: UInt64.max (binaryNumberEdgeCases)", [UInt64.max]),
            .roundTrip("swift-foundation plist: greatest Float (binaryNumberEdgeCases)", [Float.greatestFiniteMagnitude]),
            .roundTrip("swift-foundation plist: lowest Float (binaryNumberEdgeCases)", [-Float.greatestFiniteMagnitude]),
            .roundTrip("swift-foundation plist: Float infinity (binaryNumberEdgeCases)", [Float.infinity]),
            .roundTrip("swift-foundation plist: Float negative infinity (binaryNumberEdgeCases)", [-Float.infinity]),
            .roundTrip("swift-foundation plist: greatest Double (binaryNumberEdgeCases)", [Double.greatestFiniteMagnitude]),
            .roundTrip("swift-foundation plist: lowest Double (binaryNumberEdgeCases)", [-Double.greatestFiniteMagnitude]),
            .roundTrip("swift-foundation plist: Double negative infinity (binaryNumberEdgeCases)", [-Double.infinity]),
            .roundTrip("swift-foundation plist: 127 as Int16 read as Int8 (xmlIntegerEdgeCases)", Int16(127), as: Int8.self),
            .roundTrip("swift-foundation plist: 128 as Int16 read as Int8 (xmlIntegerEdgeCases)", Int16(128), as: Int8.self),
            .roundTrip("swift-foundation plist: -129 as Int16 read as Int8 (xmlIntegerEdgeCases)", Int16(-129), as: Int8.self),
            .roundTrip("swift-foundation plist: 32768 as Int32 read as Int16 (xmlIntegerEdgeCases)", Int32(32768), as: Int16.self),
            .roundTrip("swift-foundation plist: -2147483649 as Int64 read as Int32 (xmlIntegerEdgeCases)", Int64(-2147483649), as: Int32.self),
            .roundTrip("swift-foundation plist: 256 as UInt16 read as UInt8 (xmlIntegerEdgeCases)", UInt16(256), as: UInt8.self),
            .roundTrip("swift-foundation plist: 65536 as UInt32 read as UInt16 (xmlIntegerEdgeCases)", UInt32(65536), as: UInt16.self),
            .roundTrip("swift-foundation plist: 4294967296 as UInt64 read as UInt32 (xmlIntegerEdgeCases)", UInt64(4294967296), as: UInt32.self),
            .roundTrip("swift-foundation plist: 4294967295 as UInt64 read as UInt32 (xmlIntegerEdgeCases)", UInt64(4294967295), as: UInt32.self),
            .roundTrip("swift-foundation plist: hex-looking integers (issue6164184)", [0x721B, 0x1111, -0xFFFF]),
            .roundTrip("swift-foundation plist: signed integers (xmlIntegerWhitespace)", [42, -99, -0xFACE]),
            .roundTrip("swift-foundation plist: Float reals (binaryReals)", [1.5, 2, -3.14, 1.000000000000000000000001, 31415.9e-4] as [Float]),
            .roundTrip("swift-foundation plist: Double reals (binaryReals)", [1.5, 2, -3.14, 1.000000000000000000000001, 31415.9e-4] as [Double]),
            .roundTrip("swift-foundation plist: Float reals read as Double (binaryReals)", [1.5, -3.14, 31415.9e-4] as [Float], as: [Double].self),
            .roundTrip("swift-foundation plist: Double reals read as Float (xmlReals)", [1.5, -3.14, 31415.9e-4] as [Double], as: [Float].self),
            .roundTrip("swift-foundation plist: a Double too large for Float (xmlReals)", [1e300] as [Double], as: [Float].self),
            .roundTrip("swift-foundation plist: whole reals (realEncodeRemoveZeroSuffix)", [2.0, -5.0, 0.5]),
            .roundTrip("swift-foundation plist: whole Float real (realEncodeRemoveZeroSuffix)", [Float(2.0)]),
        ]
    }

    /// Dates far in the past and future and with fractions of a second.
    static var dates: [CodableShape] {
        [
            .roundTrip("swift-foundation plist: a date in year zero (badDates)", [Date(timeIntervalSinceReferenceDate: -63_145_612_800)]),
            .roundTrip("swift-foundation plist: a date in the far future (farFutureDates)", [Date(timeIntervalSince1970: 999_999_999_999.0)]),
            .roundTrip("swift-foundation plist: a date on a month boundary (encode_122065123)", [Date(timeIntervalSinceReferenceDate: 728_512_994)]),
            .roundTrip("swift-foundation plist: a date in year nine (reallyOldDates_5842198)", [Date(timeIntervalSinceReferenceDate: -62_882_268_227)]),
            .roundTrip("swift-foundation plist: distant past and future (badDates)", [Date.distantPast, Date.distantFuture]),
            .roundTrip("swift-foundation plist: a date with a fraction of a second (badDates)", [Date(timeIntervalSinceReferenceDate: 0.000_001)]),
        ]
    }

    /// Strings with markup characters, emoji, NULs and dotted keys.
    static var strings: [CodableShape] {
        [
            .roundTrip("swift-foundation plist: copyright signs (multibyteCharacters_escaped_noencoding)", "These are copyright signs © © blah blah blah."),
            .roundTrip("swift-foundation plist: markup characters (escapedCharacters)", "&'<>\""),
            .roundTrip("swift-foundation plist: markup characters in an array (roundTripEscapedStrings)", ["&", "<", ">"]),
            .roundTrip("swift-foundation plist: a plain string (dataWithBOM_utf8)", "hello"),
            .roundTrip("swift-foundation plist: a dotted key and a quoted regex (plistWithEscapedCharacters)", ["com.apple.security.temporary-exception.sbpl": "(allow mach-lookup (global-name-regex #\"^[0-9]+$\"))"]),
            .roundTrip("swift-foundation plist: an emoji value (decodingEmoji)", ["emoji": "\u{0001F698}"]),
            .roundTrip("swift-foundation plist: emoji with modifiers and joiners (roundTripEmoji)", ["🚘", "👩🏻‍❤️‍👨🏿", "🏋🏽‍♂️🕺🏼🥌"]),
            .roundTrip("swift-foundation plist: markup-looking text (CDATA_section)", "Test &amp; &33; <![CDATA[] outside"),
            .roundTrip("swift-foundation plist: a NUL inside a key (xmlEncodingRejectsStringsWithEmbeddedNUL)", ["ke\0y": "value"]),
            .roundTrip("swift-foundation plist: a NUL inside a value (xmlEncodingRejectsStringsWithEmbeddedNUL)", ["key": "val\0ue"]),
            .roundTrip("swift-foundation plist: a dollar sign in a key (uid)", ["CF$UID": 1] as [String: Int32]),
            .roundTrip("swift-foundation plist: trailing whitespace in a string (bad_XMLReals)", ["1.5  "]),
            .roundTrip("swift-foundation plist: a number spelled as a string read as Float (bad_XMLReals)", "1.5", as: Float.self),
        ]
    }

    /// Fallback readers, errors thrown from nested encoders, and dictionaries with non-String keys.
    static var containers: [CodableShape] {
        [
            .roundTrip("swift-foundation plist: [Int] read as [String] or else [Int] with try? (decoderStateThrowOnDecode)", [1, 2, 3], as: OneOrOther<[String], [Int]>.self),
            .roundTrip("swift-foundation plist: String read as Int or else String with try? (decoderStateThrowOnDecode)", "x", as: OneOrOther<Int, String>.self),
            .roundTrip("swift-foundation plist: a throwing value three levels down (encoderStateThrowOnEncode)", SuperEncoderWrapper(value: [Throwing()]), as: [[[Int]]].self),
            .roundTrip("swift-foundation plist: a string three levels down (encoderStateThrowOnEncode)", SuperEncoderWrapper(value: ["deep"]), as: [[[String]]].self),
            .roundTrip("swift-foundation plist: Int-keyed dictionary (nonStringDictionaryKey)", [1: "a", -2: "b"]),
            .roundTrip("swift-foundation plist: Int-keyed dictionary read with String keys (nonStringDictionaryKey)", [1: "a", -2: "b"], as: [String: String].self),
            .roundTrip("swift-foundation plist: numeric String keys read as Int keys (nonStringDictionaryKey)", ["1": "a", "22": "b"], as: [Int: String].self),
            .roundTrip("swift-foundation plist: non-numeric String keys read as Int keys (nonStringDictionaryKey)", ["abcd": "xyz"], as: [Int: String].self),
            .roundTrip("swift-foundation plist: Bool-keyed dictionary (nonStringDictionaryKey)", [true: 1]),
            .roundTrip("swift-foundation plist: Bool-keyed dictionary read as an array (nonStringDictionaryKey)", [false: "no"], as: Plain.self),
            .roundTrip("swift-foundation plist: Data where Int expected (invalidNSDataKey_82142612)", [Data([0xAB, 0xCD])], as: [Int].self),
            .roundTrip("swift-foundation plist: nested arrays sharing elements (bplistCollectionReferences)", ["a": [[["a", "a"], ["a", "a"]], [["a", "a"], ["a", "a"]]], "b": [[["a", "a"], ["a", "a"]]]]),
            .roundTrip("swift-foundation plist: String in an array where Int expected (issue5616259)", ["1", "2"], as: [Int].self),
            .roundTrip("swift-foundation plist: an empty dictionary where an array expected (xmlErrors)", [String: String](), as: [String].self),
            .roundTrip("swift-foundation plist: an empty array where a dictionary expected (xmlErrors)", [String](), as: [String: String].self),
        ]
    }
}
