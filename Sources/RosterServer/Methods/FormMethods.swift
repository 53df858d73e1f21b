import RosterCore
import RosterRuntime
import RosterProtocol

/// What the `form.*` methods need beyond their scheduler, procedures and contacts: the policy in force, and a
/// call's connection as its forms see it. The session book, for the daemon's connections; a double in a unit
/// test.
protocol FormHost: AnyObject {
    associatedtype Host: CallHost
    var policy: Policy { get }
    /// Read at each opening, so that a reload's log level reaches the forms opened after it.
    var logger: Logger { get }
    /// Where a register, log-in or password form opened on `host` sends its events, and what it tells of its
    /// outcome.
    func formSession(for host: Host) -> any FormSession
    /// Where a contacts form opened on `host` sends its results.
    func contactsSink(for host: Host) -> any ContactsFormSink
}

/// `form.*`: the seeds' screens, one view model per form per connection, validation streamed as events.
final class FormMethods<Forms: FormHost> {
    typealias FormCall = RequestCall<Forms.Host>

    private let scheduler: any Scheduler
    private let accounts: AccountProcedures
    private let contacts: ContactsService
    private unowned let forms: Forms

    init(scheduler: any Scheduler, accounts: AccountProcedures, contacts: ContactsService, forms: Forms) {
        self.scheduler = scheduler
        self.accounts = accounts
        self.contacts = contacts
        self.forms = forms
    }

    private func formName(_ call: FormCall) throws(RosterError) -> FormName {
        let name = call.params.string("form") ?? ""
        guard let form = FormName(rawValue: name) else { throw .unknownForm(form: name) }
        return form
    }

    func open(_ call: FormCall) {
        let form: FormName
        do { form = try formName(call) } catch { return call.fail(error) }
        let session = call.session
        session.forms.removeValue(forKey: form)?.close()
        let policy = forms.policy
        let debounce = session.debounce(under: policy)
        let firstToken = session.nextFirstToken()
        let runner: RunningForm
        switch form {
        case .register:
            runner = FormRunner(machine: RegisterForm(policy: policy, debounce: debounce, firstToken: firstToken),
                                environment: formEnvironment(call.connection))
        case .login:
            runner = FormRunner(machine: LoginForm(policy: policy, debounce: debounce, firstToken: firstToken),
                                environment: formEnvironment(call.connection))
        case .password:
            // The form changes the session's user's password; the server closes it when that user changes.
            guard let user = session.user else { return call.fail(.unauthenticated) }
            runner = FormRunner(machine: PasswordForm(policy: policy, username: user.username, debounce: debounce,
                                                      firstToken: firstToken),
                                environment: formEnvironment(call.connection))
        case .contacts:
            guard let user = session.user else { return call.fail(.unauthenticated) }
            let contactsForm = ContactsFormRunner(userID: user.id, environment: contactsFormEnvironment(for: call.connection))
            session.forms[form] = contactsForm
            call.succeed(snapshotJSON(contactsForm.snapshot, locale: session.locale))
            contactsForm.opened()
            return
        }
        session.forms[form] = runner
        call.succeed(snapshotJSON(runner.snapshot, locale: session.locale))
    }

    /// All a register, log-in or password form of `host` gets to work with.
    private func formEnvironment(_ host: Forms.Host) -> FormEnvironment {
        FormEnvironment(scheduler: scheduler, accounts: accounts, session: forms.formSession(for: host))
    }

    /// What a contacts form opened on `host` is given: the scheduler, the contacts, the connection as its sink, the
    /// session's throttle under the policy in force, and the connection's charge (its user is the form's).
    private func contactsFormEnvironment(for host: Forms.Host) -> ContactsFormEnvironment {
        let session = host.session
        return ContactsFormEnvironment(
            scheduler: scheduler, contacts: contacts, sink: forms.contactsSink(for: host),
            throttle: { [unowned forms, unowned session] in session.throttle(under: forms.policy) },
            charge: host.queueCharge, logger: forms.logger)
    }

    private func runningForm(for call: FormCall) throws(RosterError) -> (FormName, RunningForm) {
        let form = try formName(call)
        guard let runner = call.session.forms[form] else { throw .formNotOpen(form: form.rawValue) }
        return (form, runner)
    }

    func input(_ call: FormCall) {
        do throws(RosterError) {
            let (form, runner) = try runningForm(for: call)
            let name = call.params.string("field") ?? ""
            guard let field = FieldName(rawValue: name) else { throw .unknownField(form: form.rawValue, field: name) }
            let rev = try runner.input(field: field, value: call.params.string("value") ?? "")
            call.succeed(["rev": .int(rev)])
            runner.performPendingInput()
        } catch {
            call.fail(error)
        }
    }

    func submit(_ call: FormCall) {
        do throws(RosterError) {
            let (form, runner) = try runningForm(for: call)
            // The register and log-in forms log the session in when they succeed; the password form's user
            // stays who it is (the sessions its change ends are other tokens').
            if form == .register || form == .login { call.beginAuthChange() }
            runner.submit(answer: call.finish)
        } catch {
            call.fail(error)
        }
    }

    func close(_ call: FormCall) {
        do throws(RosterError) {
            let (form, runner) = try runningForm(for: call)
            call.session.forms[form] = nil
            runner.close()
            call.succeed([:])
        } catch {
            call.fail(error)
        }
    }

    private func snapshotJSON(_ snapshot: FormSnapshot, locale: RosterLocale) -> JSONValue {
        let policy = forms.policy
        return .object([
            ("form", .string(snapshot.form.rawValue)),
            ("fields", .array(snapshot.fields.map { field in
                let key = "\(field.name.rawValue).\(field.code.rawValue)"
                return .object([
                    ("name", .string(field.name.rawValue)), ("enabled", .bool(field.enabled)),
                    ("state", .string(field.state.rawValue)), ("code", .string(field.code.rawValue)),
                    ("message", .string(MessageCatalog.text(key, locale: locale,
                                                            arguments: field.name.messageArguments(policy: policy)))),
                    ("rev", .int(field.rev)),
                ])
            })),
            ("submittable", .bool(snapshot.submittable)),
        ])
    }
}

/// The daemon's forms: each connection is its forms' session and sink.
extension SessionBook: FormHost {
    func formSession(for connection: Connection) -> any FormSession {
        ConnectionFormSession(sessions: self, connection: connection)
    }

    func contactsSink(for connection: Connection) -> any ContactsFormSink {
        ConnectionFormSession(sessions: self, connection: connection)
    }
}

extension FormMethods: MethodGroup {
    typealias Host = Forms.Host

    /// The form methods' entries of the dispatcher's table; each handler is handed the group when called.
    static var table: [MethodEntry<FormMethods>] {
        let formParam = FieldSpec("form", .string)
        let fieldsShape = Shape.array(.described("{name, enabled, state, code, message, rev}"))
        return [
            MethodEntry(spec: MethodSpec(
                "form.open", summary: "Open (or reset) a form; the answer is its snapshot.",
                params: [formParam],
                result: .object([FieldSpec("form", .string), FieldSpec("fields", fieldsShape),
                                 FieldSpec("submittable", .boolean)])), handler: { $0.open($1) }, dependence: .form),
            MethodEntry(spec: MethodSpec(
                "form.input", summary: "A field's new value; its verdict follows as field events.",
                params: [formParam, FieldSpec("field", .string), FieldSpec("value", .string)],
                result: .object([FieldSpec("rev", .integer(0...Int64.max))])), handler: { $0.input($1) },
                dependence: .form),
            MethodEntry(spec: MethodSpec(
                "form.submit",
                summary: "Submit once the pending checks are done; answered with the outcome: {username, token} by the "
                    + "register and login forms, {revoked} by the password form.",
                params: [formParam],
                result: .object([.optional("username", .string), .optional("token", .string),
                                 .optional("revoked", .integer(0...Int64.max))])),
                handler: { $0.submit($1) }, dependence: .formSubmit),
            MethodEntry(spec: MethodSpec(
                "form.close", summary: "Close a form; nothing more is sent for it.",
                params: [formParam], result: .object([])), handler: { $0.close($1) }, dependence: .form),
        ]
    }
}
