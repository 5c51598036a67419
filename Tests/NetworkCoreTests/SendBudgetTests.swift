import NetworkCore
import Testing

/// When a send may complete as it is taken, on the value type that decides it.
@Suite("Core.SendBudget")
struct SendBudgetTests {
    private let chunk = 64 * 1024

    private func openBudget() -> SendBudget {
        var budget = SendBudget()
        budget.setOpen(true)
        return budget
    }

    @Test func nothingCompletesEarlyBeforeTheFlowIsReady() {
        var budget = SendBudget()
        let admission = budget.admit(bytes: 10, hasCompletion: true, closesWrite: false)
        #expect(admission == .init(counted: false, completeNow: false))
        #expect(budget.unwritten == 0)
        #expect(budget.owedCompletions == 1)
    }

    @Test func sendsCompleteEarlyUntilTheHighWaterMarkThenWait() {
        var budget = openBudget()
        let early = SendBudget.highWater / chunk
        for index in 0..<early {
            let r1 = budget.admit(bytes: chunk, hasCompletion: true, closesWrite: false).completeNow
            #expect(r1, "send \(index)")
        }
        #expect(budget.unwritten == SendBudget.highWater)
        let full = budget.admit(bytes: chunk, hasCompletion: true, closesWrite: false)
        #expect(full == .init(counted: true, completeNow: false))
        #expect(budget.owedCompletions == 1)

        // The loop writes everything; the owed completion is called.
        for _ in 0..<early { budget.settle(bytes: chunk, counted: true, calledCompletion: false) }
        let r2 = budget.admit(bytes: 1, hasCompletion: true, closesWrite: false).completeNow
        #expect(r2 == false,
                "a completion is still owed: a later one must not overtake it")
        budget.settle(bytes: chunk, counted: true, calledCompletion: true)
        budget.settle(bytes: 1, counted: true, calledCompletion: true)
        #expect(budget.unwritten == 0)
        #expect(budget.owedCompletions == 0)
        let r3 = budget.admit(bytes: 1, hasCompletion: true, closesWrite: false).completeNow
        #expect(r3)
    }

    @Test func oneHugeSendCompletesEarlyWhenTheBufferIsEmpty() {
        var budget = openBudget()
        let r4 = budget.admit(bytes: 100 << 20, hasCompletion: true, closesWrite: false).completeNow
        #expect(r4)
        let r5 = budget.admit(bytes: 1, hasCompletion: true, closesWrite: false).completeNow
        #expect(r5 == false)
    }

    @Test func sendsWithoutCompletionCountButOweNothing() {
        var budget = openBudget()
        let admission = budget.admit(bytes: chunk, hasCompletion: false, closesWrite: false)
        #expect(admission == .init(counted: true, completeNow: false))
        #expect(budget.owedCompletions == 0)
        #expect(budget.unwritten == chunk)
    }

    @Test func aFinalSendWaitsForItsWriteAndEndsEarlyCompletion() {
        var budget = openBudget()
        let final = budget.admit(bytes: 3, hasCompletion: true, closesWrite: true)
        #expect(final == .init(counted: true, completeNow: false))
        let after = budget.admit(bytes: 3, hasCompletion: true, closesWrite: false)
        #expect(after == .init(counted: false, completeNow: false), "sends after the final one must learn EPIPE from the loop")
    }

    @Test func cancelEndsEarlyCompletionEvenIfTheLoopStillSaysReady() {
        var budget = openBudget()
        budget.close()
        budget.setOpen(true)
        let r6 = budget.admit(bytes: 3, hasCompletion: true, closesWrite: false).completeNow
        #expect(r6 == false)
    }

    @Test func leavingReadyEndsEarlyCompletion() {
        var budget = openBudget()
        budget.setOpen(false)
        let r7 = budget.admit(bytes: 3, hasCompletion: true, closesWrite: false)
        #expect(r7 == .init(counted: false, completeNow: false))
    }
}
