import RosterCore
import RosterRuntime
import RosterProtocol

/// `form.*`: the seeds' screens, one view model per form per connection, validation streamed as events.
extension Server {
    func formMethods() -> [Method] {
        let formParam = FieldSpec("form", .string)
        let fieldsShape = Shape.array(.described("{name, enabled, state, code, message, rev}"))
        return [
            Method(spec: MethodSpec(
                "form.open", summary: "Open (or reset) a form; the answer is its snapshot.",
                params: [formParam],
                result: .object([FieldSpec("form", .string), FieldSpec("fields", fieldsShape),
                                 FieldSpec("submittable", .boolean)])), handler: Server.formOpen, dependence: .form),
            Method(spec: MethodSpec(
                "form.input", summary: "A field's new value; its verdict follows as field events.",
                params: [formParam, FieldSpec("field", .string), FieldSpec("value", .string)],
                result: .object([FieldSpec("rev", .integer(0...Int64.max))])), handler: Server.formInput,
                dependence: .form),
            Method(spec: MethodSpec(
                "form.submit", summary: "Submit once the pending checks are done; answered with the outcome.",
                params: [formParam],
                result: .object([FieldSpec("username", .string), FieldSpec("token", .string)])), handler: Server.formSubmit,
                dependence: .formSubmit),
            Method(spec: MethodSpec(
                "form.close", summary: "Close a form; nothing more is sent for it.",
                params: [formParam], result: .object([])), handler: Server.formClose, dependence: .form),
        ]
    }

    private func formName(_ call: Call) throws(RosterError) -> FormName {
        let name = call.params.string("form") ?? ""
        guard let form = FormName(rawValue: name) else { throw .unknownForm(form: name) }
        return form
    }

    private func formOpen(_ call: Call) {
        let form: FormName
        do { form = try formName(call) } catch { return call.fail(error) }
        let session = call.session
        session.forms.removeValue(forKey: form)?.close()
        let policy = config.policy
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

    /// All a register or log-in form of `connection` gets to work with.
    private func formEnvironment(_ connection: Connection) -> FormEnvironment {
        FormEnvironment(scheduler: loop, accounts: accounts, session: ConnectionFormSession(server: self, connection: connection))
    }

    /// What a contacts form opened on `connection` is given: the loop's clock, the contacts, the connection as its
    /// sink, the session's throttle under the policy in force, and the connection's charge (its user is the form's).
    private func contactsFormEnvironment(for connection: Connection) -> ContactsFormEnvironment {
        let session = connection.session
        return ContactsFormEnvironment(
            scheduler: loop, contacts: contacts, sink: ConnectionFormSession(server: self, connection: connection),
            throttle: { [unowned self, unowned session] in session.throttle(under: self.config.policy) },
            charge: connection.queueCharge, logger: logger)
    }

    private func runningForm(for call: Call) throws(RosterError) -> (FormName, RunningForm) {
        let form = try formName(call)
        guard let runner = call.session.forms[form] else { throw .formNotOpen(form: form.rawValue) }
        return (form, runner)
    }

    private func formInput(_ call: Call) {
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

    private func formSubmit(_ call: Call) {
        do throws(RosterError) {
            let (form, runner) = try runningForm(for: call)
            // The register and log-in forms log the session in when they succeed.
            if form != .contacts { call.beginAuthChange() }
            runner.submit(call)
        } catch {
            call.fail(error)
        }
    }

    private func formClose(_ call: Call) {
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
        .object([
            ("form", .string(snapshot.form.rawValue)),
            ("fields", .array(snapshot.fields.map { field in
                let key = "\(field.name.rawValue).\(field.code.rawValue)"
                return .object([
                    ("name", .string(field.name.rawValue)), ("enabled", .bool(field.enabled)),
                    ("state", .string(field.state.rawValue)), ("code", .string(field.code.rawValue)),
                    ("message", .string(MessageCatalog.text(key, locale: locale,
                                                            arguments: field.name.messageArguments(policy: config.policy)))),
                    ("rev", .int(field.rev)),
                ])
            })),
            ("submittable", .bool(snapshot.submittable)),
        ])
    }
}
