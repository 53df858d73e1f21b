/// The timing and emission half shared by `RegisterForm`, `LoginForm` and `PasswordForm`; the theory of operation is at the
/// top of RegisterForm.swift. The rulebook decides what values mean, this decides when and what is said.
///
/// The kernel is also the form's edge: facts arrive with wire names (`FieldName`, `FormTimer`) and events leave
/// with them, while everything inside, the table and the rulebook, speaks the form's own `Rules.Field`.
struct FormKernel<Rules: FormRulebook>: Sendable {
    typealias Field = Rules.Field

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

    var rules: Rules
    var debounce: Duration
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

    var snapshot: FormSnapshot {
        FormSnapshot(form: Rules.form, fields: table.order.map { field in
            let published = table[field].published
            return FieldSnapshot(name: field.name, enabled: published.enabled, state: published.verdict.state,
                                 code: published.verdict.code, rev: published.rev)
        }, submittable: submittable)
    }

    var isSubmitting: Bool { submit != .idle }

    // MARK: Facts

    mutating func input(_ name: FieldName, _ value: String, now: Instant) throws(RosterError)
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

    mutating func timerFired(_ timer: FormTimer, now: Instant) -> [FormAction] {
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

    mutating func checkCompleted(token: CheckToken, result: CheckResult) -> [FormAction] {
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

    mutating func submitRequested() -> [FormAction] {
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

    mutating func submitCompleted(_ result: Result<String, RosterError>) -> [FormAction] {
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
    mutating func storeChanged(_ change: StoreChange) -> [FormAction] {
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

    mutating func close() -> [FormAction] {
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
