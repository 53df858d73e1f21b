/// The request lines the scenarios send, built once as bytes so the client spends its time on the socket.
enum Requests {
    static func line(id: Int, method: String, params: String) -> [UInt8] {
        Array("{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(method)\",\"params\":\(params)}\n".utf8)
    }

    /// Names here are plain ASCII, so they need no JSON escaping.
    static func checkUsername(_ name: String, id: Int = 1) -> [UInt8] {
        line(id: id, method: "users.check_username", params: "{\"username\":\"\(name)\"}")
    }

    static func hello(id: Int, debounceMs: Int) -> [UInt8] {
        line(id: id, method: "session.hello", params: "{\"locale\":\"en\",\"timing\":{\"debounce_ms\":\(debounceMs)}}")
    }

    static func openRegister(id: Int) -> [UInt8] {
        line(id: id, method: "form.open", params: "{\"form\":\"register\"}")
    }

    static func input(id: Int, value: String) -> [UInt8] {
        line(id: id, method: "form.input", params: "{\"form\":\"register\",\"field\":\"username\",\"value\":\"\(value)\"}")
    }

    static func login(id: Int, username: String, password: String) -> [UInt8] {
        line(id: id, method: "auth.login", params: "{\"username\":\"\(username)\",\"password\":\"\(password)\"}")
    }

    static func register(id: Int, username: String, password: String) -> [UInt8] {
        line(id: id, method: "users.register", params: "{\"username\":\"\(username)\",\"password\":\"\(password)\"}")
    }

    static func addContact(_ name: String, id: Int = 1) -> [UInt8] {
        line(id: id, method: "contacts.add", params: "{\"name\":\"\(name)\"}")
    }

    /// A `contacts.import` of one CSV row (`name` plain ASCII).
    static func importOneRow(_ name: String, id: Int = 1) -> [UInt8] {
        line(id: id, method: "contacts.import", params: "{\"format\":\"csv\",\"data\":\"name\\r\\n\(name)\\r\\n\"}")
    }

    static let whoami = line(id: 1, method: "session.whoami", params: "{}")

    static let openContacts = line(id: 1, method: "form.open", params: "{\"form\":\"contacts\"}")

    static func contactsQuery(_ query: String) -> [UInt8] {
        line(id: 2, method: "form.input", params: "{\"form\":\"contacts\",\"field\":\"query\",\"value\":\"\(query)\"}")
    }

    /// Tokens are base64url, which needs no JSON escaping.
    static func resume(_ token: String) -> [UInt8] {
        line(id: 1, method: "session.resume", params: "{\"token\":\"\(token)\"}")
    }

    static func search(_ query: String, id: Int = 1) -> [UInt8] {
        line(id: id, method: "contacts.search", params: "{\"query\":\(jsonString(query))}")
    }

    /// A `contacts.import` of `csv` (any text; it is escaped here).
    static func importCSV(_ csv: String, id: Int = 1) -> [UInt8] {
        line(id: id, method: "contacts.import", params: "{\"format\":\"csv\",\"data\":\(jsonString(csv))}")
    }

    /// The whole book in one answer (no `limit`, no `cursor`).
    static func exportAll(format: String, id: Int = 1) -> [UInt8] {
        line(id: id, method: "contacts.export", params: "{\"format\":\(jsonString(format))}")
    }

    static func backup(to path: String, id: Int = 1) -> [UInt8] {
        line(id: id, method: "admin.backup", params: "{\"path\":\(jsonString(path))}")
    }

    /// `text` as a JSON string, quotes included: quotes, backslashes and control characters escaped.
    static func jsonString(_ text: String) -> String {
        var escaped = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\r": escaped += "\\r"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                escaped += (hex.count < 2 ? "\\u000" : "\\u00") + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }
}
