/// Runs one sans-I/O machine: feeds it facts one at a time and performs the actions each step gives back.
///
/// The one rule every machine in the daemon shares (h11's: everything that affects the machine lives in it):
/// a fact that arrives while actions are being performed (an answer that comes back before its call returns, a
/// timer, a second input from the same stack) is queued, and stepped only once every action of the step under
/// way has been performed. Actions therefore go out in the order the machine gave them, whether a call answers
/// at once (from memory) or later (from a worker or the network).
///
/// After `stop()` no queued fact is stepped and no further action is performed, not even the rest of the
/// current step's: what a stopped machine asked for no longer matters.
public final class MachineDriver<Fact, Action> {
    private let step: (Fact) -> [Action]
    /// Set once, before the first fact: performs one action and feeds its answers back through the driver given.
    /// A completion that waits for an answer holds the driver; when nothing does, it goes.
    public var perform: (Action, MachineDriver) -> Void = { _, _ in }
    private var facts: [Fact] = []
    private var head = 0
    private var isRunning = false
    /// Whether `stop()` was called.
    public private(set) var isStopped = false

    /// A driver over `step`, the machine's one entry: a fact in, its actions out.
    public init(step: @escaping (Fact) -> [Action]) {
        self.step = step
    }

    /// Steps `fact` now, or, if actions are being performed further up the stack, once they all are.
    public func feed(_ fact: Fact) {
        guard !isStopped else { return }
        facts.append(fact)
        run {}
    }

    /// Performs actions the machine gave outside a step (its first ones, from its initializer), then every fact
    /// that arrived meanwhile.
    public func perform(_ actions: [Action]) {
        guard !isStopped else { return }
        run { performAll(actions) }
    }

    /// Runs `body` (work that may feed facts, such as delivering an input to the machine's owner), then steps
    /// every fact it queued; inside a run already under way, `body` runs and its facts wait for that run.
    public func run(_ body: () -> Void) {
        guard !isRunning else { return body() }
        isRunning = true
        defer { isRunning = false }
        body()
        while !isStopped, head < facts.count {
            let fact = facts[head]
            head += 1
            if head == facts.count {
                facts.removeAll(keepingCapacity: true)
                head = 0
            }
            performAll(step(fact))
        }
    }

    /// Drops every queued fact and performs nothing more.
    public func stop() {
        isStopped = true
        facts = []
        head = 0
    }

    /// Facts queued and not yet stepped.
    public var pendingFacts: Int { facts.count - head }

    private func performAll(_ actions: [Action]) {
        for action in actions {
            guard !isStopped else { return }
            perform(action, self)
        }
    }
}
