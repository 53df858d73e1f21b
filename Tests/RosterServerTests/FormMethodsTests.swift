import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// A call's connection as the form methods see it: one recorded form session and one recorded contacts sink.
final class RecordingForms: FormHost {
    let policy: Policy
    let logger = Logger(level: .emerg)
    let session = RecordingFormSession()
    let sink: ContactsFormRunnerTests.RecordingSink

    init(policy: Policy, scheduler: ManualScheduler) {
        self.policy = policy
        sink = ContactsFormRunnerTests.RecordingSink(scheduler: scheduler)
    }

    func formSession(for host: RecordingCallHost) -> any FormSession { session }
    func contactsSink(for host: RecordingCallHost) -> any ContactsFormSink { sink }
}

/// `form.*` on a manual clock with the real 500 ms debounce, an in-memory storage and fake password work, with
/// no server and no socket: each test asserts every answer the call's connection got and every event the form sent.
@Suite("Form methods on a manual clock")
struct FormMethodsTests {
    let scheduler = ManualScheduler()
    let contacts = ContactsFixture()
    let forms: RecordingForms
    let methods: FormMethods<RecordingForms>

    init() {
        forms = RecordingForms(policy: .seed, scheduler: scheduler)
        let accounts = AccountProcedures(storage: contacts.storage, passwords: FakePasswordWork(), policy: .seed,
                                         logger: Logger(level: .emerg), secrets: testSecrets)
        methods = FormMethods(scheduler: scheduler, accounts: accounts, contacts: contacts.service, forms: forms)
    }

    private func call(_ method: String, id: Int64, _ params: [(String, JSONValue)],
                      on host: RecordingCallHost) throws -> RequestCall<RecordingCallHost> {
        let spec = try #require(FormMethods<RecordingForms>.table.first { $0.spec.name == method }?.spec)
        return RequestCall(id: .int(id), params: try Params(validating: params, against: spec.params), connection: host)
    }

    private func answer(_ id: Int, _ result: String) -> RecordingCallHost.Event {
        .answer(#"{"jsonrpc":"2.0","id":\#(id),"result":\#(result)}"# + "\n", id: .int(Int64(id)))
    }

    /// The register form's snapshot as `form.open` answers it, in the default locale.
    private let registerSnapshot = #"{"form":"register","fields":["#
        + #"{"name":"username","enabled":true,"state":"empty","code":"empty","message":"请输入用户名","rev":0},"#
        + #"{"name":"password","enabled":false,"state":"empty","code":"empty","message":"请输入密码","rev":0},"#
        + #"{"name":"confirm","enabled":false,"state":"empty","code":"empty","message":"请再次输入密码","rev":0},"#
        + #"{"name":"email","enabled":true,"state":"empty","code":"empty","message":"邮箱为选填项","rev":0}],"#
        + #""submittable":false}"#

    private func advance(ms: Int64) { scheduler.advance(by: .milliseconds(ms)) }

    @Test func openInputEventsAndClose() throws {
        let host = RecordingCallHost()
        methods.open(try call("form.open", id: 1, [("form", "register")], on: host))
        methods.input(try call("form.input", id: 2, [("form", "register"), ("field", "username"), ("value", "alice1")],
                               on: host))
        #expect(host.history == [.answered, answer(1, registerSnapshot), .finished, .answered, answer(2, #"{"rev":1}"#), .finished])
        advance(ms: 499)
        #expect(forms.session.take() == [])
        advance(ms: 1)
        #expect(forms.session.take() == [
            field(.register, .username, .validating, .validating, rev: 1),
            field(.register, .username, .valid, .available, rev: 1),
            field(.register, .password, .empty, .empty, rev: 0),
        ])
        methods.input(try call("form.input", id: 3, [("form", "register"), ("field", "password"), ("value", "secret1")],
                               on: host))
        methods.close(try call("form.close", id: 4, [("form", "register")], on: host))
        advance(ms: 500)
        // Closed with the password's check still debounced: nothing more is said for it.
        #expect(forms.session.take() == [])
        #expect(scheduler.pendingCount == 0)
        #expect(host.session.forms.isEmpty)
        methods.input(try call("form.input", id: 5, [("form", "register"), ("field", "username"), ("value", "bob")],
                               on: host))
        #expect(Array(host.history.dropFirst(6)) == [
            .answered, answer(3, #"{"rev":1}"#), .finished, .answered, answer(4, "{}"), .finished,
            .answered, .error(.formNotOpen(form: "register"), id: .int(5)), .finished,
        ])
    }

    /// A register or log-in submit is a change of who the session is: it ends as one once answered.
    @Test func aSubmitIsAnsweredAsAChangeOfWhoTheSessionIs() throws {
        let host = RecordingCallHost()
        methods.open(try call("form.open", id: 1, [("form", "register")], on: host))
        for (id, name, value) in [(2, "username", "alice1"), (3, "password", "secret1"), (4, "confirm", "secret1")] {
            methods.input(try call("form.input", id: Int64(id), [("form", "register"), ("field", .string(name)),
                                                                 ("value", .string(value))], on: host))
            advance(ms: 500)
        }
        _ = forms.session.take()
        methods.submit(try call("form.submit", id: 5, [("form", "register")], on: host))
        #expect(forms.session.take() == [
            submit(.register, .running, .running), .registered("alice1"), .loggedIn("alice1", withToken: true),
            submit(.register, .succeeded, .succeeded),
        ])
        let answered = Array(host.history.dropFirst(12))
        #expect(answered.count == 4 && answered.first == .answered && answered.dropFirst(2) == [.finished, .authChangeEnded])
        guard answered.count == 4, case .answer(let line, _) = answered[1] else {
            Issue.record("no submit answer in \(host.history)")
            return
        }
        let result = try JSONParser.parse(Array(line.utf8.dropLast()))["result"]
        #expect(result?["username"] == "alice1" && result?["token"]?.stringValue?.isEmpty == false)
        #expect(host.session.authChangesRunning == 0)
    }

    @Test func theContactsFormIsTheLoggedInUsersAndHasNothingToSubmit() throws {
        let host = RecordingCallHost()
        methods.open(try call("form.open", id: 1, [("form", "contacts")], on: host))
        let owner = contacts.account("owner")
        contacts.seed(owner, ["Alice Smith", "Bob Brown"])
        host.session.user = Account(id: owner, username: "owner", display: "owner", email: nil, createdAtMs: 0)
        methods.open(try call("form.open", id: 2, [("form", "contacts")], on: host))
        methods.submit(try call("form.submit", id: 3, [("form", "contacts")], on: host))
        #expect(host.history == [
            .answered, .error(.unauthenticated, id: .int(1)), .finished,
            .answered, answer(2, #"{"form":"contacts","fields":[{"name":"query","enabled":true,"state":"empty","code":"empty","#
                              + #""message":"输入姓名、拼音、首字母或电话搜索","rev":0}],"submittable":false}"#), .finished,
            .answered, .error(.notSubmittable(form: "contacts"), id: .int(3)), .finished,
        ])
        #expect(forms.sink.history == [.init(atMs: 0, query: "", names: ["Alice Smith", "Bob Brown"], total: 2)])
        #expect(host.session.authChangesRunning == 0)
    }

    /// The password form changes the session's user's password: it opens only on a logged-in session, and its
    /// snapshot shows the chain (confirm waits for new).
    @Test func thePasswordFormIsTheLoggedInUsers() throws {
        let host = RecordingCallHost()
        methods.open(try call("form.open", id: 1, [("form", "password")], on: host))
        host.session.user = Account(id: contacts.account("owner"), username: "owner", display: "owner", email: nil,
                                    createdAtMs: 0)
        methods.open(try call("form.open", id: 2, [("form", "password")], on: host))
        methods.input(try call("form.input", id: 3, [("form", "password"), ("field", "confirm"), ("value", "x")], on: host))
        #expect(host.history == [
            .answered, .error(.unauthenticated, id: .int(1)), .finished,
            .answered, answer(2, #"{"form":"password","fields":["#
                + #"{"name":"current","enabled":true,"state":"empty","code":"empty","message":"请输入当前密码","rev":0},"#
                + #"{"name":"new","enabled":true,"state":"empty","code":"empty","message":"请输入新密码","rev":0},"#
                + #"{"name":"confirm","enabled":false,"state":"empty","code":"empty","message":"请再次输入密码","rev":0}],"#
                + #""submittable":false}"#), .finished,
            .answered, .error(.fieldDisabled(form: "password", field: "confirm"), id: .int(3)), .finished,
        ])
    }

    @Test func anUnknownFormOrFieldOrAFormNotOpenIsRefused() throws {
        let host = RecordingCallHost()
        methods.open(try call("form.open", id: 1, [("form", "profile")], on: host))
        methods.close(try call("form.close", id: 2, [("form", "login")], on: host))
        methods.open(try call("form.open", id: 3, [("form", "login")], on: host))
        methods.input(try call("form.input", id: 4, [("form", "login"), ("field", "colour"), ("value", "x")], on: host))
        methods.submit(try call("form.submit", id: 5, [("form", "register")], on: host))
        let refusals = host.history.filter { if case .error = $0 { true } else { false } }
        #expect(refusals == [
            .error(.unknownForm(form: "profile"), id: .int(1)), .error(.formNotOpen(form: "login"), id: .int(2)),
            .error(.unknownField(form: "login", field: "colour"), id: .int(4)),
            .error(.formNotOpen(form: "register"), id: .int(5)),
        ])
        #expect(forms.session.take() == [])
    }
}
