import Foundation
import RosterCrypto
import RosterStorage
import Testing

/// A sealed outbox message opened with the daemon's key: its header lines and its body decoded.
func openedMail(_ sealed: [UInt8], key: SecretKey = testSecrets.mailSeal) throws -> (headers: [String], body: String) {
    let bytes = try #require(SecretBox.open(sealed, key: key))
    let text = String(decoding: bytes, as: UTF8.self)
    let parts = text.components(separatedBy: "\r\n\r\n")
    try #require(parts.count == 2)
    let body = try #require(Data(base64Encoded: parts[1].replacingOccurrences(of: "\r\n", with: "")))
    return (parts[0].components(separatedBy: "\r\n"), String(decoding: body, as: UTF8.self))
}

/// The one six-digit code a mail's body holds.
func mailedCode(in body: String) throws -> String {
    let digits = body.split(whereSeparator: { !$0.isNumber }).filter { $0.count == 6 }
    #expect(Set(digits).count == 1, "\(body)")
    return String(try #require(digits.first))
}
