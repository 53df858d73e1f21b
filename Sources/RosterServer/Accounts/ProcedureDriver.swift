/// Steps one procedure (`Registration`, `LogIn`) with the answers to its effects, one fact at a time. A storage
/// call may answer before it returns (from memory) or later (from a worker): a fact that arrives while a step's
/// effects are still being performed waits until all of them are, so effects go out in the order the procedure
/// gave them either way.
final class ProcedureDriver<Fact, Effect> {
    private let step: (Fact) -> [Effect]
    /// Set once, right after `init`: performs an effect and feeds its answer back into the driver it is given.
    /// Completions that wait for an answer hold the driver; nothing else does, so it goes once the last has run.
    var perform: (Effect, ProcedureDriver) -> Void = { _, _ in }
    private var facts: [Fact] = []
    private var isStepping = false

    init(step: @escaping (Fact) -> [Effect]) {
        self.step = step
    }

    /// Performs the procedure's first effects.
    func start(_ effects: [Effect]) {
        isStepping = true
        for effect in effects { perform(effect, self) }
        drain()
    }

    /// The answer to an effect; stepped now, or once the effects under way are all performed.
    func feed(_ fact: Fact) {
        facts.append(fact)
        guard !isStepping else { return }
        isStepping = true
        drain()
    }

    private func drain() {
        while !facts.isEmpty {
            for effect in step(facts.removeFirst()) { perform(effect, self) }
        }
        isStepping = false
    }
}
