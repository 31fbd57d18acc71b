import Foundation
import HeraldCore
import NIOCore
import NIOHPACK
import Testing

@testable import HeraldHTTP

/// Herald's HPACK decoder for answers: RFC 7541's examples, agreement with NIOHPACK's decoder on
/// what NIOHPACK's encoder writes, and a decoding error (never a crash) for each kind of malformed
/// block.
@Suite struct HPACKBlockDecoderTests {
    private func bytes(_ hex: String) throws -> [UInt8] {
        try #require(Hex.decode(hex.filter { !$0.isWhitespace }))
    }

    private func fields(_ head: HTTP2AnswerHead) -> [String] {
        head.fields.map { "\($0.name): \($0.value)" }
    }

    private func decode(_ decoder: inout HPACKBlockDecoder, _ block: [UInt8]) throws(HTTP2ProtocolError) -> HTTP2AnswerHead {
        try decoder.decode(ByteBuffer(bytes: block))
    }

    // MARK: Tables

    @Test func huffmanCodesDerivedFromTheLengthsAreTheAppendixCodes() {
        let appendix: [(Int, UInt32)] = [
            (0, 0x1ff8), (1, 0x7fffd8), (9, 0xffffea), (10, 0x3fff_fffc), (32, 0x14), (48, 0x0), (58, 0x5c), (92, 0x7fff0),
            (97, 0x3), (127, 0xffffffc), (128, 0xfffe6), (195, 0x7fff1), (203, 0x7ffffde), (225, 0xfffff3), (254, 0x7fffff0),
            (255, 0x3ffffee), (256, 0x3fff_ffff),
        ]
        for (symbol, code) in appendix {
            #expect(HPACKHuffman.codes[symbol] == code, "symbol \(symbol)")
        }
        // A complete prefix code: the Kraft sum is exactly 1.
        let kraftSum = HPACKHuffman.codeLengths.reduce(0) { (sum: Int, length: UInt8) -> Int in sum + (1 << 30) >> Int(length) }
        #expect(kraftSum == 1 << 30)
    }

    @Test func staticTableAgreesWithNIOHPACK() throws {
        for index in 1...61 {
            var ours = HPACKBlockDecoder(tableCapacity: 4096, maxHeaderListSize: 1 << 16)
            var theirs = HPACKDecoder(allocator: ByteBufferAllocator())
            var block = ByteBuffer(bytes: [0x80 | UInt8(index)])
            let expected = try theirs.decodeHeaders(from: &block)
            #expect(try fields(decode(&ours, [0x80 | UInt8(index)])) == expected.map { "\($0.name): \($0.value)" }, "index \(index)")
        }
    }

    // MARK: RFC 7541 Appendix C

    /// C.3 (literals) and C.4 (Huffman): three requests on one connection.
    @Test(arguments: [
        [
            "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", "8286 84be 5808 6e6f 2d63 6163 6865",
            "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        ],
        [
            "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", "8286 84be 5886 a8eb 1064 9cbf",
            "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        ],
    ])
    func appendixCRequests(_ blocks: [String]) throws {
        var decoder = HPACKBlockDecoder(tableCapacity: 4096, maxHeaderListSize: 1 << 16)
        let first = try decode(&decoder, bytes(blocks[0]))
        #expect(fields(first) == [":method: GET", ":scheme: http", ":path: /", ":authority: www.example.com"])
        #expect(first.status == nil)
        #expect(decoder.tableSize == 57)
        let second = try decode(&decoder, bytes(blocks[1]))
        #expect(fields(second) == [":method: GET", ":scheme: http", ":path: /", ":authority: www.example.com", "cache-control: no-cache"])
        #expect(decoder.tableSize == 110)
        let third = try decode(&decoder, bytes(blocks[2]))
        #expect(
            fields(third) == [
                ":method: GET", ":scheme: https", ":path: /index.html", ":authority: www.example.com", "custom-key: custom-value",
            ])
        #expect(decoder.tableSize == 164 && decoder.tableCount == 3)
    }

    /// C.5 (literals) and C.6 (Huffman): three responses with a 256-octet table, so entries are
    /// evicted (by the decoded octets: the same evictions either way).
    @Test(arguments: [
        [
            """
            4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d
            546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d
            """,
            "4803 3330 37c1 c0bf",
            """
            88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f
            6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b
            2076 6572 7369 6f6e 3d31
            """,
        ],
        [
            """
            4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7
            8f0b 97c8 e9ae 82ae 43d3
            """,
            "4883 640e ffc1 c0bf",
            """
            88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335
            dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07
            """,
        ],
    ])
    func appendixCResponses(_ blocks: [String]) throws {
        var decoder = HPACKBlockDecoder(tableCapacity: 256, maxHeaderListSize: 1 << 16)
        let first = try decode(&decoder, bytes(blocks[0]))
        #expect(first.status == 302)
        #expect(
            fields(first) == [
                ":status: 302", "cache-control: private", "date: Mon, 21 Oct 2013 20:13:21 GMT", "location: https://www.example.com",
            ])
        #expect(decoder.tableSize == 222 && decoder.tableCount == 4)
        // ":status: 307" evicts ":status: 302".
        let second = try decode(&decoder, bytes(blocks[1]))
        #expect(second.status == 307)
        #expect(
            fields(second) == [
                ":status: 307", "cache-control: private", "date: Mon, 21 Oct 2013 20:13:21 GMT", "location: https://www.example.com",
            ])
        #expect(decoder.tableSize == 222 && decoder.tableCount == 4)
        let third = try decode(&decoder, bytes(blocks[2]))
        #expect(third.status == 200)
        #expect(
            fields(third) == [
                ":status: 200", "cache-control: private", "date: Mon, 21 Oct 2013 20:13:22 GMT", "location: https://www.example.com",
                "content-encoding: gzip", "set-cookie: foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
            ])
        #expect(decoder.tableSize == 215 && decoder.tableCount == 3)
    }

    // MARK: Against NIOHPACK

    /// A small deterministic generator, so a failure repeats.
    private struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    /// Answer-shaped blocks, many in a row with fresh values (so entries are evicted), every kind
    /// of literal, static and dynamic names, and table size updates now and then: ours reads back
    /// what NIOHPACK's decoder reads, field by field (names, values, indexing), and the status; and
    /// keeping only `apns-id` gives the same status and that field, the table staying in step.
    @Test(arguments: [false, true])
    func roundTripsAgreeWithNIOHPACK(huffman: Bool) throws {
        var generator = Generator(state: huffman ? 7 : 11)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: huffman)
        var theirs = HPACKDecoder(allocator: ByteBufferAllocator())
        var ours = HPACKBlockDecoder(tableCapacity: 4096, maxHeaderListSize: 1 << 16)
        var lean = HPACKBlockDecoder(tableCapacity: 4096, maxHeaderListSize: 1 << 16, keptFields: .only(["APNS-ID"]))
        let indexings: [HPACKIndexing] = [.indexable, .indexable, .nonIndexable, .neverIndexed]
        for round in 0..<2_000 {
            if round % 97 == 50 {
                // Shrinks the table (evicting), then grows it back in a later block.
                try encoder.setDynamicTableSize(round % 2 == 0 ? 0 : 300)
            } else if round % 97 == 60 {
                try encoder.setDynamicTableSize(4096)
            }
            var headers = HPACKHeaders()
            headers.add(name: ":status", value: ["200", "200", "400", "410", "503"].randomElement(using: &generator)!)
            headers.add(name: "apns-id", value: UUID().uuidString.lowercased(), indexing: indexings.randomElement(using: &generator)!)
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let name = ["content-type", "date", "server", "retry-after", "x-trace-\(Int.random(in: 0..<40, using: &generator))"]
                    .randomElement(using: &generator)!
                let value = ["application/json", "h2o", "Thu, 26 Nov 2026 22:00:0\(round % 10) GMT", "ünïcode \(round)", ""]
                    .randomElement(using: &generator)!
                headers.add(name: name, value: value, indexing: indexings.randomElement(using: &generator)!)
            }
            var block = ByteBuffer()
            try encoder.encode(headers: headers, to: &block)
            var copy = block
            let expected = try theirs.decodeHeaders(from: &copy)
            let head = try ours.decode(block)
            #expect(
                head.fields.map { "\($0.name)=\($0.value)/\($0.indexable)" } == expected.map { "\($0.name)=\($0.value)/\($0.indexable)" })
            #expect(head.status == Int(expected.first(name: ":status")!))
            let leanHead = try lean.decode(block)
            #expect(leanHead.status == head.status)
            let ids: [String] = expected.filter { $0.name == "apns-id" }.map { $0.value }
            #expect(leanHead.fields.map { $0.value } == ids)
            #expect(ours.tableSize == lean.tableSize && ours.tableCount == lean.tableCount)
        }
    }

    /// A field the lean decoder does not keep still enters the table: a later reference to it
    /// resolves.
    @Test func fieldsNotKeptStayInTheTable() throws {
        var decoder = HPACKBlockDecoder(tableCapacity: 4096, maxHeaderListSize: 1 << 16, keptFields: .only(["apns-id"]))
        // ":status: 200", then "server: h2o" with incremental indexing (static name 54).
        let first = try decode(&decoder, [0x88, 0x76, 0x03] + Array("h2o".utf8))
        #expect(first.status == 200 && first.fields.isEmpty)
        // "apns-id: x" (literal name, indexed), then the server field by its dynamic index 63.
        let second = try decode(&decoder, [0x40, 0x07] + Array("apns-id".utf8) + [0x01, 0x78, 0xBF])
        #expect(fields(second) == ["apns-id: x"])
        #expect(decoder.tableCount == 2)
    }

    // MARK: Malformed blocks

    @Test(
        arguments: [
            ([0x80], "index 0"),
            ([0xBE], "index 62 with an empty dynamic table"),
            ([0x40, 0x01, 0x61, 0x00, 0xBF], "index 63 with one entry"),
            ([0x7F], "a literal name index past the tables, truncated"),
            ([0xFF], "a truncated integer"),
            ([0xFF, 0x80, 0x80, 0x80, 0x80, 0x01], "an integer of more than 28 bits"),
            ([0x40], "a literal without its name"),
            ([0x40, 0x85, 0x61], "a truncated string"),
            ([0x00, 0x01, 0x61], "a literal without its value"),
            ([0x00, 0x01, 0x61, 0x84, 0xFF, 0xFF, 0xFF, 0xFC], "Huffman: EOS"),
            ([0x00, 0x01, 0x61, 0x81, 0x18], "Huffman: padding of zeros"),
            ([0x00, 0x01, 0x61, 0x82, 0x1F, 0xFF], "Huffman: padding longer than 7 bits"),
            ([0x3F, 0xE2, 0x1F], "a table size update to 4,097"),
            ([0x88, 0x20], "a table size update after a field"),
            ([0x20, 0x20, 0x20, 0x88], "three table size updates"),
        ] as [([UInt8], String)])
    func malformedBlocksAreCompressionErrors(_ block: [UInt8], _ label: String) {
        var decoder = HPACKBlockDecoder(tableCapacity: 4096, maxHeaderListSize: 1 << 16)
        do {
            _ = try decode(&decoder, block)
            Issue.record("\(label): decoded")
        } catch {
            #expect(error.code == HTTP2Wire.ErrorCode.compressionError, "\(label)")
        }
    }

    @Test func wellFormedEdgesDecode() throws {
        var decoder = HPACKBlockDecoder(tableCapacity: 4096, maxHeaderListSize: 1 << 16)
        // "a" Huffman-coded with its three bits of padding; two size updates before the first field.
        #expect(try fields(decode(&decoder, [0x20, 0x3F, 0xE1, 0x1F, 0x00, 0x01, 0x61, 0x81, 0x1F])) == ["a: a"])
        // An empty block; a Huffman string of no octets.
        #expect(try decode(&decoder, []) == HTTP2AnswerHead(status: nil, fields: [:]))
        #expect(try fields(decode(&decoder, [0x00, 0x01, 0x61, 0x80])) == ["a: "])
    }

    @Test func aSizeUpdateEvictsAndALaterReferenceFails() throws {
        var decoder = HPACKBlockDecoder(tableCapacity: 4096, maxHeaderListSize: 1 << 16)
        _ = try decode(&decoder, [0x40, 0x01, 0x61, 0x01, 0x62])
        #expect(try fields(decode(&decoder, [0xBE])) == ["a: b"])
        // Down to 0 and back to 4,096: the entry is gone.
        #expect(try decode(&decoder, [0x20, 0x3F, 0xE1, 0x1F, 0x88]).status == 200)
        #expect(decoder.tableCount == 0 && decoder.tableSize == 0)
        #expect(throws: HTTP2ProtocolError.self) { try decode(&decoder, [0xBE]) }
    }

    @Test func aListAboveTheLimitIsACompressionError() throws {
        var decoder = HPACKBlockDecoder(tableCapacity: 4096, maxHeaderListSize: 100)
        // Two fields of 3 + 32 octets each pass; a third makes 105.
        let field: [UInt8] = [0x00, 0x01, 0x61, 0x02, 0x62, 0x62]
        _ = try decode(&decoder, field + field)
        #expect(throws: HTTP2ProtocolError.self) { try decode(&decoder, field + field + field) }
    }
}
