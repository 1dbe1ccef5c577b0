import Foundation
import Testing
@testable import AppCacheKit

struct CRC32Tests {
    @Test func matchesTheStandardCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func knownVectors() {
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("a".utf8)) == 0xE8B7_BE43)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
    }

    /// The sliced loop must agree with the plain byte-at-a-time definition at every length and
    /// alignment, including the tail handling.
    @Test func slicedLoopAgreesWithBitwiseDefinition() {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4099] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            for start in 0..<min(3, max(1, length)) {
                let slice = Array(bytes[start...])
                #expect(CRC32.checksum(slice) == bitwise(slice), "length \(length) offset \(start)")
            }
        }
    }

    @Test func seedContinuesAChecksum() {
        let bytes = Array("hello, world".utf8)
        let first = CRC32.checksum(Array(bytes[..<5]))
        #expect(CRC32.checksum(Array(bytes[5...]), seed: first) == CRC32.checksum(bytes))
    }

    @Test func detectsEverySingleBitFlip() {
        let bytes = Array("payload bytes that must not change".utf8)
        let original = CRC32.checksum(bytes)
        for index in bytes.indices {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= UInt8(1) << bit
                #expect(CRC32.checksum(flipped) != original)
            }
        }
    }

    private func bitwise(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }
}
