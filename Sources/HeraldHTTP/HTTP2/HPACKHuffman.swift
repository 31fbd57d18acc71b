/// HPACK's Huffman code (RFC 7541 Appendix B) and a table-driven decoder for it.
///
/// Why Herald decodes Huffman strings itself: NIOHPACK's decoder is internal to it, and every
/// APNs answer carries a fresh Huffman-coded `apns-id` to decode. See `HPACKBlockDecoder`.
///
/// The code is canonical (codes of one length are consecutive, in symbol order, after the
/// shorter ones), so the appendix is written down here as its code lengths only and the codes are
/// derived from them; a test checks the derived codes against the appendix's hex column.
///
/// Decoding reads four bits at a time: a state is a node of the code's tree (the bits of a code
/// read so far), and `transitions` says, for every state and nibble, the state reached, the
/// symbol completed on the way (at most one: no code is shorter than five bits), and whether
/// the nibble ran into EOS. The table is built from the lengths at first use.
enum HPACKHuffman {
    /// The code length of each symbol, 0 to 255 and EOS (256), as RFC 7541 Appendix B lists them.
    static let codeLengths: [UInt8] = [
        13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,  // 0–15
        28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,  // 16–31
        6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,  // ' ' to '/'
        5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,  // '0' to '?'
        13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,  // '@' to 'O'
        7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,  // 'P' to '_'
        15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,  // '`' to 'o'
        6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,  // 'p' to 127
        20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,  // 128–143
        24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,  // 144–159
        22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,  // 160–175
        21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,  // 176–191
        26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,  // 192–207
        19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,  // 208–223
        20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,  // 224–239
        26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,  // 240–255
        30,  // EOS
    ]

    static let eos = 256

    /// Each symbol's code, right-aligned, derived from `codeLengths` as a canonical code.
    static let codes: [UInt32] = {
        let order = (0...256).sorted { (codeLengths[$0], $0) < (codeLengths[$1], $1) }
        var codes = [UInt32](repeating: 0, count: 257)
        var code: UInt32 = 0
        var length = codeLengths[order[0]]
        for (position, symbol) in order.enumerated() {
            if position > 0 {
                code += 1
                code <<= UInt32(codeLengths[symbol] - length)
                length = codeLengths[symbol]
            }
            codes[symbol] = code
        }
        return codes
    }()

    /// A transition: bits 0–7 the next state, 8–15 the symbol completed, bit 16 set when a symbol
    /// was completed, bit 17 when the nibble reached EOS (a decoding error).
    private static let emits: UInt32 = 1 << 16
    private static let fails: UInt32 = 1 << 17

    /// `transitions[state << 4 | nibble]`, and whether a string may end in each state: at the
    /// root, or at most seven bits into EOS's code (all ones), which is the only padding allowed
    /// (RFC 7541 §5.2).
    static let decoding: (transitions: [UInt32], accepting: [Bool]) = {
        // The tree: node 0 the root; a child ≥ 0 is a node, < 0 the leaf of symbol −child − 1.
        var children: [[Int]] = [[0, 0]]
        var depth = [0]
        var allOnes = [true]
        for symbol in 0...256 {
            let length = Int(codeLengths[symbol])
            var node = 0
            for bit in stride(from: length - 1, through: 0, by: -1) {
                let branch = Int(codes[symbol] >> UInt32(bit) & 1)
                if bit == 0 {
                    children[node][branch] = -symbol - 1
                } else {
                    if children[node][branch] == 0 {
                        children.append([0, 0])
                        depth.append(depth[node] + 1)
                        allOnes.append(allOnes[node] && branch == 1)
                        children[node][branch] = children.count - 1
                    }
                    node = children[node][branch]
                }
            }
        }
        precondition(children.count == 256, "RFC 7541's code has 256 inner nodes")
        var transitions = [UInt32](repeating: 0, count: 256 * 16)
        for state in 0..<256 {
            for nibble in 0..<16 {
                var node = state
                var entry: UInt32 = 0
                for bit in stride(from: 3, through: 0, by: -1) {
                    let child = children[node][nibble >> bit & 1]
                    if child >= 0 {
                        node = child
                    } else if -child - 1 == eos {
                        entry |= fails
                        break
                    } else {
                        entry |= emits | UInt32(-child - 1) << 8
                        node = 0
                    }
                }
                transitions[state << 4 | nibble] = entry | UInt32(node)
            }
        }
        let accepting = (0..<256).map { $0 == 0 || (allOnes[$0] && depth[$0] <= 7) }
        return (transitions, accepting)
    }()

    /// Appends the octets `bytes` (a Huffman-coded string) decode to; false when they are not a
    /// valid string: EOS in them, or padding longer than seven bits or not all ones.
    static func decode(_ bytes: UnsafeRawBufferPointer, into output: inout [UInt8]) -> Bool {
        let (transitions, accepting) = decoding
        return transitions.withUnsafeBufferPointer { table in
            var state = 0
            for byte in bytes {
                let high = table[state << 4 | Int(byte >> 4)]
                if high & (emits | fails) != 0 {
                    if high & fails != 0 { return false }
                    output.append(UInt8(truncatingIfNeeded: high >> 8))
                }
                let low = table[Int(high & 0xFF) << 4 | Int(byte & 0xF)]
                if low & (emits | fails) != 0 {
                    if low & fails != 0 { return false }
                    output.append(UInt8(truncatingIfNeeded: low >> 8))
                }
                state = Int(low & 0xFF)
            }
            return accepting[state]
        }
    }
}
