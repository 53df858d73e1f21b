import RosterTestSupport
import Testing
@testable import RosterCore

/// Thousands of random interleavings of inputs, timer firings, check answers (stale ones too), live `taken`
/// and submits, checked against the contract's invariants from the client's point of view.
@Suite("Randomized interleavings")
struct RandomizedFormTests {
    /// What the client believes, built only from the snapshot and the events.
    private struct ClientView {
        struct Shown: Equatable { var state: FieldState; var code: FieldCode; var enabled: Bool; var rev: Int }
        var fields: [FieldName: Shown] = [:]
        var submittable = false
        var latestRev: [FieldName: Int] = [:]
        /// (state, code) of final events per field and rev, consecutive repeats collapsed.
        var verdicts: [FieldName: [Int: [FieldVerdict]]] = [:]
        var running = 0
        var finished = 0
        var awaitingStore = false
        var retired: [CheckToken] = []
        var sawSubmittable = false
        var sawStore = false
        var sawCodeEnabled = false
    }

    /// How much of the machine the runs reached, so a too-tame generator fails loudly.
    private struct Coverage { var submittable = 0, store = 0, stale = 0, refused = 0, codeEnabled = 0 }

    private static let values: [FieldName: [String]] = [
        .username: ["", "abc", "alice1", "alice2", "bob!23", "ＡＬＩＣＥ１", "someone@example.org"],
        .password: ["", "abc", "secret1", "secret2", "p@ssw0rd", String(repeating: "x", count: 16),
                    "correct horse battery"],
        .confirm: ["", "secret1", "secret2", "x", String(repeating: "x", count: 16), "correct horse battery"],
        .email: ["", "a@b.co", "bad", "c@d.org"],
        .current: ["", "secret1", "correct horse battery", "old"],
        .new: ["", "abc", "secret1", "secret2", "p@ssw0rd", String(repeating: "x", count: 16), "correct horse battery",
               "correct horse battery staple"],
        .code: ["", "123456", "12 34 56", "12345", "abcdef", "１２３４５６"],
    ]

    /// Values that lead towards a submittable form, picked half the time so that runs get that far.
    private static let good: [FieldName: String] = [
        .username: "alice2", .password: "correct horse battery", .confirm: "correct horse battery", .email: "",
        .current: "secret1", .new: "correct horse battery", .code: "123456",
    ]

    /// How a store answers a submit that fails: `taken` (register), the log-in answers that open or keep the
    /// code field, and a wrong password.
    private static let submitFailures: [RosterError] = [.taken(field: "username"), .codeRequired, .invalidCode,
                                                        .wrongPassword]

    @Test(arguments: [(FormName.register, Policy.Preset.seed), (.register, .hardened),
                      (.login, .seed), (.login, .hardened), (.password, .seed), (.password, .hardened)])
    func invariantsHold(form: FormName, preset: Policy.Preset) throws {
        let formSeed: UInt64 = switch form {
        case .register, .contacts: 0
        case .login: 10
        case .password: 20
        }
        var generator = SplitMix64(seed: 0x5EED_0000 &+ UInt64(preset == .seed ? 1 : 2) &+ formSeed)
        var coverage = Coverage()
        defer {
            #expect(coverage.submittable > 25 && coverage.store > 25, "runs too tame: \(coverage)")
            // Log-in under the hardened policy asks the store nothing, and the password form under the seed policy
            // asks nothing at all, so they have no tokens to go stale.
            if !(form == .login && preset == .hardened) && !(form == .password && preset == .seed) {
                #expect(coverage.stale > 50, "runs too tame: \(coverage)")
            }
            if form != .login || preset == .seed { #expect(coverage.refused > 50, "runs too tame: \(coverage)") }
            if form == .login { #expect(coverage.codeEnabled > 25, "runs too tame: \(coverage)") }
        }
        for _ in 0..<1000 {
            switch form {
            case .register:
                try run(FormDriver(RegisterForm(policy: .preset(preset), debounce: .milliseconds(500))),
                        coverage: &coverage, using: &generator)
            case .login, .contacts:
                try run(FormDriver(LoginForm(policy: .preset(preset), debounce: .milliseconds(500))),
                        coverage: &coverage, using: &generator)
            case .password:
                try run(FormDriver(PasswordForm(policy: .preset(preset), username: "alice1",
                                                debounce: .milliseconds(500))),
                        coverage: &coverage, using: &generator)
            }
        }
    }

    private func run<Rules: FormRulebook>(_ start: FormDriver<Rules>, coverage: inout Coverage,
                                         using generator: inout SplitMix64) throws {
        let fields = Rules.Field.allCases.map(\.name)
        // A wire name outside the form has no codes, so an event for it fails the listed-code check.
        let codes = { (name: FieldName) in Rules.Field(name)?.possibleCodes ?? [] }
        var driver = start
        var view = ClientView()
        for field in driver.form.snapshot.fields {
            view.fields[field.name] = .init(state: field.state, code: field.code, enabled: field.enabled, rev: 0)
            view.latestRev[field.name] = 0
            view.verdicts[field.name] = [0: [FieldVerdict(field.state, field.code)]]
        }
        let steps = Int.random(in: 20...120, using: &generator)
        for _ in 0..<steps {
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<40:
                // Half the time, work on the first enabled field that is not valid yet, as a user would.
                let next = fields.first { view.fields[$0]?.enabled == true && view.fields[$0]?.state != .valid }
                guard let field = Bool.random(using: &generator) ? next ?? fields.randomElement(using: &generator)
                        : fields.randomElement(using: &generator),
                      let value = Bool.random(using: &generator) ? Self.good[field]
                        : Self.values[field]?.randomElement(using: &generator) else { continue }
                let shownEnabled = view.fields[field]?.enabled ?? false
                do {
                    let rev = try driver.type(field, value)
                    #expect(shownEnabled, "input accepted into a field the client sees disabled")
                    let previous = view.latestRev[field] ?? 0
                    #expect(rev == previous || rev == previous + 1)
                    view.latestRev[field] = rev
                } catch {
                    #expect(error == .fieldDisabled(form: Rules.form.rawValue, field: field.rawValue))
                    #expect(!shownEnabled, "input refused in a field the client sees enabled")
                    coverage.refused += 1
                }
            case 40..<65:
                driver.advance(to: driver.now.nanoseconds / 1_000_000 + Int64.random(in: 0...700, using: &generator))
            case 65..<83:
                guard let (token, check) = driver.checks.randomElement(using: &generator) else { continue }
                driver.answer(token, Self.randomResult(for: check, using: &generator))
            case 83..<88:
                guard let token = view.retired.randomElement(using: &generator) else { continue }
                let before = driver.history.count
                driver.answerLate(token, .available)
                coverage.stale += 1
                #expect(driver.history.count == before, "a stale token produced actions")
            case 88..<94:
                driver.submit()
            case 94..<97:
                if view.awaitingStore {
                    let failure = Self.submitFailures.randomElement(using: &generator) ?? .internal
                    driver.complete(Bool.random(using: &generator) ? .success("alice1") : .failure(failure))
                    view.awaitingStore = false
                }
            default:
                if var register = driver.form as? RegisterForm {
                    let actions = Bool.random(using: &generator) ? register.usernameRegistered(canonical: "alice1")
                        : register.emailRegistered(canonical: "a@b.co")
                    if let form = register as? FormKernel<Rules> { driver.form = form }
                    driver.perform(actions)
                }
            }
            absorb(driver.take(), into: &view, codes: codes)
            checkSubmittable(view, form: Rules.form)
        }
        // Quiescence: let every timer fire and every check and submit finish.
        while !driver.timers.isEmpty || !driver.checks.isEmpty || view.awaitingStore {
            if let last = driver.timers.values.max() { driver.advance(to: last.nanoseconds / 1_000_000) }
            for (token, check) in driver.checks { driver.answer(token, Self.randomResult(for: check, using: &generator)) }
            if view.awaitingStore {
                driver.complete(.success("alice1"))
                view.awaitingStore = false
            }
            absorb(driver.take(), into: &view, codes: codes)
            checkSubmittable(view, form: Rules.form)
        }
        #expect(view.running == view.finished, "every submit is answered exactly once")
        if view.sawSubmittable { coverage.submittable += 1 }
        if view.sawCodeEnabled { coverage.codeEnabled += 1 }
        if view.sawStore { coverage.store += 1 }
        for field in fields {
            let rev = view.latestRev[field] ?? 0
            let shown = view.fields[field]
            #expect(shown?.rev == rev, "\(field) ends without an event for its latest rev")
            #expect(shown.map { FieldVerdict($0.state, $0.code).isFinal } == true, "\(field) ends not final")
            // `confirm` and `new` are judged against another field (password or new, current), so a rev of theirs
            // is judged again when that field changes.
            for (rev, verdicts) in view.verdicts[field] ?? [:] where field != .confirm && field != .new {
                // One verdict per rev; the only later change is to `taken` (live, or the store's answer).
                let settled = verdicts.count <= 1 || (verdicts.count == 2 && verdicts[1] == .invalid(.taken))
                #expect(settled, "\(field) rev \(rev) had verdicts \(verdicts)")
            }
        }
        let snapshot = driver.form.snapshot
        #expect(snapshot.submittable == view.submittable)
        for field in snapshot.fields {
            #expect(view.fields[field.name] == .init(state: field.state, code: field.code, enabled: field.enabled,
                                                     rev: field.rev))
        }
    }

    private func absorb(_ actions: [FormAction], into view: inout ClientView, codes: (FieldName) -> [FieldCode]) {
        for action in actions {
            switch action {
            case .emit(.field(_, let field, let state, let code, let enabled, let rev)):
                #expect(rev == view.latestRev[field], "\(field) event for rev \(rev), latest is \(view.latestRev[field] ?? -1)")
                let shown = ClientView.Shown(state: state, code: code, enabled: enabled, rev: rev)
                #expect(view.fields[field] != shown, "\(field) repeated an identical event for rev \(rev)")
                #expect(codes(field).contains(code), "\(field) sent unlisted code \(code)")
                view.fields[field] = shown
                if field == .code && enabled { view.sawCodeEnabled = true }
                let verdict = FieldVerdict(state, code)
                if verdict.isFinal, view.verdicts[field, default: [:]][rev, default: []].last != verdict {
                    view.verdicts[field, default: [:]][rev, default: []].append(verdict)
                }
            case .emit(.form(_, let submittable)):
                #expect(submittable != view.submittable, "form event without a change")
                view.submittable = submittable
                view.sawSubmittable = view.sawSubmittable || submittable
            case .emit(.submit(_, let state, _)):
                if state == .running { view.running += 1 }
            case .finishSubmit:
                view.finished += 1
            case .register, .login, .changePassword:
                view.awaitingStore = true
                view.sawStore = true
            case .cancelCheck(let token):
                view.retired.append(token)
            case .schedule, .cancelTimer, .startCheck:
                break
            }
        }
    }

    /// Submittable may be true only when every field's latest input has its final verdict, and those agree.
    private func checkSubmittable(_ view: ClientView, form: FormName) {
        guard view.submittable else { return }
        for (field, shown) in view.fields {
            #expect(shown.rev == view.latestRev[field], "submittable with \(field) unchecked")
            #expect(FieldVerdict(shown.state, shown.code).isFinal, "submittable with \(field) \(shown.state)")
        }
        switch form {
        case .register:
            #expect(view.fields[.username]?.state == .valid && view.fields[.password]?.state == .valid
                    && view.fields[.confirm]?.state == .valid && view.fields[.email]?.state != .invalid)
        case .login:
            #expect(view.fields[.username]?.state != .empty && view.fields[.password]?.state == .valid)
            if view.fields[.code]?.enabled == true { #expect(view.fields[.code]?.state == .valid) }
        case .password:
            #expect(view.fields[.current]?.state == .valid && view.fields[.new]?.state == .valid
                    && view.fields[.confirm]?.state == .valid)
        case .contacts:
            break
        }
    }

    private static func randomResult(for check: Check, using generator: inout SplitMix64) -> CheckResult {
        let roll = Int.random(in: 0..<10, using: &generator)
        if roll == 0 { return .failed }
        switch check {
        case .usernameAvailable, .emailAvailable: return roll < 8 ? .available : .taken
        case .accountExists: return roll < 8 ? .exists : .missing
        case .passwordQuality: return roll < 8 ? .qualityPassed : .qualityFailed(reason: "dictionary_word")
        }
    }
}
