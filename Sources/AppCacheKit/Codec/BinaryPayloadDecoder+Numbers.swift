import Foundation

/// Numbers read as the type asked for, which may not be the type they were stored as (a model
/// changed a property from `Float` to `Double`, from `Double` to `Decimal`, from `Date` to
/// `Double`), giving what `JSONDecoder` gives when it parses the text `JSONEncoder` wrote for
/// the stored number: a stored `Float` read as `Double` is the value of the float's shortest
/// decimal form (0.1, not 0.10000000149011612), a stored `Double` read as `Decimal` is the
/// decimal its text spells (19.99, not 19.98999999999999488).
///
/// A number stored as the type asked for (nearly every read) costs a tag comparison. A
/// conversion that plain arithmetic gives exactly as the parse would (an integer read as a
/// wider integer or as a floating-point number, a whole `Double` under 2^53 read as an integer)
/// is done so; the others, rare and only while an archive is older than its model, parse the
/// stored number's JSON text with `JSONDecoder` itself, so that every rounding and every
/// refusal is JSON's.
extension BinaryPayloadDecoder {
    /// Any integer value as a `T`, with where it ends.
    ///
    /// - Throws: ``BinaryValueFailure`` for a value that is not a number;
    ///   ``BinaryNumberNotRepresentable`` for a number that is not a whole `T`.
    @inline(__always)
    func integer<T: FixedWidthInteger & Decodable>(_ type: T.Type, at offset: Int) throws -> (T, end: Int) {
        let tag = try tag(at: offset)
        if tag == BinaryFormat.int {
            let (raw, end) = try reader.varint(at: offset + 1)
            let value = BinaryFormat.unzigzag(raw)
            guard let exact = T(exactly: value) else { throw BinaryNumberNotRepresentable(number: String(value), type: T.self) }
            return (exact, end)
        }
        if tag == BinaryFormat.uint {
            let (value, end) = try reader.varint(at: offset + 1)
            guard let exact = T(exactly: value) else { throw BinaryNumberNotRepresentable(number: String(value), type: T.self) }
            return (exact, end)
        }
        return try convertedInteger(type, tag: tag, at: offset)
    }

    @inline(never)
    private func convertedInteger<T: FixedWidthInteger & Decodable>(_ type: T.Type, tag: UInt8, at offset: Int) throws -> (T, end: Int) {
        let (number, end) = try storedNumber(tag, at: offset, as: type)
        switch number {
        case .integer(let value):
            guard let exact = T(exactly: value) else { throw BinaryNumberNotRepresentable(number: String(value), type: T.self) }
            return (exact, end)
        case .unsigned(let value):
            guard let exact = T(exactly: value) else { throw BinaryNumberNotRepresentable(number: String(value), type: T.self) }
            return (exact, end)
        case .wide(let value, let text):
            guard let exact = T(exactly: value) else { throw BinaryNumberNotRepresentable(number: text, type: T.self) }
            return (exact, end)
        case .floatingPoint(let value, let text):
            // A whole number below 2^53 parses to itself; the rest (a fraction, or a number
            // whose text is shorter than its digits) as JSON parses the text.
            if value.magnitude < 9_007_199_254_740_992, value == value.rounded(.towardZero) {
                guard let exact = T(exactly: value) else { throw BinaryNumberNotRepresentable(number: text, type: T.self) }
                return (exact, end)
            }
            return (try Self.parsed(T.self, text), end)
        case .decimal(let text):
            return (try Self.parsed(T.self, text), end)
        }
    }

    /// Any number as a `Double`, with where it ends.
    @inline(__always)
    func floatingPoint(at offset: Int) throws -> (Double, end: Int) {
        let tag = try tag(at: offset)
        if tag == BinaryFormat.double {
            return (Double(bitPattern: try reader.fixed(UInt64.self, at: offset + 1)), offset + 9)
        }
        return try convertedDouble(tag: tag, at: offset)
    }

    @inline(never)
    private func convertedDouble(tag: UInt8, at offset: Int) throws -> (Double, end: Int) {
        let (number, end) = try storedNumber(tag, at: offset, as: Double.self)
        switch number {
        case .integer(let value): return (Double(value), end)
        case .unsigned(let value): return (Double(value), end)
        case .floatingPoint(let value, let text):
            // A `Float` or a `Double` (or a date) gives back the double its text spells.
            return (tag == BinaryFormat.float ? try Self.parsedFloatingPoint(Double.self, text) : value, end)
        case .wide(_, let text), .decimal(let text):
            return (try Self.parsedFloatingPoint(Double.self, text), end)
        }
    }

    /// Any number as a `Float`, with where it ends.
    func float(at offset: Int) throws -> (Float, end: Int) {
        let tag = try tag(at: offset)
        if tag == BinaryFormat.float {
            return (Float(bitPattern: try reader.fixed(UInt32.self, at: offset + 1)), offset + 5)
        }
        let (number, end) = try storedNumber(tag, at: offset, as: Float.self)
        switch number {
        case .integer(let value): return (Float(value), end)
        case .unsigned(let value): return (Float(value), end)
        case .floatingPoint(_, let text), .wide(_, let text), .decimal(let text):
            return (try Self.parsedFloatingPoint(Float.self, text), end)
        }
    }

    /// A `Decimal`, as `JSONDecoder` reads one: from a number's text.
    func decimal(at offset: Int) throws -> Decimal {
        let tag = try tag(at: offset)
        guard tag != BinaryFormat.nil else { throw BinaryValueFailure.valueNotFound(Decimal.self) }
        let (number, _) = try storedNumber(tag, at: offset, as: Decimal.self)
        switch number {
        case .integer(let value): return Decimal(value)
        case .unsigned(let value): return Decimal(value)
        case .decimal(let text) where tag == BinaryFormat.decimal:
            // Not-a-number is stored as its own spelling, which no parse reads (and JSON
            // writes `NaN`, which no JSON parse reads): the encoder leaves such a value to
            // JSON, so only an older archive holds one.
            if text == BinaryFormat.decimalNaN { return .nan }
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw BinaryNumberNotRepresentable(number: text, type: Decimal.self)
            }
            return value
        case .floatingPoint(_, let text), .wide(_, let text), .decimal(let text):
            return try Self.parsed(Decimal.self, text)
        }
    }

    /// A stored number, in the forms conversions start from.
    private enum StoredNumber {
        case integer(Int64)
        case unsigned(UInt64)
        /// A 128-bit integer, as the widest integer there is here.
        case wide(any BinaryInteger, text: String)
        /// A `Double`, a `Float` (widened) or a date's seconds, with its JSON text.
        case floatingPoint(Double, text: String)
        /// A `Decimal`'s text.
        case decimal(String)
    }

    /// The number stored at `offset`, with where it ends.
    ///
    /// - Throws: ``BinaryValueFailure`` naming `type` when the value is not a number.
    private func storedNumber(_ tag: UInt8, at offset: Int, as type: Any.Type) throws -> (StoredNumber, end: Int) {
        switch tag {
        case BinaryFormat.int:
            let (raw, end) = try reader.varint(at: offset + 1)
            return (.integer(BinaryFormat.unzigzag(raw)), end)
        case BinaryFormat.uint:
            let (raw, end) = try reader.varint(at: offset + 1)
            return (.unsigned(raw), end)
        case BinaryFormat.double, BinaryFormat.date:
            let value = Double(bitPattern: try reader.fixed(UInt64.self, at: offset + 1))
            return (.floatingPoint(value, text: Self.jsonText(value)), offset + 9)
        case BinaryFormat.float:
            let value = Float(bitPattern: try reader.fixed(UInt32.self, at: offset + 1))
            return (.floatingPoint(Double(value), text: Self.jsonText(value)), offset + 5)
        case BinaryFormat.decimal:
            let (length, start) = try reader.length(at: offset + 1, limit: valuesEnd - offset)
            let bytes = try reader.slice(at: start, length: length)
            guard let text = UTF8Text.string(validating: bytes) else { throw BinaryDecodingFailure.malformed("a decimal that is not UTF-8") }
            return (.decimal(text), start + length)
        // 128-bit integers, where the standard library has them (see `BinaryPayloadEncoder`);
        // elsewhere their tag is a type mismatch, as any unexpected tag is.
        #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
        case BinaryFormat.int128, BinaryFormat.uint128:
            guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
                throw BinaryValueFailure.typeMismatch(type, found: tag)
            }
            let bits = try reader.fixed(UInt128.self, at: offset + 1)
            if tag == BinaryFormat.int128 {
                let value = Int128(bitPattern: bits)
                return (.wide(value, text: String(value)), offset + 17)
            }
            return (.wide(bits, text: String(bits)), offset + 17)
        #endif
        case BinaryFormat.nil:
            throw BinaryValueFailure.valueNotFound(type)
        default:
            throw BinaryValueFailure.typeMismatch(type, found: tag)
        }
    }

    /// A floating-point number as `JSONEncoder` writes it: its description, without a `.0`.
    private static func jsonText<Value: BinaryFloatingPoint & CustomStringConvertible>(_ value: Value) -> String {
        let text = value.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// `text` parsed as a `Float` or a `Double`, as `JSONDecoder` parses it: a number that
    /// rounds to infinity, or to zero while its digits are not all zero, does not fit.
    private static func parsedFloatingPoint<Value: BinaryFloatingPoint & LosslessStringConvertible>(_ type: Value.Type, _ text: String) throws -> Value {
        guard let value = Value(text), value.isFinite,
            value != 0 || !text.prefix(while: { $0 != "e" && $0 != "E" }).contains(where: { ("1"..."9").contains($0) })
        else { throw BinaryNumberNotRepresentable(number: text, type: Value.self) }
        return value
    }

    /// `text` parsed as `JSONDecoder` parses a number as `Value`.
    private static func parsed<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        } catch {
            throw BinaryNumberNotRepresentable(number: text, type: Value.self)
        }
    }
}
