import Foundation

/// The decoder `superDecoder(forKey:)` hands out for a key the payload does not have: a
/// decoder over `nil`, as `JSONDecoder` gives (it decodes `null` there).
///
/// So a type that decodes an optional through a super decoder reads a missing key as `nil`,
/// and anything else it asks for is a `DecodingError.valueNotFound`, never a crash.
struct BinaryNilDecoder: Decoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw Self.notFound(KeyedDecodingContainer<Key>.self)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw Self.notFound((any UnkeyedDecodingContainer).self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        Value()
    }

    static func notFound(_ type: Any.Type) -> DecodingError {
        .valueNotFound(type, DecodingError.Context(codingPath: [], debugDescription: "Expected a \(type), found nil (no such key)."))
    }

    /// The single value: `nil`.
    struct Value: SingleValueDecodingContainer {
        var codingPath: [any CodingKey] { [] }

        func decodeNil() -> Bool { true }
        func decode(_ type: Bool.Type) throws -> Bool { throw notFound(type) }
        func decode(_ type: String.Type) throws -> String { throw notFound(type) }
        func decode(_ type: Double.Type) throws -> Double { throw notFound(type) }
        func decode(_ type: Float.Type) throws -> Float { throw notFound(type) }
        func decode(_ type: Int.Type) throws -> Int { throw notFound(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { throw notFound(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { throw notFound(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { throw notFound(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { throw notFound(type) }
        func decode(_ type: UInt.Type) throws -> UInt { throw notFound(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { throw notFound(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { throw notFound(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { throw notFound(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { throw notFound(type) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            // An optional (or a type made of optionals) may decode from nil; anything else
            // asks one of the methods above, or a container, and finds nothing.
            try T(from: BinaryNilDecoder())
        }

        private func notFound(_ type: Any.Type) -> DecodingError { BinaryNilDecoder.notFound(type) }
    }
}
