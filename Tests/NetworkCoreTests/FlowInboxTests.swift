import NetworkCore
import NetworkSystem
import Testing

/// When the inbox wakes the event loop, on the value type that decides it.
@Suite("Core.FlowInbox")
struct FlowInboxTests {
    @Test func theFirstOperationWakesTheLoopAndLaterOnesRideAlong() {
        var inbox = FlowInbox<Int>()
        let r1 = inbox.append(1)
        #expect(r1)
        let r2 = inbox.append(2)
        #expect(!r2)
        let r3 = inbox.take()
        #expect(r3 == [1, 2])
        let r4 = inbox.append(3)
        #expect(r4, "after a drain the next operation wakes the loop again")
    }

    @Test func aBatchHoldsTheWakeUntilItEnds() {
        var inbox = FlowInbox<Int>()
        inbox.beginBatch()
        let r5 = inbox.append(1)
        #expect(!r5)
        let r6 = inbox.append(2)
        #expect(!r6)
        let r7 = inbox.endBatch()
        #expect(r7)
        let r8 = inbox.take()
        #expect(r8 == [1, 2])
        inbox.beginBatch()
        let r9 = inbox.endBatch()
        #expect(!r9, "an empty batch wakes nobody")
    }

    @Test func sendsFromACompletionHandlerWakeTheLoopWhenItReturns() {
        var inbox = FlowInbox<Int>()
        inbox.handlerStarts(early: false)
        let r10 = inbox.append(1)
        #expect(!r10)
        let r11 = inbox.handlerEnded()
        #expect(r11)
        inbox.handlerStarts(early: false)
        let r12 = inbox.handlerEnded()
        #expect(!r12, "nothing queued, nothing to wake for")
    }

    @Test func aChainOfEarlyCompletionsHoldsTheWakeUpToItsLimit() {
        var inbox = FlowInbox<Int>()
        inbox.budget.setOpen(true)
        // The first send, from outside any handler, wakes the loop at once.
        let r13 = inbox.admitSend(bytes: 10, hasCompletion: true, queuesHandler: true, closesWrite: false).completeNow
        #expect(r13)
        let r14 = inbox.append(0)
        #expect(r14)
        let r15 = inbox.take()
        #expect(r15 == [0])
        inbox.budget.settle(bytes: 10, counted: true, calledCompletion: false)

        var woke = false
        var links = 0
        while !woke {
            links += 1
            inbox.handlerStarts(early: true)
            // Each handler sends the next tiny message, which completes early too.
            let r16 = inbox.admitSend(bytes: 1, hasCompletion: true, queuesHandler: true, closesWrite: false).completeNow
            #expect(r16)
            let r17 = inbox.append(links)
            #expect(!r17)
            woke = inbox.handlerEnded()
            #expect(links <= FlowInbox<Int>.maxChain + 1, "the chain must not hold the wake for ever")
        }
        #expect(links == FlowInbox<Int>.maxChain + 1)
        let r18 = inbox.take()
        #expect(r18.count == links)
    }

    @Test func aChainEndsWithAWakeWhenTheLastHandlerSendsNothingEarly() {
        var inbox = FlowInbox<Int>()
        inbox.budget.setOpen(true)
        _ = inbox.admitSend(bytes: 1, hasCompletion: true, queuesHandler: true, closesWrite: false)
        inbox.handlerStarts(early: true)
        // This send finds the budget owing nothing and completes early; its handler comes next.
        _ = inbox.admitSend(bytes: 1, hasCompletion: true, queuesHandler: true, closesWrite: false)
        let r19 = inbox.append(1)
        #expect(!r19)
        let r20 = inbox.handlerEnded()
        #expect(!r20, "the next handler is queued and will wake the loop")
        inbox.handlerStarts(early: true)
        let r21 = inbox.handlerEnded()
        #expect(r21, "the chain ended: the queued send must reach the loop now")
    }

    @Test func aSendFromAnotherThreadWakesTheLoopWhileNoHandlerRuns() {
        var inbox = FlowInbox<Int>()
        inbox.budget.setOpen(true)
        _ = inbox.admitSend(bytes: 1, hasCompletion: true, queuesHandler: true, closesWrite: false)
        let r22 = inbox.append(1)
        #expect(r22, "an early completion's pending handler must not delay a send made elsewhere")
    }

    @Test func anInlineCompletionLeavesNoHandlerToWaitFor() {
        // Sends of the 2025 API complete inline: their completions queue no handler. Counted as
        // queued handlers, they made a state handler's end hold the wake-up back for ever, and a
        // cancel queued while it ran was never taken (a flow leaked).
        var inbox = FlowInbox<Int>()
        inbox.budget.setOpen(true)
        let inline = inbox.admitSend(bytes: 1, hasCompletion: true, queuesHandler: false, closesWrite: false)
        #expect(inline.completeNow)
        _ = inbox.finishDirectWrite(bytes: 0, queuesHandler: false)
        inbox.handlerStarts(early: false)
        let whileRunning = inbox.append(1)
        #expect(!whileRunning, "the running handler wakes the loop when it returns")
        let ended = inbox.handlerEnded()
        #expect(ended, "no handler is queued: the operation must reach the loop now")
        // The same sequence with a completion that queues its handler holds the wake-up back
        // until that handler has run.
        var queued = FlowInbox<Int>()
        queued.budget.setOpen(true)
        _ = queued.admitSend(bytes: 1, hasCompletion: true, queuesHandler: true, closesWrite: false)
        queued.handlerStarts(early: false)
        _ = queued.append(1)
        let held = queued.handlerEnded()
        #expect(!held)
        queued.handlerStarts(early: true)
        let chainEnd = queued.handlerEnded()
        #expect(chainEnd)
    }

    @Test func aLazyOperationWaitsForTheArmedReadAndDisarmingWakesForIt() {
        var inbox = FlowInbox<Int>()
        let armed = inbox.armRead(true)
        #expect(!armed)
        let lazy = inbox.append(1, lazy: true)
        #expect(!lazy, "the read the loop armed will bring the loop to it")
        let eager = inbox.append(2)
        #expect(eager, "anything else still wakes the loop")
        #expect(inbox.take() == [1, 2])
        let lazyAgain = inbox.append(3, lazy: true)
        #expect(!lazyAgain)
        let disarmed = inbox.armRead(false)
        #expect(disarmed, "a receive waiting for a read that will not come needs the loop now")
        let unarmed = inbox.append(4, lazy: true)
        #expect(!unarmed, "a wake-up is already on its way")
        _ = inbox.take()
        let afterDrain = inbox.append(5, lazy: true)
        #expect(afterDrain, "without an armed read a receive wakes the loop")
    }

    @Test func directWritesNeedTheLoopArmedAndNothingAhead() {
        var inbox = FlowInbox<Int>()
        inbox.budget.setOpen(true)
        inbox.armDirectWrites(true)
        #expect(!inbox.mayWriteDirectly(bytes: 10, closesWrite: false), "no socket, no direct writes")
        inbox.directSocket = DirectSocket(duplicating: 0)
        #expect(inbox.mayWriteDirectly(bytes: 10, closesWrite: false))
        #expect(!inbox.mayWriteDirectly(bytes: 10, closesWrite: true), "the final send goes through the loop")
        #expect(!inbox.mayWriteDirectly(bytes: 64 * 1024, closesWrite: false), "bulk sends go through the loop")
        _ = inbox.append(1)
        #expect(!inbox.mayWriteDirectly(bytes: 10, closesWrite: false), "a send must not overtake what is queued")
        _ = inbox.take()
        #expect(!inbox.directWritesArmed, "taking work disarms until the loop is done with it")
        inbox.armDirectWrites(true)
        #expect(inbox.mayWriteDirectly(bytes: 10, closesWrite: false))
        inbox.beginBatch()
        #expect(!inbox.mayWriteDirectly(bytes: 10, closesWrite: false), "a batch gathers its sends for the loop")
        _ = inbox.endBatch()
        _ = inbox.admitSend(bytes: 10, hasCompletion: true, queuesHandler: true, closesWrite: false)
        #expect(!inbox.mayWriteDirectly(bytes: 10, closesWrite: false), "bytes the loop still has to write come first")
        inbox.budget.settle(bytes: 10, counted: true, calledCompletion: false)
        #expect(inbox.mayWriteDirectly(bytes: 10, closesWrite: false))
        inbox.budget.close()
        #expect(!inbox.mayWriteDirectly(bytes: 10, closesWrite: false), "after a cancel sends learn their fate on the loop")
    }

    @Test func armingWaitsWhileAnythingIsQueued() {
        var inbox = FlowInbox<Int>()
        _ = inbox.append(1)
        inbox.armDirectWrites(true)
        #expect(!inbox.directWritesArmed)
    }

    @Test func theReadHandlerTakesOnlyLazyOperationsAndLeavesMixedOnesToTheWakeUp() {
        var inbox = FlowInbox<Int>()
        _ = inbox.armRead(true)
        _ = inbox.append(1, lazy: true)
        _ = inbox.append(2, lazy: true)
        #expect(inbox.takeLazy() == [1, 2])
        _ = inbox.append(3, lazy: true)
        let woke = inbox.append(4)
        #expect(woke)
        #expect(inbox.takeLazy().isEmpty, "a wake-up is on its way: everything waits for it, in order")
        #expect(inbox.take() == [3, 4])
    }

    @Test func aDirectWriteUnderWayKeepsTheLoopOutAndItsRestGoesFirst() {
        var inbox = FlowInbox<Int>()
        inbox.budget.setOpen(true)
        inbox.directSocket = DirectSocket(duplicating: 0)
        inbox.armDirectWrites(true)
        #expect(inbox.claimDirectWrite(bytes: 10, closesWrite: false) != nil)
        #expect(inbox.claimDirectWrite(bytes: 10, closesWrite: false) == nil, "one direct writer at a time")
        // Another sender meanwhile: queued, and its completion may not overtake the writer's.
        let early = inbox.admitSend(bytes: 5, hasCompletion: true, queuesHandler: true, closesWrite: false)
        #expect(!early.completeNow)
        let wokeForIt = inbox.append(2)
        #expect(wokeForIt)
        #expect(inbox.take().isEmpty, "the loop waits while the writer may still put its rest first")
        // The writer's socket took only part: the rest goes ahead of the other send.
        let wake = inbox.finishDirectWrite(bytes: 3, queuesHandler: false)
        _ = inbox.prepend(1)
        #expect(wake, "the loop is woken again for what queued meanwhile")
        #expect(inbox.take() == [1, 2])
        #expect(inbox.directlyWrittenBytes == 3)
    }

    @Test func largeSendsStayUncopiedOnlyWhereTheLoopCanWriteThemAndItsSocketIsFree() {
        var inbox = FlowInbox<Int>()
        let large = FlowInbox<Int>.directWriteLimit + 1
        #expect(!inbox.keepsUncopied(bytes: large, closesWrite: false), "no socket of its own: copied")
        inbox.directSocket = DirectSocket(duplicating: 0)
        #expect(inbox.keepsUncopied(bytes: large, closesWrite: false))
        #expect(!inbox.keepsUncopied(bytes: FlowInbox<Int>.directWriteLimit, closesWrite: false), "small: the sender writes it")
        #expect(!inbox.keepsUncopied(bytes: large, closesWrite: true), "the final send goes through the channel")
        // The loop writes only while no sender can.
        #expect(inbox.directSocketForLoop != nil)
        inbox.budget.setOpen(true)
        inbox.armDirectWrites(true)
        #expect(inbox.directSocketForLoop == nil, "armed: a sender may be writing")
        inbox.armDirectWrites(false)
        #expect(inbox.claimDirectWrite(bytes: 10, closesWrite: false) == nil)
        inbox.armDirectWrites(true)
        #expect(inbox.claimDirectWrite(bytes: 10, closesWrite: false) != nil)
        inbox.armDirectWrites(false)
        #expect(inbox.directSocketForLoop == nil, "a sender's write is under way")
        _ = inbox.finishDirectWrite(bytes: 10, queuesHandler: false)
        #expect(inbox.directSocketForLoop != nil)
    }
}
