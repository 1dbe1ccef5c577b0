import Foundation

/// An unkeyed container of the binary decoder; small enough (three words, payloads being
/// under 4 GiB) to live inside the `any UnkeyedDecodingContainer` it is returned as, with no
/// box allocated.
///
/// The decoder is held strongly, so a model may keep the container past its `init(from:)`.
/// It answers as `JSONDecoder`'s does: `count` is always known, a read past the end is
/// `valueNotFound` at the next index, and `decodeIfPresent` past the end is `nil` (and moves
/// `currentIndex` on, as `JSONDecoder`'s does).
struct BinaryUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: BinaryPayloadDecoder
    private var storedOffset: UInt32
    private let total: UInt32
    private var index: UInt32 = 0
    private let path: CodingPathStack.Mark

    /// A container for the array at `offset`, with the coding path `path`.
    ///
    /// - Throws: ``BinaryValueFailure`` when the value is not an array.
    init(decoder: BinaryPayloadDecoder, at offset: Int, path: CodingPathStack.Mark) throws {
        let body = try decoder.unkeyedBody(at: offset)
        self.decoder = decoder
        storedOffset = UInt32(truncatingIfNeeded: body.start)
        total = UInt32(truncatingIfNeeded: body.count)
        self.path = path
    }

    private var offset: Int { Int(storedOffset) }
    var currentIndex: Int { Int(index) }
    var codingPath: [any CodingKey] { decoder.path(of: path) }

    /// The element count, as `JSONDecoder` gives it: always known (types check it, such as a
    /// pair decoded from a two-element array). The format stores it, checked against the bytes:
    /// each element takes at least one.
    var count: Int? { Int(total) }

    var isAtEnd: Bool { index >= total }

    /// The elements left, when the bytes left hold at least 4 for each: how many a decode may
    /// reserve storage for at once, keeping the reservation a small multiple of the payload's
    /// size; `nil` for more.
    var reservableCount: Int? {
        let left = Int(total &- index)
        return left <= (decoder.valuesEnd - offset) / 4 ? left : nil
    }

    /// The error for a read of a `type` past the last element.
    private func atEnd(_ type: Any.Type, _ what: String = "Unkeyed container is at end.") -> DecodingError {
        .valueNotFound(type, DecodingError.Context(codingPath: decoder.path(of: path, appending: .index(currentIndex)), debugDescription: what))
    }

    /// Reads the next element with `read`, which returns the value and where it ends.
    @inline(__always)
    private mutating func element<Value>(_ type: Any.Type, _ read: (BinaryPayloadDecoder, Int) throws -> (Value, Int)) throws -> Value {
        guard index < total else { throw atEnd(type) }
        do {
            let (value, next) = try read(decoder, offset)
            storedOffset = UInt32(truncatingIfNeeded: next)
            index += 1
            return value
        } catch let failure as BinaryValueFailure {
            throw failure.error(at: decoder.path(of: path, appending: .index(currentIndex)))
        }
    }

    /// Like ``element(_:_:)``, with `nil` for a stored `nil` and past the end.
    @inline(__always)
    private mutating func optionalElement<Value>(_ read: (BinaryPayloadDecoder, Int) throws -> (Value, Int)) throws -> Value? {
        guard index < total else {
            index &+= 1
            return nil
        }
        if try decoder.isNil(at: offset) {
            storedOffset &+= 1
            index += 1
            return nil
        }
        return try element(Any.self, read)
    }

    mutating func decodeNil() throws -> Bool {
        guard index < total else { throw atEnd(Never.self) }
        guard try decoder.isNil(at: offset) else { return false }
        storedOffset &+= 1
        index += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try element(type) { (try $0.bool(at: $1), $1 + 1) } }
    mutating func decode(_ type: String.Type) throws -> String { try element(type) { try $0.string(at: $1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try element(type) { try $0.floatingPoint(at: $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try element(type) { try $0.float(at: $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try element(type) { try $0.integer(Int.self, at: $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try element(type) { try $0.integer(Int8.self, at: $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try element(type) { try $0.integer(Int16.self, at: $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try element(type) { try $0.integer(Int32.self, at: $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try element(type) { try $0.integer(Int64.self, at: $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try element(type) { try $0.integer(UInt.self, at: $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try element(type) { try $0.integer(UInt8.self, at: $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try element(type) { try $0.integer(UInt16.self, at: $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try element(type) { try $0.integer(UInt32.self, at: $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try element(type) { try $0.integer(UInt64.self, at: $1) } }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try element(type) { try $0.integer(Int128.self, at: $1) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try element(type) { try $0.integer(UInt128.self, at: $1) } }
    #endif

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (index, path) = (currentIndex, path)
        return try element(type) { decoder, offset in
            (try decoder.decodeValue(type, at: offset, entering: .index(index), from: path), try decoder.end(ofValueAt: offset))
        }
    }

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? { try optionalElement { (try $0.bool(at: $1), $1 + 1) } }
    mutating func decodeIfPresent(_ type: String.Type) throws -> String? { try optionalElement { try $0.string(at: $1) } }
    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? { try optionalElement { try $0.floatingPoint(at: $1) } }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try optionalElement { try $0.float(at: $1) } }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? { try optionalElement { try $0.integer(Int.self, at: $1) } }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try optionalElement { try $0.integer(Int8.self, at: $1) } }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try optionalElement { try $0.integer(Int16.self, at: $1) } }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try optionalElement { try $0.integer(Int32.self, at: $1) } }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try optionalElement { try $0.integer(Int64.self, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try optionalElement { try $0.integer(UInt.self, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try optionalElement { try $0.integer(UInt8.self, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try optionalElement { try $0.integer(UInt16.self, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try optionalElement { try $0.integer(UInt32.self, at: $1) } }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try optionalElement { try $0.integer(UInt64.self, at: $1) } }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decodeIfPresent(_ type: Int128.Type) throws -> Int128? { try optionalElement { try $0.integer(Int128.self, at: $1) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decodeIfPresent(_ type: UInt128.Type) throws -> UInt128? { try optionalElement { try $0.integer(UInt128.self, at: $1) } }
    #endif

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        let (index, path) = (currentIndex, path)
        return try optionalElement { decoder, offset in
            (try decoder.decodeValue(type, at: offset, entering: .index(index), from: path), try decoder.end(ofValueAt: offset))
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (index, path) = (currentIndex, path)
        return try element(KeyedDecodingContainer<NestedKey>.self) { decoder, offset in
            var end = 0
            let nested = try decoder.keyedContainer(NestedKey.self, at: offset, path: decoder.mark(path, appending: .index(index)), end: &end)
            return (nested, end)
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (index, path) = (currentIndex, path)
        return try element((any UnkeyedDecodingContainer).self) { decoder, offset in
            let nested = try BinaryUnkeyedDecodingContainer(decoder: decoder, at: offset, path: decoder.mark(path, appending: .index(index)))
            return (nested, try decoder.end(ofValueAt: offset))
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        let (index, path) = (currentIndex, path)
        return try element((any Decoder).self) { decoder, offset in
            let nested = try BinaryNestedDecoder(decoder: decoder, offset: offset, path: decoder.mark(path, appending: .index(index)))
            return (nested, try decoder.end(ofValueAt: offset))
        }
    }
}
