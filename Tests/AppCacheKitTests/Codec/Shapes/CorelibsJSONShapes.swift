import Foundation

// Shapes written from the values and models that swift-corelibs-foundation's
// Tests/Foundation/TestJSONEncoder.swift and Tests/Foundation/TestCodable.swift round-trip
// through JSON, kept to the default strategies. Every model is written anew for this suite.

extension ConformanceShapes {
    static let corelibsJSON: [CodableShape] = CorelibsJSONModels.shapes
}

/// The models of the swift-corelibs-foundation shapes, and the shapes themselves.
enum CorelibsJSONModels {
    static var shapes: [CodableShape] {
        fragments + wrapped + formatting + numbers + decoders + foundationValues + affineTransforms + geometry + calendars + urls
    }

    // MARK: - Wrappers

    /// A value under the key "value".
    struct ObjectBox<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// A value as the only element of an array.
    struct ArrayBox<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value

        init(_ value: Value) { self.value = value }

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            value = try container.decode(Value.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(value)
        }
    }

    // MARK: - Models

    /// Nothing at all.
    struct Blank: Codable, Equatable {}

    /// A toggle stored as a Bool.
    enum Toggle: Codable, Equatable {
        case off, on

        init(from decoder: any Decoder) throws {
            self = try decoder.singleValueContainer().decode(Bool.self) ? .on : .off
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(self == .on)
        }
    }

    /// A stamp stored as a Double.
    struct Stamp: Codable, Equatable {
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

    /// A person with an optional website, as the output-formatting tests write it.
    final class Member: Codable, Equatable {
        let name: String
        let email: String
        let website: URL?

        init(name: String, email: String, website: URL? = nil) {
            self.name = name
            self.email = email
            self.website = website
        }

        static func == (lhs: Member, rhs: Member) -> Bool {
            lhs.name == rhs.name && lhs.email == rhs.email && lhs.website == rhs.website
        }
    }

    /// Collections that are empty, single, nested and keyed, as the pretty-printing test has them.
    struct Collections: Codable, Equatable {
        var array = [1, 2, 3]
        var dictionary: [String: Int] = [:]
        var emptyArray: [Int] = []
        var secondArray = [4, 5, 6]
        var secondDictionary = ["one": 1, "two": 2, "three": 3]
        var singleElement = [1]
        var subArray: [String: [Int]] = ["array": []]
        var subDictionary: [String: [String: Int]] = ["dictionary": [:]]
    }

    /// Finds no super key and still decodes.
    struct MissingSuperKey: Decodable, Equatable {
        enum CodingKeys: String, CodingKey { case superDecoder = "super" }

        init(from decoder: any Decoder) throws {
            _ = try decoder.container(keyedBy: CodingKeys.self).superDecoder(forKey: .superDecoder)
        }
    }

    /// A class and its subclass, decoded through a metatype chosen at run time.
    class BaseType: Decodable {
        required init(from decoder: any Decoder) throws {}
    }

    final class ChildType: BaseType {}

    /// Says which class a `BaseType.Type` holding `ChildType.self` decodes.
    struct ChildTypeProbe: Decodable, Equatable {
        var isChild: Bool

        init(from decoder: any Decoder) throws {
            let type: BaseType.Type = ChildType.self
            isChild = try decoder.singleValueContainer().decode(type) is ChildType
        }
    }

    /// Optional numbers of every kind and one required Bool: Bools must not read as numbers.
    struct StrictBools: Codable, Equatable {
        var intValue: Int?
        var int8Value: Int8?
        var int16Value: Int16?
        var int32Value: Int32?
        var int64Value: Int64?
        var uintValue: UInt?
        var uint8Value: UInt8?
        var uint16Value: UInt16?
        var uint32Value: UInt32?
        var uint64Value: UInt64?
        var floatValue: Float?
        var doubleValue: Double?
        var decimalValue: Decimal?
        var boolValue: Bool
    }

    /// The 64-bit integer limits.
    struct IntegerLimits: Codable, Equatable {
        var int64Min = Int64.min
        var int64Max = Int64.max
        var uint64Min = UInt64.min
        var uint64Max = UInt64.max
    }

    /// A value of each numeric type.
    struct NumericTypes: Codable, Equatable {
        var int8Value: Int8
        var uint8Value: UInt8
        var int16Value: Int16
        var uint16Value: UInt16
        var int32Value: Int32
        var uint32Value: UInt32
        var int64Value: Int64
        var intValue: Int
        var uintValue: UInt
        var uint64Value: UInt64
        var floatValue: Float
        var doubleValue: Double
        var decimalValue: Decimal

        static var sample: NumericTypes {
            NumericTypes(int8Value: -12, uint8Value: 34, int16Value: -5678, uint16Value: 9011, int32Value: -12141516, uint32Value: 17181920, int64Value: -21222324252627, intValue: -2829303132, uintValue: 33343536, uint64Value: 373839404142, floatValue: 1.234, doubleValue: 5.101520, decimalValue: 10)
        }
    }

    /// The same keys as ``NumericTypes``, every value written as a Double.
    struct NumericTypesAsDoubles: Encodable {
        var int8Value = -12.0
        var uint8Value = 34.0
        var int16Value = -5678.0
        var uint16Value = 9011.0
        var int32Value = -12141516.0
        var uint32Value = 17181920.0
        var int64Value = -21222324252627.0
        var intValue = -2829303132.0
        var uintValue = 33343536.0
        var uint64Value = 373839404142.0
        var floatValue = 1.234
        var doubleValue = 5.101520
        var decimalValue = 10.0
    }

    /// Optional numbers of every kind, for reading values at and past their limits.
    struct NumericLimits: Codable, Equatable {
        var int8Value: Int8?
        var uint8Value: UInt8?
        var int16Value: Int16?
        var uint16Value: UInt16?
        var int32Value: Int32?
        var uint32Value: UInt32?
        var int64Value: Int64?
        var intValue: Int?
        var uintValue: UInt?
        var uint64Value: UInt64?
        var floatValue: Float?
        var doubleValue: Double?
        var decimalValue: Decimal?
    }

    /// A model with camel-case names of every primitive kind, a date, an array and a dictionary.
    struct CamelCaseEverything: Codable, Equatable {
        var thisIsAString: String
        var thisIsABool: Bool
        var thisIsAnInt: Int
        var thisIsAnInt8: Int8
        var thisIsAnInt16: Int16
        var thisIsAnInt32: Int32
        var thisIsAnInt64: Int64
        var thisIsAUint: UInt
        var thisIsAUint8: UInt8
        var thisIsAUint16: UInt16
        var thisIsAUint32: UInt32
        var thisIsAUint64: UInt64
        var thisIsAFloat: Float
        var thisIsADouble: Double
        var thisIsADate: Date
        var thisIsAnArray: [Int]
        var thisIsADictionary: [String: Bool]

        static var sample: CamelCaseEverything {
            CamelCaseEverything(thisIsAString: "Hello", thisIsABool: true, thisIsAnInt: 1, thisIsAnInt8: 2, thisIsAnInt16: 3, thisIsAnInt32: 4, thisIsAnInt64: 5, thisIsAUint: 6, thisIsAUint8: 7, thisIsAUint16: 8, thisIsAUint32: 9, thisIsAUint64: 10, thisIsAFloat: 11, thisIsADouble: 12, thisIsADate: Date(timeIntervalSince1970: 0), thisIsAnArray: [1, 2, 3], thisIsADictionary: ["trueValue": true, "falseValue": false])
        }
    }

    /// A UUID under a key, since a bare UUID is a string fragment.
    struct UUIDHolder: Codable, Equatable { var value: UUID }

    // MARK: - Fixed Foundation values

    static func nameComponents(prefix: String? = nil, given: String? = nil, middle: String? = nil, family: String? = nil, suffix: String? = nil, nickname: String? = nil) -> PersonNameComponents {
        var components = PersonNameComponents()
        components.namePrefix = prefix
        components.givenName = given
        components.middleName = middle
        components.familyName = family
        components.nameSuffix = suffix
        components.nickname = nickname
        return components
    }

    static func calendar(_ identifier: Calendar.Identifier) -> Calendar {
        var calendar = Calendar(identifier: identifier)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }

    static var dateComponents: DateComponents {
        let components: Set<Calendar.Component> = [.era, .year, .month, .day, .hour, .minute, .second, .weekday, .weekdayOrdinal, .weekOfMonth, .weekOfYear, .yearForWeekOfYear, .timeZone, .calendar, .nanosecond, .quarter]
        return calendar(.gregorian).dateComponents(components, from: Date(timeIntervalSince1970: 1501283776))
    }

    static var everyURLPart: URLComponents {
        var components = URLComponents()
        components.scheme = "ftp"
        components.user = "johnny"
        components.password = "apples"
        components.host = "0.0.0.0"
        components.port = 4242
        components.path = "/some/file"
        components.query = "utf8=✅"
        components.fragment = "anchor"
        return components
    }

    static var onlyPort: URLComponents {
        var components = URLComponents()
        components.port = 8080
        return components
    }

    static var onlyPath: URLComponents {
        var components = URLComponents()
        components.path = ".."
        return components
    }

    // MARK: - Shapes

    /// Top-level fragments and empty models.
    static var fragments: [CodableShape] {
        [
            .roundTrip("corelibs JSON: top-level Int fragment (test_encodingTopLevelFragments)", 2),
            .roundTrip("corelibs JSON: top-level false fragment (test_encodingTopLevelFragments)", false),
            .roundTrip("corelibs JSON: top-level true fragment (test_encodingTopLevelFragments)", true),
            .roundTrip("corelibs JSON: top-level Float fragment (test_encodingTopLevelFragments)", Float(1)),
            .roundTrip("corelibs JSON: top-level Double fragment (test_encodingTopLevelFragments)", Double(2)),
            .roundTrip("corelibs JSON: top-level Decimal of the least normal Float (test_encodingTopLevelFragments)", Decimal(Double(Float.leastNormalMagnitude))),
            .roundTrip("corelibs JSON: top-level String fragment (test_encodingTopLevelFragments)", "test"),
            .roundTrip("corelibs JSON: top-level nil fragment (test_encodingTopLevelFragments)", Int?.none),
            .roundTrip("corelibs JSON: top-level Float fragment read as Int (test_encodingTopLevelFragments)", Float(1), as: Int.self),
            .roundTrip("corelibs JSON: top-level Double fragment read as Float (test_encodingTopLevelFragments)", Double(2), as: Float.self),
            .roundTrip("corelibs JSON: empty structs in an array (test_encodingTopLevelEmptyStruct)", [Blank(), Blank()]),
            .roundTrip("corelibs JSON: empty struct under a key (test_encodingTopLevelEmptyClass)", ["empty": Blank()]),
        ]
    }

    /// Each primitive and Foundation scalar under a key and in an array.
    static var wrapped: [CodableShape] {
        [
            .roundTrip("corelibs JSON: single-value enum in an array (test_encodingTopLevelSingleValueEnum)", ArrayBox(Toggle.on)),
            .roundTrip("corelibs JSON: single-value struct in an array (test_encodingTopLevelSingleValueStruct)", ArrayBox(Stamp(3141592653))),
            .roundTrip("corelibs JSON: Bool true under a key (test_codingOfBool)", ObjectBox(true)),
            .roundTrip("corelibs JSON: Bool false in an array (test_codingOfBool)", ArrayBox(false)),
            .roundTrip("corelibs JSON: nil under a key (test_codingOfNil)", ObjectBox(Int?.none)),
            .roundTrip("corelibs JSON: nil in an array (test_codingOfNil)", ArrayBox(Int?.none)),
            .roundTrip("corelibs JSON: Int8 under a key (test_codingOfInt8)", ObjectBox(Int8(-42))),
            .roundTrip("corelibs JSON: Int8 in an array (test_codingOfInt8)", ArrayBox(Int8(-42))),
            .roundTrip("corelibs JSON: UInt8 under a key (test_codingOfUInt8)", ObjectBox(UInt8(42))),
            .roundTrip("corelibs JSON: UInt8 in an array (test_codingOfUInt8)", ArrayBox(UInt8(42))),
            .roundTrip("corelibs JSON: Int16 under a key (test_codingOfInt16)", ObjectBox(Int16(-30042))),
            .roundTrip("corelibs JSON: Int16 in an array (test_codingOfInt16)", ArrayBox(Int16(-30042))),
            .roundTrip("corelibs JSON: UInt16 under a key (test_codingOfUInt16)", ObjectBox(UInt16(30042))),
            .roundTrip("corelibs JSON: UInt16 in an array (test_codingOfUInt16)", ArrayBox(UInt16(30042))),
            .roundTrip("corelibs JSON: Int32 under a key (test_codingOfInt32)", ObjectBox(Int32(-2000000042))),
            .roundTrip("corelibs JSON: Int32 in an array (test_codingOfInt32)", ArrayBox(Int32(-2000000042))),
            .roundTrip("corelibs JSON: UInt32 under a key (test_codingOfUInt32)", ObjectBox(UInt32(2000000042))),
            .roundTrip("corelibs JSON: UInt32 in an array (test_codingOfUInt32)", ArrayBox(UInt32(2000000042))),
            .roundTrip("corelibs JSON: Int64 under a key (test_codingOfInt64)", ObjectBox(Int64(-9000000000000000042))),
            .roundTrip("corelibs JSON: Int64 in an array (test_codingOfInt64)", ArrayBox(Int64(-9000000000000000042))),
            .roundTrip("corelibs JSON: UInt64 under a key (test_codingOfUInt64)", ObjectBox(UInt64(9000000000000000042))),
            .roundTrip("corelibs JSON: UInt64 in an array (test_codingOfUInt64)", ArrayBox(UInt64(9000000000000000042))),
            .roundTrip("corelibs JSON: Int under a key (test_codingOfInt)", ObjectBox(Int(-9000000000000000042))),
            .roundTrip("corelibs JSON: Int in an array (test_codingOfInt)", ArrayBox(Int(-9000000000000000042))),
            .roundTrip("corelibs JSON: UInt under a key (test_codingOfUInt)", ObjectBox(UInt(9000000000000000042))),
            .roundTrip("corelibs JSON: UInt in an array (test_codingOfUInt)", ArrayBox(UInt(9000000000000000042))),
            .roundTrip("corelibs JSON: Float under a key (test_codingOfFloat)", ObjectBox(Float(1.5))),
            .roundTrip("corelibs JSON: Float in an array (test_codingOfFloat)", ArrayBox(Float(1.5))),
            .roundTrip("corelibs JSON: Double under a key (test_codingOfDouble)", ObjectBox(Double(1.5))),
            .roundTrip("corelibs JSON: Double in an array (test_codingOfDouble)", ArrayBox(Double(1.5))),
            .roundTrip("corelibs JSON: Decimal pi under a key (test_codingOfDecimal)", ObjectBox(Decimal.pi)),
            .roundTrip("corelibs JSON: Decimal pi in an array (test_codingOfDecimal)", ArrayBox(Decimal.pi)),
            .roundTrip("corelibs JSON: String under a key (test_codingOfString)", ObjectBox("Hello, world!")),
            .roundTrip("corelibs JSON: String in an array (test_codingOfString)", ArrayBox("Hello, world!")),
            .roundTrip("corelibs JSON: URL under a key (test_codingOfURL)", ObjectBox(URL(string: "https://swift.org")!)),
            .roundTrip("corelibs JSON: URL in an array (test_codingOfURL)", ArrayBox(URL(string: "https://swift.org")!)),
            .roundTrip("corelibs JSON: Date in an array (test_encodingDate)", ArrayBox(Date(timeIntervalSinceReferenceDate: 712_345_678.901_234))),
            .roundTrip("corelibs JSON: Date of 1000 seconds in an array (test_encodingDateSecondsSince1970)", ArrayBox(Date(timeIntervalSince1970: 1000))),
            .roundTrip("corelibs JSON: Data as base64 in an array (test_encodingBase64Data)", ArrayBox(Data([0xDE, 0xAD, 0xBE, 0xEF]))),
            .roundTrip("corelibs JSON: empty Data in an array (test_encodingCustomDataEmpty)", ArrayBox(Data())),
            .roundTrip("corelibs JSON: Float infinity in an array (test_encodingNonConformingFloats)", ArrayBox(Float.infinity)),
            .roundTrip("corelibs JSON: Float negative infinity under a key (test_encodingNonConformingFloats)", ObjectBox(-Float.infinity)),
            .roundTrip("corelibs JSON: Double NaN under a key (test_encodingNonConformingFloats)", ObjectBox(Double.nan), as: ObjectBox<Int>.self),
            .roundTrip("corelibs JSON: Double negative infinity in an array (test_encodingNonConformingFloats)", ArrayBox(-Double.infinity)),
        ]
    }

    /// The models of the output-formatting tests: empty, nested and keyed collections.
    static var formatting: [CodableShape] {
        [
            .roundTrip("corelibs JSON: class with an absent optional (test_encodingOutputFormattingDefault)", Member(name: "Johnny Appleseed", email: "appleseed@apple.com")),
            .roundTrip("corelibs JSON: class read as a dictionary (test_encodingOutputFormattingDefault)", Member(name: "Johnny Appleseed", email: "appleseed@apple.com"), as: [String: String].self),
            .roundTrip("corelibs JSON: empty, single and nested collections (test_encodingOutputFormattingPrettyPrinted)", [Collections(), Collections()]),
            .roundTrip("corelibs JSON: empty array at the top (test_encodingOutputFormattingPrettyPrinted)", [Int]()),
            .roundTrip("corelibs JSON: empty dictionary at the top (test_encodingOutputFormattingPrettyPrinted)", [String: Int]()),
            .roundTrip("corelibs JSON: numeric String keys (test_encodingOutputFormattingSortedKeys)", ["2": "2", "25": "25", "7": "7"]),
            .roundTrip("corelibs JSON: numeric String keys read as Int keys (test_encodingOutputFormattingPrettyPrintedSortedKeys)", ["2": "2", "25": "25", "7": "7"], as: [Int: String].self),
            .roundTrip("corelibs JSON: camel-case model of every kind (test_snake_case_encoding)", CamelCaseEverything.sample),
            .roundTrip("corelibs JSON: nested dictionary with snake-case keys (test_dictionary_snake_case_decoding)", ["snake_case_key": ["nested_dictionary": 1]]),
            .roundTrip("corelibs JSON: nested dictionary with camel-case keys (test_dictionary_snake_case_encoding)", ["camelCaseKey": ["nested_dictionary": 1]]),
        ]
    }

    /// Numeric limits, Bools that must not read as numbers, and numbers written as Doubles.
    static var numbers: [CodableShape] {
        [
            .roundTrip("corelibs JSON: 64-bit integer limits (test_codingOfUIntMinMax)", IntegerLimits()),
            .roundTrip("corelibs JSON: one value of each numeric type (test_encodeDecodeNumericTypesBaseline)", NumericTypes.sample),
            .roundTrip("corelibs JSON: numbers written as Doubles read as their types (test_encodeDecodeNumericTypesBaseline)", NumericTypesAsDoubles(), as: NumericTypes.self),
            .roundTrip("corelibs JSON: a Double too large for Float (test_codingOfFloat)", 1e100, as: Float.self),
            .roundTrip("corelibs JSON: [1] read as [Bool] (test_codingOfBool)", [1], as: [Bool].self),
            .roundTrip("corelibs JSON: Bool false is not an Int (test_codingOfBool)", ["intValue": false], as: StrictBools.self),
            .roundTrip("corelibs JSON: Bool true is not an Int8 (test_codingOfBool)", ["int8Value": true], as: StrictBools.self),
            .roundTrip("corelibs JSON: Bool false is not a UInt16 (test_codingOfBool)", ["uint16Value": false], as: StrictBools.self),
            .roundTrip("corelibs JSON: Bool true is not a UInt64 (test_codingOfBool)", ["uint64Value": true], as: StrictBools.self),
            .roundTrip("corelibs JSON: Bool false is not a Float (test_codingOfBool)", ["floatValue": false], as: StrictBools.self),
            .roundTrip("corelibs JSON: Bool true is not a Double (test_codingOfBool)", ["doubleValue": true], as: StrictBools.self),
            .roundTrip("corelibs JSON: Bool false is not a Decimal (test_codingOfBool)", ["decimalValue": false], as: StrictBools.self),
            .roundTrip("corelibs JSON: Bool false read as Bool (test_codingOfBool)", ["boolValue": false], as: StrictBools.self),
            .roundTrip("corelibs JSON: Bool true read as Bool (test_codingOfBool)", ["boolValue": true], as: StrictBools.self),
            .roundTrip("corelibs JSON: Int8 at its minimum (test_numericLimits)", ["int8Value": -128], as: NumericLimits.self),
            .roundTrip("corelibs JSON: Int8 just past its minimum (test_numericLimits)", ["int8Value": -129], as: NumericLimits.self),
            .roundTrip("corelibs JSON: Int8 just past its maximum (test_numericLimits)", ["int8Value": 128], as: NumericLimits.self),
            .roundTrip("corelibs JSON: a fraction read as Int8 (test_numericLimits)", ["int8Value": 1.2], as: NumericLimits.self),
            .roundTrip("corelibs JSON: negative zero read as UInt8 (test_numericLimits)", ["uint8Value": -0.0], as: NumericLimits.self),
            .roundTrip("corelibs JSON: -1 read as UInt8 (test_numericLimits)", ["uint8Value": -1], as: NumericLimits.self),
            .roundTrip("corelibs JSON: 256 read as UInt8 (test_numericLimits)", ["uint8Value": 256], as: NumericLimits.self),
            .roundTrip("corelibs JSON: 34.0 read as UInt16 (test_numericLimits)", ["uint16Value": 34.0], as: NumericLimits.self),
            .roundTrip("corelibs JSON: 65536 read as UInt16 (test_numericLimits)", ["uint16Value": 65536], as: NumericLimits.self),
            .roundTrip("corelibs JSON: 2147483648 read as Int32 (test_numericLimits)", ["int32Value": 2147483648], as: NumericLimits.self),
            .roundTrip("corelibs JSON: 4294967296 read as UInt32 (test_numericLimits)", ["uint32Value": 4294967296], as: NumericLimits.self),
            .roundTrip("corelibs JSON: UInt64 2^63 read as Int64 (test_numericLimits)", ["int64Value": UInt64(9223372036854775808)], as: NumericLimits.self),
            .roundTrip("corelibs JSON: -1e20 read as Int64 (test_numericLimits)", ["int64Value": -1e20], as: NumericLimits.self),
            .roundTrip("corelibs JSON: -1 read as UInt64 (test_numericLimits)", ["uint64Value": -1], as: NumericLimits.self),
            .roundTrip("corelibs JSON: 1.84467440737096e19 read as UInt64 (test_numericLimits)", ["uint64Value": 18446744073709600000.0], as: NumericLimits.self),
            .roundTrip("corelibs JSON: 1e37 read as Int64 (test_numericLimits)", ["int64Value": 1e37], as: NumericLimits.self),
            .roundTrip("corelibs JSON: UInt64.max read as UInt (test_numericLimits)", ["uintValue": UInt64.max], as: NumericLimits.self),
            .roundTrip("corelibs JSON: the least subnormal Double (test_numericLimits)", ["doubleValue": Double.leastNonzeroMagnitude], as: NumericLimits.self),
            .roundTrip("corelibs JSON: the least normal and greatest Doubles (test_numericLimits)", [2.2250738585072014e-308, 1.7976931348623157e+308, 3.141592653589793]),
            .roundTrip("corelibs JSON: Decimal 1.2 (test_numericLimits)", ["decimalValue": Decimal(string: "1.2")!], as: NumericLimits.self),
            .roundTrip("corelibs JSON: the greatest Decimal, spelled out (test_numericLimits)", ["decimalValue": Decimal(string: "3402823669209384634633746074317682114550000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000")!], as: NumericLimits.self),
            .roundTrip("corelibs JSON: the least Decimal, spelled out (test_numericLimits)", [Decimal(string: "-3402823669209384634633746074317682114550000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000")!]),
            .roundTrip("corelibs JSON: a Double read as Decimal (test_numericLimits)", ["decimalValue": 3.141592653589793], as: NumericLimits.self),
        ]
    }

    /// Decoders asked for super decoders and run-time metatypes.
    static var decoders: [CodableShape] {
        [
            .roundTrip("corelibs JSON: super decoder for a missing key (test_notFoundSuperDecoder)", [String: Int](), as: MissingSuperKey.self),
            .roundTrip("corelibs JSON: subclass through a run-time metatype (test_childTypeDecoder)", [String: Int](), as: ChildTypeProbe.self),
        ]
    }

    /// Foundation value types as TestCodable round-trips them.
    static var foundationValues: [CodableShape] {
        [
            .roundTrip("corelibs JSON: name components, given and family (test_PersonNameComponents_JSON)", nameComponents(given: "John", family: "Appleseed")),
            .roundTrip("corelibs JSON: name components with a nickname (test_PersonNameComponents_JSON)", nameComponents(given: "John", family: "Appleseed", nickname: "Johnny")),
            .roundTrip("corelibs JSON: name components, every part (test_PersonNameComponents_JSON)", nameComponents(prefix: "Dr.", given: "Jane", middle: "A.", family: "Appleseed", suffix: "Esq.", nickname: "Janie")),
            .roundTrip("corelibs JSON: UUID from an upper-case string (test_UUID_JSON)", UUIDHolder(value: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
            .roundTrip("corelibs JSON: UUID from a lower-case string (test_UUID_JSON)", UUIDHolder(value: UUID(uuidString: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")!)),
            .roundTrip("corelibs JSON: UUID from bytes (test_UUID_JSON)", UUIDHolder(value: UUID(uuid: (0xE6, 0x21, 0xE1, 0xF8, 0xC3, 0x6C, 0x49, 0x5A, 0x93, 0xFC, 0x0C, 0x24, 0x7A, 0x3E, 0x6E, 0x5F)))),
            .roundTrip("corelibs JSON: UUID read as its string (test_UUID_JSON)", UUIDHolder(value: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), as: [String: String].self),
            .roundTrip("corelibs JSON: a lower-case UUID string read as UUID (test_UUID_JSON)", ["value": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"], as: UUIDHolder.self),
            .roundTrip("corelibs JSON: a string that is not a UUID (test_UUID_JSON)", ["value": "not-a-uuid"], as: UUIDHolder.self),
            .roundTrip("corelibs JSON: empty NSRange (test_NSRange_JSON)", NSRange()),
            .roundTrip("corelibs JSON: NSRange to Int.max (test_NSRange_JSON)", NSRange(location: 0, length: Int.max)),
            .roundTrip("corelibs JSON: NSRange at NSNotFound (test_NSRange_JSON)", NSRange(location: NSNotFound, length: 0)),
            .roundTrip("corelibs JSON: NSRange read as [Int] (test_NSRange_JSON)", NSRange(location: 5, length: 20), as: [Int].self),
            .roundTrip("corelibs JSON: root Locale (test_Locale_JSON)", Locale(identifier: "")),
            .roundTrip("corelibs JSON: en_US Locale (test_Locale_JSON)", Locale(identifier: "en_US")),
            .roundTrip("corelibs JSON: en_US_POSIX Locale (test_Locale_JSON)", Locale(identifier: "en_US_POSIX")),
            .roundTrip("corelibs JSON: fr_BE Locale (test_Locale_JSON)", Locale(identifier: "fr_BE")),
            .roundTrip("corelibs JSON: zh-Hant-HK Locale (test_Locale_JSON)", Locale(identifier: "zh-Hant-HK")),
            .roundTrip("corelibs JSON: empty IndexSet (test_IndexSet_JSON)", IndexSet()),
            .roundTrip("corelibs JSON: IndexSet of one (test_IndexSet_JSON)", IndexSet(integer: 42)),
            .roundTrip("corelibs JSON: IndexSet to Int.max (test_IndexSet_JSON)", IndexSet(integersIn: 0 ..< Int.max)),
            .roundTrip("corelibs JSON: empty IndexPath (test_IndexPath_JSON)", IndexPath()),
            .roundTrip("corelibs JSON: IndexPath of one (test_IndexPath_JSON)", IndexPath(index: 0)),
            .roundTrip("corelibs JSON: IndexPath of two (test_IndexPath_JSON)", IndexPath(indexes: [1, 2])),
            .roundTrip("corelibs JSON: IndexPath of six (test_IndexPath_JSON)", IndexPath(indexes: [3, 4, 5, 6, 7, 8])),
            .roundTrip("corelibs JSON: Decimal zero (test_Decimal_JSON)", [Decimal(0)]),
            .roundTrip("corelibs JSON: greatest Decimal (test_Decimal_JSON)", [Decimal.greatestFiniteMagnitude]),
            .roundTrip("corelibs JSON: least normal Decimal (test_Decimal_JSON)", [Decimal.leastNormalMagnitude]),
            .roundTrip("corelibs JSON: least nonzero Decimal (test_Decimal_JSON)", [Decimal.leastNonzeroMagnitude]),
            .roundTrip("corelibs JSON: Decimal pi in an array (test_Decimal_JSON)", [Decimal.pi]),
            .roundTrip("corelibs JSON: Decimal() (test_Decimal_JSON)", [Decimal()]),
            .roundTrip("corelibs JSON: control characters set (test_CharacterSet_JSON)", CharacterSet.controlCharacters),
            .roundTrip("corelibs JSON: whitespace set (test_CharacterSet_JSON)", CharacterSet.whitespaces),
            .roundTrip("corelibs JSON: decimal digits set (test_CharacterSet_JSON)", CharacterSet.decimalDigits),
            .roundTrip("corelibs JSON: a set of four letters (test_CharacterSet_JSON)", CharacterSet(charactersIn: "abcd")),
            .roundTrip("corelibs JSON: Los Angeles time zone (test_TimeZone_JSON)", TimeZone(identifier: "America/Los_Angeles")!),
            .roundTrip("corelibs JSON: UTC time zone (test_TimeZone_JSON)", TimeZone(identifier: "UTC")!),
            .roundTrip("corelibs JSON: acceleration Measurement (test_Measurement_JSON)", Foundation.Measurement(value: 42, unit: UnitAcceleration.metersPerSecondSquared)),
            .roundTrip("corelibs JSON: mass Measurement (test_Measurement_JSON)", Foundation.Measurement(value: 42, unit: UnitMass.kilograms)),
            .roundTrip("corelibs JSON: length Measurement (test_Measurement_JSON)", Foundation.Measurement(value: 42, unit: UnitLength.miles)),
        ]
    }

    /// AffineTransform, where Foundation has it (not on Apple platforms other than macOS).
    static var affineTransforms: [CodableShape] {
        #if os(macOS) || !canImport(Darwin)
        return [
            .roundTrip("corelibs JSON: identity AffineTransform (test_AffineTransform_JSON)", AffineTransform.identity),
            .roundTrip("corelibs JSON: translating AffineTransform (test_AffineTransform_JSON)", AffineTransform(translationByX: 2.0, byY: 2.0)),
            .roundTrip("corelibs JSON: scaling AffineTransform (test_AffineTransform_JSON)", AffineTransform(scale: 2.0)),
            .roundTrip("corelibs JSON: AffineTransform of six values (test_AffineTransform_JSON)", AffineTransform(m11: 1.0, m12: 2.5, m21: 66.2, m22: 40.2, tX: -5.5, tY: 3.7)),
            .roundTrip("corelibs JSON: AffineTransform of small values (test_AffineTransform_JSON)", AffineTransform(m11: 0.498, m12: -0.284, m21: -0.742, m22: 0.3248, tX: 12, tY: 44)),
            .roundTrip("corelibs JSON: rotating AffineTransform (test_AffineTransform_JSON)", AffineTransform(rotationByDegrees: .pi / 2)),
        ]
        #else
        return []
        #endif
    }

    /// CoreGraphics geometry, including values JSON cannot write.
    static var geometry: [CodableShape] {
        [
            .roundTrip("corelibs JSON: zero CGPoint (test_CGPoint_JSON)", CGPoint.zero),
            .roundTrip("corelibs JSON: negative CGPoint (test_CGPoint_JSON)", CGPoint(x: -10, y: -20)),
            .roundTrip("corelibs JSON: greatest CGPoint (test_CGPoint_JSON)", CGPoint(x: CGFloat.greatestFiniteMagnitude, y: CGFloat.greatestFiniteMagnitude)),
            .roundTrip("corelibs JSON: CGPoint read as [Double] (test_CGPoint_JSON)", CGPoint(x: 10, y: 20), as: [Double].self),
            .roundTrip("corelibs JSON: zero CGSize (test_CGSize_JSON)", CGSize.zero),
            .roundTrip("corelibs JSON: negative CGSize (test_CGSize_JSON)", CGSize(width: -30, height: -40)),
            .roundTrip("corelibs JSON: zero CGRect (test_CGRect_JSON)", CGRect.zero),
            .roundTrip("corelibs JSON: CGRect of a point and a size (test_CGRect_JSON)", CGRect(origin: CGPoint(x: 10, y: 20), size: CGSize(width: 30, height: 40))),
            .roundTrip("corelibs JSON: negative CGRect (test_CGRect_JSON)", CGRect(origin: CGPoint(x: -10, y: -20), size: CGSize(width: -30, height: -40))),
            .roundTrip("corelibs JSON: null CGRect (test_CGRect_JSON)", CGRect.null),
            .roundTrip("corelibs JSON: infinite CGRect (test_CGRect_JSON)", CGRect.infinite),
        ]
    }

    /// Calendars and date components, pinned to UTC.
    static var calendars: [CodableShape] {
        [
            .roundTrip("corelibs JSON: Gregorian calendar in UTC (test_Calendar_JSON)", calendar(.gregorian)),
            .roundTrip("corelibs JSON: Buddhist calendar in UTC (test_Calendar_JSON)", calendar(.buddhist)),
            .roundTrip("corelibs JSON: Hebrew calendar in UTC (test_Calendar_JSON)", calendar(.hebrew)),
            .roundTrip("corelibs JSON: ISO 8601 calendar in UTC (test_Calendar_JSON)", calendar(.iso8601)),
            .roundTrip("corelibs JSON: Japanese calendar in UTC (test_Calendar_JSON)", calendar(.japanese)),
            .roundTrip("corelibs JSON: every date component (test_DateComponents_JSON)", dateComponents),
        ]
    }

    /// URLs and URL components.
    static var urls: [CodableShape] {
        [
            .roundTrip("corelibs JSON: root file URL in an array (test_URL_JSON)", [URL(fileURLWithPath: "/")]),
            .roundTrip("corelibs JSON: web URL in an array (test_URL_JSON)", [URL(string: "http://apple.com")!]),
            .roundTrip("corelibs JSON: relative URL made absolute (test_URL_JSON)", [URL(string: "swift", relativeTo: URL(string: "http://apple.com")!)!.absoluteURL]),
            .roundTrip("corelibs JSON: relative file URL made absolute (test_URL_JSON)", [URL(fileURLWithPath: "bin/sh", relativeTo: URL(fileURLWithPath: "/")).absoluteURL]),
            .roundTrip("corelibs JSON: file URL read as [String] (test_URL_JSON)", [URL(fileURLWithPath: "/tmp/a b")], as: [String].self),
            .roundTrip("corelibs JSON: empty URLComponents (test_URLComponents_JSON)", URLComponents()),
            .roundTrip("corelibs JSON: URLComponents of a host (test_URLComponents_JSON)", URLComponents(string: "http://swift.org")!),
            .roundTrip("corelibs JSON: URLComponents with a port (test_URLComponents_JSON)", URLComponents(string: "http://swift.org:80")!),
            .roundTrip("corelibs JSON: URLComponents with a path and fragment (test_URLComponents_JSON)", URLComponents(string: "https://www.mywebsite.org/api/v42/something.php#param1=hi&param2=hello")!),
            .roundTrip("corelibs JSON: URLComponents with credentials (test_URLComponents_JSON)", URLComponents(string: "ftp://johnny:apples@myftpserver.org:4242/some/path")!),
            .roundTrip("corelibs JSON: URLComponents of a relative URL resolved (test_URLComponents_JSON)", URLComponents(url: URL(string: "documentation", relativeTo: URL(string: "http://swift.org")!)!, resolvingAgainstBaseURL: true)!),
            .roundTrip("corelibs JSON: URLComponents of only a port (test_URLComponents_JSON)", onlyPort),
            .roundTrip("corelibs JSON: URLComponents of only a path (test_URLComponents_JSON)", onlyPath),
            .roundTrip("corelibs JSON: URLComponents of every part (test_URLComponents_JSON)", everyURLPart),
        ]
    }
}
