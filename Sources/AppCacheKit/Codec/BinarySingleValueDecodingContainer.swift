import Foundation

/// A single value container of the binary decoder.
///
/// Over the decoder itself, it reads the value being decoded *when it is used*, as
/// `JSONDecoder`'s single value container (the decoder itself) does; over a super decoder, the
/// value that decoder stands for.
struct BinarySingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoder: BinaryPayloadDecoder
    /// The super decoder this container reads through, if any.
    let nested: BinaryNestedDecoder?

    private var offset: Int { nested?.offset ?? decoder.position }
    var codingPath: [any CodingKey] { nested?.codingPath ?? decoder.codingPath }

    /// Reads the value with `read`, turning a value that does not fit into the error
    /// `JSONDecoder` throws at this container's path.
    @inline(__always)
    private func read<Value>(_ read: (Int) throws -> Value) throws -> Value {
        do {
            return try read(offset)
        } catch let failure as BinaryValueFailure {
            throw failure.error(at: codingPath)
        }
    }

    func decodeNil() -> Bool { (try? decoder.isNil(at: offset)) ?? false }
    func decode(_ type: Bool.Type) throws -> Bool { try read { try decoder.bool(at: $0) } }
    func decode(_ type: String.Type) throws -> String { try read { try decoder.string(at: $0).0 } }
    func decode(_ type: Double.Type) throws -> Double { try read { try decoder.floatingPoint(at: $0).0 } }
    func decode(_ type: Float.Type) throws -> Float { try read { try decoder.float(at: $0).0 } }
    func decode(_ type: Int.Type) throws -> Int { try read { try decoder.integer(Int.self, at: $0).0 } }
    func decode(_ type: Int8.Type) throws -> Int8 { try read { try decoder.integer(Int8.self, at: $0).0 } }
    func decode(_ type: Int16.Type) throws -> Int16 { try read { try decoder.integer(Int16.self, at: $0).0 } }
    func decode(_ type: Int32.Type) throws -> Int32 { try read { try decoder.integer(Int32.self, at: $0).0 } }
    func decode(_ type: Int64.Type) throws -> Int64 { try read { try decoder.integer(Int64.self, at: $0).0 } }
    func decode(_ type: UInt.Type) throws -> UInt { try read { try decoder.integer(UInt.self, at: $0).0 } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try read { try decoder.integer(UInt8.self, at: $0).0 } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try read { try decoder.integer(UInt16.self, at: $0).0 } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try read { try decoder.integer(UInt32.self, at: $0).0 } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try read { try decoder.integer(UInt64.self, at: $0).0 } }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try read { try decoder.integer(Int128.self, at: $0).0 } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try read { try decoder.integer(UInt128.self, at: $0).0 } }
    #endif

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard let nested else { return try read { try decoder.decodeValue(type, at: $0, entering: nil) } }
        // Through a super decoder: the value's own `init(from:)` gets a decoder of its own,
        // whose coding path is the super decoder's.
        return try read { _ in try nested.decodeValue(type) }
    }
}
