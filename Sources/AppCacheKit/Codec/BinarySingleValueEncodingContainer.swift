import Foundation

/// A single value container of the binary encoder, over the value being encoded or over the
/// value a super encoder stands for.
///
/// As with `JSONEncoder`: a second single value for the same value is an error (JSON traps);
/// a single value after the value has a container is what JSON drops, so the encoding is left
/// to JSON; a number that is not finite is refused with JSON's error at this container's path.
struct BinarySingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: BinaryPayloadEncoder
    /// The super encoder whose value this is, if any.
    let owner: BinarySuperEncoder?

    var codingPath: [any CodingKey] { owner?.codingPath ?? encoder.codingPath }

    @inline(__always)
    private func single(_ write: (BinaryPayloadEncoder) throws -> Void) throws {
        owner?.claim()
        try encoder.encodeSingleValue(of: owner) { try write(encoder) }
    }

    mutating func encodeNil() throws { try single { $0.writeNil() } }
    mutating func encode(_ value: Bool) throws { try single { $0.writeBool(value) } }
    mutating func encode(_ value: String) throws { try single { $0.writeString(value) } }
    mutating func encode(_ value: Int) throws { try single { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int8) throws { try single { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int16) throws { try single { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int32) throws { try single { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int64) throws { try single { $0.writeInt(value) } }
    mutating func encode(_ value: UInt) throws { try single { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt8) throws { try single { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt16) throws { try single { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt32) throws { try single { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt64) throws { try single { $0.writeUInt(value) } }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { try single { $0.writeInt128(value) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { try single { $0.writeUInt128(value) } }
    #endif

    mutating func encode(_ value: Double) throws {
        guard value.isFinite else { throw BinaryPayloadEncoder.notFinite(value, at: codingPath) }
        try single { $0.writeDouble(value) }
    }

    mutating func encode(_ value: Float) throws {
        guard value.isFinite else { throw BinaryPayloadEncoder.notFinite(value, at: codingPath) }
        try single { $0.writeFloat(value) }
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if let owner {
            try single { _ in try owner.encodeValue(value) }
        } else {
            try single { try $0.encodeValue(value, entering: nil) }
        }
    }
}
