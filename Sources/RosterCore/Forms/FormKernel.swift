// FormKernel — the register, log-in and password forms' one machine, sans I/O: the timing and emission every
// form shares, over a rulebook that says what its own fields mean (protocol.md "Forms"; the seeds' view model).
//
// THEORY OF OPERATION
//   Every field is a little pipeline: input → debounce → rules → (check) → verdict. The seeds' operators are
//   properties of it:
//   • distinctUntilChanged: an input equal to the field's previous input is accepted silently, same rev.
//   • debounce: each accepted input bumps the rev and (re)schedules the field's timer at now + debounce;
//     the runtime replaces an armed timer, and a fire before the deadline is ignored anyway.
//   • rules: when the timer fires, local rules give a verdict at once, or a check is started with a fresh
//     token and the field shows `validating` (seed 001's 校验中…). Quality checks show it too: the wait is
//     real, and a field must have something current to show when its enablement flips.
//   • flatMapLatest: a newer input cancels the outstanding token; an answer for any token the form is not
//     waiting for is dropped with no action.
//   • combineLatest: enablement and submittable are pure functions of the fields' verdicts. Enablement follows
//     the latest *final* verdict (a neighbour being re-checked does not disable you); submittable counts only
//     verdicts for the current input, so an unchecked input is never submittable.
//   After every fact the machine compares what each field would show — (state, code, enabled, rev) — with
//   what it last told the client and emits only differences, never for an older rev; `form` goes out only
//   when submittable flips. A field still debouncing has nothing current to show, so if its enablement
//   flips it is judged at once (timer cancelled) and the flip goes out with its current rev.
//
//   Submit: `running`, then every pending debounce is flushed (timer cancelled, rules run now). While checks
//   are out the submit waits, and input that arrives meanwhile is judged at once (no debounce), because the
//   submit is for the latest input. When nothing is pending: submittable → the rulebook's submit action
//   (`.register`, `.login` or `.changePassword`); else `failed` not_submittable and
//   `.finishSubmit(.failure(.notSubmittable))`. The store's answer comes back through `submitCompleted`:
//   `succeeded` or `failed` (`SubmitCode.failure`) and `.finishSubmit`. A `taken` from the store also marks
//   that field taken. A submit while one runs joins it: no actions, and the runtime answers every waiting
//   request with the one `.finishSubmit`.
//
//   Live taken: `accountRegistered` turns a field that holds the new account's key (valid, or being
//   checked) into invalid/taken, which disables what depends on it and drops submittable. The form's own
//   successful submit is exempt.
//
// WHERE EACH CONCERN LIVES
//   FormKernel.swift         this machine: the facts a runner feeds a form and the actions it gets back
//   RegisterForm.swift       `RegisterForm`: the register form's rules and rulebook
//   LoginForm.swift          `LoginForm`: the log-in form's rules and rulebook
//   PasswordForm.swift       `PasswordForm`: the password form's rules and rulebook (a logged-in session's
//                            password change)
//   FormRulebook.swift       what a form must say about its own fields for the kernel to run it
//   FormField.swift          a form's own field enum (RegisterField.swift, LoginField.swift, PasswordField.swift)
//                            and its codes
//   FormAndFieldNames.swift  the wire names of forms and fields, which the forms map at their edge
//   FieldSlot.swift          one field's input, rev, phase and what its client was last told
//   FieldTable.swift         a form's slots, keyed by its own field enum
//   Check.swift              the questions only the runtime can answer, their answers and verdicts
//   CheckToken.swift         the token that lets a late answer be dropped
//   FormAction.swift         what a form asks the runtime to do (timers, checks, register, log in, change the
//                            password, answer)
//   FormEvent.swift          what a form tells its client (field, form and submit events)
//   SubmitCode.swift         submit codes, and the one table from an error to the code it shows
//   FormSnapshot.swift       the `form.open` answer
//   FormEventText.swift      an event's localized message and its placeholder values
//   FormMessages.swift       the texts of every field and submit code, per locale
// Field verdicts and codes (FieldVerdict, FieldCode) and the per-field rules are in ../Rules; the contacts
// form, a throttle rather than a set of fields, is ../Contacts/ContactsForm.swift.

/// A register, log-in or password form (`RegisterForm`, `LoginForm`, `PasswordForm`): facts in (input, timers,
/// check answers, submit), actions out. The rulebook decides what values mean, the kernel when and what is said.
///
/// The kernel is also the form's edge: facts arrive with wire names (`FieldName`, `FormTimer`) and events leave
/// with them, while everything inside, the table and the rulebook, speaks the form's own `Rules.Field`.
///
/// The runners in RosterServer hold the kernel through their own generic parameter, so a call from them runs the
/// unspecialized kernel: metadata looked up and fields copied through value witnesses on every access, which
/// cost a third more instructions per keystroke (`tools/instructions-per-request.sh --keystroke`). Each public
/// entry point therefore names the three rulebooks in `@_specialize`: called generically, it checks the type and
/// jumps to the copy compiled for that form.
public struct FormKernel<Rules: FormRulebook>: Sendable {
    /// The form's own fields; `inputReceived` answers `unknown_field` for a wire name outside them.
    public typealias Field = Rules.Field

    /// Where a `form.submit` is.
    enum SubmitPhase: Equatable, Sendable {
        case idle
        /// `running` was sent; pending debounces were flushed and their checks are still out.
        case flushing
        /// The submit action is out; the committed values it used are kept to place a `taken`.
        case awaiting(submitted: [Field: Secret])
    }

    /// Actions of one step, grouped so the client hears about a state before the runtime acts on it and the
    /// submit answer always comes last.
    private struct Step {
        var events: [FormAction] = []
        var effects: [FormAction] = []
        var submits: [FormAction] = []
        var all: [FormAction] { events + effects + submits }
    }

    /// The form's name on the wire.
    public static var form: FormName { Rules.form }
    /// Every submit code this form can send; each has a message in every locale.
    public static var possibleSubmitCodes: [SubmitCode] { [.running, .succeeded, .failed] + Rules.failureCodes }

    var rules: Rules
    /// Applies from the next input on.
    public var debounce: Duration
    private(set) var table: FieldTable<Field>
    private(set) var submittable = false
    private(set) var submit = SubmitPhase.idle
    private var nextToken: UInt64
    /// The account this form itself created; its own registration must not read back as `taken`.
    private var completedIdentifier: String?

    init(rules: Rules, debounce: Duration, firstToken: UInt64) {
        self.rules = rules
        self.debounce = debounce
        self.nextToken = firstToken
        var table = FieldTable<Field> { _ in false }
        for field in table.order {
            table[field].published.enabled = rules.isEnabled(field, in: table)
        }
        self.table = table
        self.submittable = rules.isSubmittable(table)
    }

    /// The policy new input is judged under.
    public var policy: Policy { rules.policy }

    /// The `form.open` answer.
    public var snapshot: FormSnapshot {
        FormSnapshot(form: Rules.form, fields: table.order.map { field in
            let published = table[field].published
            return FieldSnapshot(name: field.name, enabled: published.enabled, state: published.verdict.state,
                                 code: published.verdict.code, rev: published.rev)
        }, submittable: submittable)
    }

    /// Whether a submit is out (flushing or waiting for the store).
    public var isSubmitting: Bool { submit != .idle }

    // MARK: Facts

    /// Throws `unknownField` for a field this form lacks and `fieldDisabled` for a disabled one.
    @_specialize(where Rules == RegisterRulebook)
    @_specialize(where Rules == LoginRulebook)
    @_specialize(where Rules == PasswordRulebook)
    public mutating func inputReceived(field name: FieldName, value: String, now: Instant) throws(RosterError)
        -> (rev: Int, actions: [FormAction]) {
        let form = Rules.form.rawValue
        guard let field = Field(name) else { throw .unknownField(form: form, field: name.rawValue) }
        guard rules.isEnabled(field, in: table) else { throw .fieldDisabled(form: form, field: name.rawValue) }
        var slot = table[field]
        // distinctUntilChanged: Swift's == treats canonically equivalent text as equal, as the rules do.
        guard slot.input.exposed != value else { return (slot.rev, []) }
        var step = Step()
        if let token = slot.token { step.effects.append(.cancelCheck(token)) }
        if let token = slot.recheck { step.effects.append(.cancelCheck(token)) }
        slot.recheck = nil
        slot.rev += 1
        slot.input = Secret(value)
        slot.shown = nil
        if submit == .flushing {
            // A submit is waiting for the latest input, so it is judged at once instead of debounced.
            if slot.isDebouncing { step.effects.append(.cancelTimer(.debounce(field.name))) }
            slot.phase = .settled
            table[field] = slot
            commit(field, &step)
        } else {
            let deadline = now + debounce
            slot.phase = .debouncing(until: deadline)
            table[field] = slot
            step.effects.append(.schedule(.debounce(field.name), at: deadline))
        }
        finish(&step)
        return (table[field].rev, step.all)
    }

    @_specialize(where Rules == RegisterRulebook)
    @_specialize(where Rules == LoginRulebook)
    @_specialize(where Rules == PasswordRulebook)
    public mutating func timerFired(_ timer: FormTimer, now: Instant) -> [FormAction] {
        switch timer {
        case .debounce(let name):
            // A timer that was moved but fired at its old deadline anyway must not cut the debounce short.
            guard let field = Field(name), case .debouncing(let until) = table[field].phase, now >= until else {
                return []
            }
            var step = Step()
            commit(field, &step)
            finish(&step)
            return step.all
        }
    }

    /// `now` is unused today; every fact carries the loop's time so that a timed rule needs no new API.
    @_specialize(where Rules == RegisterRulebook)
    @_specialize(where Rules == LoginRulebook)
    @_specialize(where Rules == PasswordRulebook)
    public mutating func checkCompleted(token: CheckToken, result: CheckResult, now: Instant) -> [FormAction] {
        if let field = table.order.first(where: { table[$0].recheck == token }) {
            return recheckCompleted(field, result: result)
        }
        guard let field = table.order.first(where: { table[$0].token == token }),
              case .checking(_, let check) = table[field].phase else { return [] }
        settle(field, check.verdict(for: result))
        var step = Step()
        finish(&step)
        return step.all
    }

    @_specialize(where Rules == RegisterRulebook)
    @_specialize(where Rules == LoginRulebook)
    @_specialize(where Rules == PasswordRulebook)
    public mutating func submitRequested(now: Instant) -> [FormAction] {
        // A second submit joins the running one: the runtime answers all waiting requests with one outcome.
        guard submit == .idle else { return [] }
        var step = Step()
        step.events.append(.emit(.submit(form: Rules.form, state: .running, code: .running)))
        submit = .flushing
        for field in table.order where table[field].isDebouncing {
            step.effects.append(.cancelTimer(.debounce(field.name)))
            commit(field, &step)
        }
        finish(&step)
        return step.all
    }

    /// The store's answer to the submit action (`.register`, `.login` or `.changePassword`): the canonical
    /// username, or why it failed.
    @_specialize(where Rules == RegisterRulebook)
    @_specialize(where Rules == LoginRulebook)
    @_specialize(where Rules == PasswordRulebook)
    public mutating func submitCompleted(_ result: Result<String, RosterError>) -> [FormAction] {
        guard case .awaiting(let submitted) = submit else { return [] }
        submit = .idle
        var step = Step()
        switch result {
        case .success(let identifier):
            completedIdentifier = identifier
            step.events.append(.emit(.submit(form: Rules.form, state: .succeeded, code: .succeeded)))
            step.submits.append(.finishSubmit(.success(rules.outcome(identifier))))
        case .failure(let error):
            rules.submitFailed(error, submitted: submitted)
            let code = SubmitCode.failure(error, offered: Rules.failureCodes)
            step.events.append(.emit(.submit(form: Rules.form, state: .failed, code: code)))
            // A `taken` names its field by wire name; the field turns as if registered live.
            if case .taken(let wireName) = error, let name = FieldName(rawValue: wireName), let field = Field(name),
               let value = submitted[field], let key = rules.takenKey(of: field, value.exposed) {
                markTaken(field, key, &step)
            }
            step.submits.append(.finishSubmit(.failure(error)))
        }
        finish(&step)
        return step.all
    }

    /// Any session registered this account (canonical username and email): a field holding what the account now
    /// holds turns `taken`, the username's field first.
    @_specialize(where Rules == RegisterRulebook)
    @_specialize(where Rules == LoginRulebook)
    @_specialize(where Rules == PasswordRulebook)
    public mutating func accountRegistered(username: String, email: String?) -> [FormAction] {
        var actions: [FormAction] = []
        for field in table.order {
            guard let key = rules.registeredKey(of: field, username: username, email: email) else { continue }
            actions += registered(field, canonical: key)
        }
        return actions
    }

    /// Someone (any session) registered an account whose `field` is keyed `canonical` (see `takenKey`).
    mutating func registered(_ field: Field, canonical: String) -> [FormAction] {
        guard canonical != completedIdentifier else { return [] }
        var step = Step()
        markTaken(field, canonical, &step)
        finish(&step)
        return step.all
    }

    /// The store may have changed under what the form shows (`change`): every field whose check it concerns is
    /// asked again. A settled verdict stays shown while its check is out, so a field whose answer is unchanged
    /// says nothing; a check already out may have been answered before the change, so it is replaced by a new
    /// one; a field still debouncing will ask anyway.
    @_specialize(where Rules == RegisterRulebook)
    @_specialize(where Rules == LoginRulebook)
    @_specialize(where Rules == PasswordRulebook)
    public mutating func storeChanged(_ change: StoreChange) -> [FormAction] {
        // A form whose submit succeeded is done: its own account would read back as `taken`.
        guard completedIdentifier == nil else { return [] }
        var step = Step()
        for field in table.order {
            guard case .check(let check) = rules.evaluate(field, in: table), change.concerns(check) else { continue }
            switch table[field].phase {
            case .debouncing:
                continue
            case .checking(let token, _):
                step.effects.append(.cancelCheck(token))
                judge(field, &step)
            case .settled:
                if let token = table[field].recheck { step.effects.append(.cancelCheck(token)) }
                let token = CheckToken(nextToken)
                nextToken &+= 1
                table[field].recheck = token
                step.effects.append(.startCheck(check, token: token))
            }
        }
        finish(&step)
        return step.all
    }

    /// A re-check's answer replaces the verdict it was asked about; a failed one tells nothing new, so the verdict
    /// stands.
    private mutating func recheckCompleted(_ field: Field, result: CheckResult) -> [FormAction] {
        table[field].recheck = nil
        guard result != .failed, table[field].phase == .settled,
              case .check(let check) = rules.evaluate(field, in: table) else { return [] }
        settle(field, check.verdict(for: result))
        var step = Step()
        finish(&step)
        return step.all
    }

    /// New rules judge new input; verdicts already given stand.
    @_specialize(where Rules == RegisterRulebook)
    @_specialize(where Rules == LoginRulebook)
    @_specialize(where Rules == PasswordRulebook)
    public mutating func policyChanged(_ policy: Policy) {
        rules.policy = policy
    }

    /// Cancels every timer and check; the form is then discarded (reopening makes a new one).
    @_specialize(where Rules == RegisterRulebook)
    @_specialize(where Rules == LoginRulebook)
    @_specialize(where Rules == PasswordRulebook)
    public mutating func close() -> [FormAction] {
        var step = Step()
        for field in table.order {
            if let token = table[field].recheck { step.effects.append(.cancelCheck(token)) }
            table[field].recheck = nil
            switch table[field].phase {
            case .settled: break
            case .debouncing: step.effects.append(.cancelTimer(.debounce(field.name)))
            case .checking(let token, _): step.effects.append(.cancelCheck(token))
            }
            table[field].phase = .settled
        }
        return step.all
    }

    // MARK: Machinery

    /// The debounced value becomes the judged one; fields judged against it are judged again (combineLatest).
    /// A dependent still debouncing is judged when its timer fires, against the value committed now; one being
    /// checked is judged again, as its check was asked under the old value (a quality check for a new password
    /// says nothing of `same_as_current`).
    private mutating func commit(_ field: Field, _ step: inout Step) {
        table[field].committed = table[field].input
        judge(field, &step)
        for dependent in rules.dependents(of: field) {
            switch table[dependent].phase {
            case .debouncing: continue
            case .settled: judge(dependent, &step)
            case .checking(let token, _):
                step.effects.append(.cancelCheck(token))
                judge(dependent, &step)
            }
        }
    }

    private mutating func judge(_ field: Field, _ step: inout Step) {
        table[field].recheck = nil
        switch rules.evaluate(field, in: table) {
        case .settled(let verdict):
            settle(field, verdict)
        case .check(let check):
            let token = CheckToken(nextToken)
            nextToken &+= 1
            table[field].phase = .checking(token, check)
            table[field].shown = .validating
            step.effects.append(.startCheck(check, token: token))
        }
    }

    private mutating func settle(_ field: Field, _ verdict: FieldVerdict) {
        // A re-check still out asked about what this verdict replaces.
        table[field].recheck = nil
        table[field].phase = .settled
        table[field].shown = verdict
        if verdict.isFinal { table[field].lastFinal = verdict }
    }

    /// Live `taken`: only a value that is, or is being checked as, acceptable turns; pending input is left to
    /// its own check, which will ask the store anyway.
    private mutating func markTaken(_ field: Field, _ canonical: String, _ step: inout Step) {
        guard rules.takenKey(of: field, table[field].input.exposed) == canonical else { return }
        switch table[field].phase {
        case .debouncing:
            return
        case .settled:
            guard table[field].shown?.state == .valid else { return }
        case .checking(let token, _):
            step.effects.append(.cancelCheck(token))
        }
        settle(field, .invalid(.taken))
    }

    /// Emits what changed, then lets a waiting submit decide.
    private mutating func finish(_ step: inout Step) {
        reconcile(&step)
        guard submit == .flushing,
              !table.order.contains(where: { table[$0].token != nil || table[$0].isDebouncing }) else { return }
        if rules.isSubmittable(table) {
            let submitted = table.order.map { ($0, table[$0].committed) }
            submit = .awaiting(submitted: Dictionary(uniqueKeysWithValues: submitted))
            step.submits.append(rules.submitAction(table))
        } else {
            submit = .idle
            step.events.append(.emit(.submit(form: Rules.form, state: .failed, code: .notSubmittable)))
            step.submits.append(.finishSubmit(.failure(.notSubmittable(form: Rules.form.rawValue))))
        }
    }

    private mutating func reconcile(_ step: inout Step) {
        // A debouncing field whose enablement flips is judged now, so the flip can be told with its current rev
        // (an event for an older rev would be stale). Each pass settles one more field, so this ends.
        while let field = table.order.first(where: {
            table[$0].isDebouncing && rules.isEnabled($0, in: table) != table[$0].published.enabled
        }) {
            step.effects.append(.cancelTimer(.debounce(field.name)))
            commit(field, &step)
        }
        for field in table.order {
            guard let shown = table[field].shown else { continue }
            let published = FieldSlot.Published(verdict: shown, enabled: rules.isEnabled(field, in: table),
                                                rev: table[field].rev)
            guard published != table[field].published else { continue }
            table[field].published = published
            step.events.append(.emit(.field(form: Rules.form, field: field.name, state: shown.state, code: shown.code,
                                            enabled: published.enabled, rev: published.rev)))
        }
        let now = rules.isSubmittable(table)
        if now != submittable {
            submittable = now
            step.events.append(.emit(.form(form: Rules.form, submittable: now)))
        }
    }
}
