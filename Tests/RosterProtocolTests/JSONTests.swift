import Testing
@testable import RosterProtocol

@Suite("JSON parser and writer")
struct JSONTests {
    private func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    @Test func parsesEveryKind() throws {
        let value = try parse(#" {"s":"a\"b\\c\n\u00e9\ud83d\ude00","n":-1.5e3,"i":42,"t":true,"f":false,"z":null,"a":[1,[]],"o":{}} "#)
        #expect(value["s"] == .string("a\"b\\c\né😀"))
        #expect(value["n"] == .number("-1.5e3"))
        #expect(value["i"]?.int64Value == 42)
        #expect(value["t"] == .bool(true))
        #expect(value["f"] == .bool(false))
        #expect(value["z"] == .null)
        #expect(value["a"] == .array([1, .array([])]))
        #expect(value["o"] == .object([]))
    }

    @Test(arguments: ["", "{", "{\"a\"}", "{\"a\":}", "[1,]", "01", "1.", "-", "tru", "\"abc", "{} {}",
                      "\"a\u{01}b\"", "\"\\x\"", "\"\\ud800\"", "nul", "{\"a\":1,}", "\u{0}"])
    func refusesMalformedDocuments(text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test func refusesAKeyTwiceInOneObjectAtAnyDepth() throws {
        for text in [#"{"a":1,"a":2}"#, #"[{"a":1,"b":2,"a":3}]"#, #"{"x":{"y":{"a":1,"a":1}}}"#,
                     #"{"café":1,"café":2}"#] {
            #expect(throws: JSONParser.Failure.self, "\(text)") { try JSONParser.parse(Array(text.utf8)) }
        }
        let (value, duplicate) = try JSONParser.parseKeepingDuplicateKeys(Array(#"{"x":{"a":1,"a":2},"x":3}"#.utf8))
        #expect(value["x"] != nil)
        #expect(duplicate?.depth == 0)
        #expect(duplicate?.key == "x")
        #expect(try JSONParser.parseKeepingDuplicateKeys(Array(#"{"x":{"a":1,"a":2}}"#.utf8)).duplicateKey?.depth == 1)
        #expect(try JSONParser.parse(Array(#"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#.utf8))["b"] != nil)
    }

    @Test func refusesInvalidUTF8AndNUL() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xC3, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x7B, 0x7D, 0x00]) }
    }

    @Test func refusesNestingDeeperThanTheLimit() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(deep.utf8)) }
        let fine = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        _ = try parse(fine)
    }

    @Test func integersAreWholeNumbersOnly() throws {
        #expect(try parse("5").int64Value == 5)
        #expect(try parse("5.0").int64Value == 5)
        #expect(try parse("5e2").int64Value == 500)
        #expect(try parse("5.5").int64Value == nil)
        #expect(try parse("1e300").int64Value == nil)
    }

    @Test func writerEscapesAndRoundTrips() throws {
        let value: JSONValue = ["text": "q\"\\\n\t\u{1}é", "list": [1, true, nil], "id": .number("7.25")]
        let encoded = String(decoding: JSONWriter.encode(value), as: UTF8.self)
        #expect(encoded == #"{"text":"q\"\\\n\t\u0001é","list":[1,true,null],"id":7.25}"#)
        #expect(try parse(encoded) == value)
    }
}
