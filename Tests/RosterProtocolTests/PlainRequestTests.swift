import RosterTestSupport
import Testing
@testable import RosterProtocol

@Suite("PlainRequest scanner")
struct PlainRequestTests {
    private func scan(_ text: String) -> (id: String, value: String)? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            PlainRequest.scan(buffer, method: "users.check_username", param: "username").map {
                (String(decoding: bytes[$0.id], as: UTF8.self), String(decoding: bytes[$0.value], as: UTF8.self))
            }
        }
    }

    @Test func readsTheCommonShapes() {
        let compact = #"{"jsonrpc":"2.0","id":7,"method":"users.check_username","params":{"username":"alice01"}}"#
        #expect(scan(compact)?.id == "7")
        #expect(scan(compact)?.value == "alice01")
        let spaced = #" { "params" : { "username" : "bob" } , "method" : "users.check_username" , "id" : "a-1" } "#
        #expect(scan(spaced)?.id == #""a-1""#)
        #expect(scan(spaced)?.value == "bob")
        #expect(scan(#"{"id":-12,"method":"users.check_username","params":{"username":""}}"#)?.id == "-12")
        #expect(scan(#"{"id":0,"method":"users.check_username","params":{"username":"x y"}}"#)?.value == "x y")
        // The compact form with a space or two is still read, by the general scan.
        let loose = #"{"jsonrpc":"2.0","id": 3,"method":"users.check_username","params":{"username":"cd"}} "#
        #expect(scan(loose)?.id == "3")
        #expect(scan(loose)?.value == "cd")
    }

    @Test(arguments: [
        #"{"id":1,"method":"users.check_username","params":{"username":"al\u0069ce"}}"#,  // an escape
        #"{"jsonrpc":"2.0","id":1,"method":"users.check_username","params":{"username":"a\tb"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"users.check_username","params":{"username":"ab"}}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"users.check_username","params":{"username":"ab"},"id":2}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"users.check_username","params":{"username":"ab"}"#,
        #"{"id":1,"method":"users.check_username","params":{"username":"josé"}}"#,         // not ASCII
        #"{"id":1,"method":"users.check_username","params":{"username":"a\"b"}}"#,         // an escaped quote
        #"{"id":1,"method":"users.check_usernamex","params":{"username":"a"}}"#,           // another method
        #"{"id":1,"method":"users.check_username","params":{"user":"a"}}"#,                // another param
        #"{"id":1,"method":"users.check_username","params":{"username":"a","x":1}}"#,      // two params
        #"{"id":1,"method":"users.check_username","params":{"username":1}}"#,              // not a string
        #"{"id":1,"method":"users.check_username","params":{"username":"a"},"x":1}"#,      // unknown member
        #"{"id":1,"id":2,"method":"users.check_username","params":{"username":"a"}}"#,     // a member twice
        #"{"id":null,"method":"users.check_username","params":{"username":"a"}}"#,         // null id
        #"{"id":1.5,"method":"users.check_username","params":{"username":"a"}}"#,          // fraction
        #"{"id":1e3,"method":"users.check_username","params":{"username":"a"}}"#,          // exponent
        #"{"id":01,"method":"users.check_username","params":{"username":"a"}}"#,           // leading zero
        #"{"id":"a\\b","method":"users.check_username","params":{"username":"a"}}"#,       // escaped id
        #"{"method":"users.check_username","params":{"username":"a"}}"#,                   // notification
        #"{"id":1,"params":{"username":"a"}}"#,                                             // no method
        #"{"id":1,"method":"users.check_username"}"#,                                       // no params
        #"{"jsonrpc":"1.0","id":1,"method":"users.check_username","params":{"username":"a"}}"#,
        #"{"id":1,"method":"users.check_username","params":{"username":"a"}} x"#,          // trailing data
        #"{"id":1,"method":"users.check_username","params":{"username":"a"}"#,             // unclosed
        #"[{"id":1,"method":"users.check_username","params":{"username":"a"}}]"#,          // a batch
        "",
    ])
    func declinesEverythingElse(_ line: String) {
        #expect(scan(line) == nil)
    }

    /// Whatever the scanner accepts, the general parser reads the same way; this is what lets the server answer
    /// from the scan alone.
    @Test func agreesWithTheGeneralParserOnRandomLines() {
        var generator = SplitMix64(seed: 2026)
        let pieces = [#"{"#, #"}"#, #"""#, #":"#, #","#, " ", "\t", "\\", "\u{1}", "é", "id", "method", "params", "jsonrpc",
                      "2.0", "users.check_username", "username", "-", "0", "7", "42", ".", "e", "null", "abc", "[", "]"]
        let templates = [
            #"{"jsonrpc":"2.0","id":ID,"method":"users.check_username","params":{"username":"VALUE"}}"#,
            #"{ "params": {"username": "VALUE"}, "id": ID, "method": "users.check_username" }"#,
            #"{"id":ID,"method":"users.check_username","params":{"username":"VALUE"},"jsonrpc":"2.0"}"#,
            // A member twice, at the top or in params: the parser refuses these, so the scanner must decline.
            #"{"jsonrpc":"2.0","id":ID,"method":"users.check_username","params":{"username":"VALUE"},"method":"users.check_username"}"#,
            #"{"id":ID,"method":"users.check_username","params":{"username":"VALUE","username":"VALUE"}}"#,
            #"{"jsonrpc":"2.0","jsonrpc":"2.0","id":ID,"method":"users.check_username","params":{"username":"VALUE"}}"#,
            #"{"id":ID,"method":"users.check_username","params":{"username":"VALUE"},"params":{"username":"VALUE"}}"#,
            #"{"id":ID,"id":ID,"method":"users.check_username","params":{"username":"VALUE"}}"#,
        ]
        var accepted = 0
        for _ in 0..<20_000 {
            var line = templates[Int(generator.next() % UInt64(templates.count))]
            let id = ["1", "-3", "0", "\"x\"", "1234567890123", "\"\"", "01", "1.0", "null", "\"a b\""][Int(generator.next() % 10)]
            var value = ""
            for _ in 0..<Int(generator.next() % 6) { value += pieces[Int(generator.next() % UInt64(pieces.count))] }
            line = line.replacing("ID", with: id).replacing("VALUE", with: value)
            // Now and then, damage the line at a random spot.
            if generator.next() % 4 == 0 {
                var bytes = Array(line.utf8)
                let spot = Int(generator.next() % UInt64(bytes.count))
                let piece = Array(pieces[Int(generator.next() % UInt64(pieces.count))].utf8)
                bytes.replaceSubrange(spot..<min(bytes.count, spot + Int(generator.next() % 3)), with: piece)
                line = String(decoding: bytes, as: UTF8.self)
            }
            guard let plain = scan(line) else { continue }
            accepted += 1
            guard case .success(let request) = RPCRequest.parse(line: Array(line.utf8)) else {
                Issue.record("the scanner accepted a line the parser refuses: \(line)")
                continue
            }
            #expect(request.method == "users.check_username", "\(line)")
            #expect(request.id.map { JSONWriter.encode($0) } == Array(plain.id.utf8), "\(line)")
            #expect(request.params.count == 1 && request.params[0].0 == "username", "\(line)")
            #expect(request.params.first?.1 == .string(plain.value), "\(line)")
        }
        #expect(accepted > 1_000)
    }
}
