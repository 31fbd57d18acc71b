import Crypto

import struct Foundation.UUID

extension UUID {
    /// A version 7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits.
    ///
    /// Device uuids are v7 so that new rows land at the end of the uuid index instead of on a
    /// random page of it, which keeps a registration's write small on both backends.
    package static func timeOrdered(milliseconds: Int64) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        let time = UInt64(max(0, milliseconds))
        for index in 0..<6 {
            bytes[index] = UInt8(truncatingIfNeeded: time >> (8 * (5 - index)))
        }
        SymmetricKey(size: .bits128).withUnsafeBytes { random in
            for index in 6..<16 { bytes[index] = random[index] }
        }
        bytes[6] = 0x70 | (bytes[6] & 0x0f)
        bytes[8] = 0x80 | (bytes[8] & 0x3f)
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
