import Foundation

/// Sends the current user's queued changes, one at a time, in order: a task of its own that
/// decides (``nextSend(_:)``), notes the attempt, sends through the kind's registered sender
/// and records the outcome (``finish(_:of:in:)``), then waits for a wake-up or its backoff.
///
/// Of all the processes sharing the root, one sends at a time: the sender takes a lease in the
/// lock file (``SenderLease``) for each send and renews it while the send runs.
///
/// Thread safety: `Sendable`; its schedule lives in the ``Outbox``'s state. It holds the
/// outbox only while a step runs, so the cache can go away while it waits.
final class OutboxSender: Sendable {
    /// Where the sender registers its wake-up, to hear of other processes' changes.
    let observers: ChangeObservers

    init(observers: ChangeObservers) {
        self.observers = observers
    }

    /// Starts the sender of queued changes, once: a task of the cache's own that sends the
    /// current user's queue, one change at a time, and waits for ``Outbox/signal`` (an enqueue,
    /// a registration, another process's change, the app active, the network back) or the
    /// backoff's timer in between. It holds the cache only while a step runs.
    func start(for outbox: Outbox) {
        let started = outbox.state.withLock { $0.sending.task != nil }
        guard !started else { return }
        let signal = outbox.signal
        let observer = observers.add(cacheName: Outbox.observerName, key: nil, signal: signal)
        let task = FollowLoop.start(holding: outbox, signal: signal, timers: outbox.store.configuration.timers, state: {}) { [self] outbox, _ in
            .wait(await sendStep(outbox))
        }
        let duplicate = outbox.state.withLock { state -> Bool in
            guard state.sending.task == nil else { return true }
            state.sending.task = task
            return false
        }
        if duplicate {
            task.cancel()
            observers.remove(observer)
        }
    }

    /// Stops the sender and lets go of the lease (the cache is going away).
    ///
    /// A running sender's task is cancelled on a library thread, and the lease let go after it
    /// there: this runs in a `deinit`, whose thread may be exiting, where cancelling a task (a
    /// Dispatch call) corrupts the heap on Linux (see ``LibraryThreads/handOff(_:)``).
    func stop(for outbox: Outbox) {
        let disk = outbox.store.disk
        let holder = ObjectIdentifier(outbox)
        let releaseLease: @Sendable () -> Void = { disk.coordinator.senderLease.release(by: holder, root: disk.store.fileSystem.versionPath) }
        guard let task = outbox.state.withLock({ $0.sending.task }) else { return releaseLease() }
        LibraryThreads.handOff {
            task.cancel()
            releaseLease()
        }
    }

    /// Lets the sender try at once: the app became active, the network came back, the user
    /// switched.
    func sendNow(_ outbox: Outbox) {
        outbox.state.withLock { state in
            state.sending.retryNow()
            state.sending.wakes &+= 1
        }
        outbox.signal.fire()
    }

    /// One step of the sender: decide, note the attempt, send, record what became of it.
    ///
    /// - Returns: how long to wait for a wake-up at most (`nil`: no timer).
    func sendStep(_ outbox: Outbox) async -> Duration? {
        let request = outbox.state.withLock { $0.sending.drainRequests }
        let decision = await LibraryThreads.run { [self] in nextSend(outbox) }
        guard case .send(let job) = decision else {
            outbox.state.withLock { $0.sending.idleAfterRequest = max($0.sending.idleAfterRequest, request) }
            if case .wait(let duration) = decision { return duration }
            return nil
        }
        // Noted before the send: a crash or kill during it leaves the change tried, and the
        // next process sends it again with the same id.
        outbox.state.withLock { $0.sending.isSending = true }
        defer { outbox.state.withLock { $0.sending.isSending = false } }
        guard await LibraryThreads.run({ [self] in noteAttempt(job, in: outbox) }) else { return .zero }
        let disk = outbox.store.disk
        let lease = disk.coordinator.senderLease
        let (holder, root) = (ObjectIdentifier(outbox), disk.store.fileSystem.versionPath)
        let renewal = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(Double(SenderLease.duration) / 3))
                if Task.isCancelled { break }
                _ = lease.acquire(by: holder, root: root)
            }
        }
        let outcome: SendOutcome
        let events = outbox.store.events
        events.record(.mutationSent(name: job.kind.name, id: job.id), cacheName: job.kind.cacheName, key: job.key, user: job.session.user)
        do {
            try await job.kind.send?(job.mutation, job.id)
            outcome = .accepted
        } catch let rejection as MutationRejected {
            outcome = .rejected(rejection)
        } catch {
            outcome = .failed(error)
        }
        renewal.cancel()
        let wait = await LibraryThreads.run { [self] in finish(outcome, of: job, in: outbox) }
        // Backing off after a failure: a drain under way is over (it does not wait out a backoff).
        if wait != .zero { outbox.state.withLock { $0.sending.idleAfterRequest = max($0.sending.idleAfterRequest, request) } }
        return wait
    }

    /// What the sender does next.
    enum SendDecision {
        case send(SendJob)
        /// Nothing to send until a wake-up, or until this long has passed.
        case wait(Duration?)
    }

    /// The queue's first change that may be sent, if it may be sent now; takes the sender's
    /// lease for it.
    ///
    /// A change whose kind is known but whose bytes read as no version of it (an app update
    /// changed the type without an upgrade for them) is passed over, reported once and noted
    /// as its ``PendingMutation/lastError``: it holds back the later changes of its kind, and
    /// changes of other kinds go ahead. A change whose kind has no sender here holds back the
    /// whole queue (order is kept; another build or process may know it).
    func nextSend(_ outbox: Outbox) -> SendDecision {
        let store = outbox.store
        let disk = store.disk
        let lease = disk.coordinator.senderLease
        let (holder, root) = (ObjectIdentifier(outbox), disk.store.fileSystem.versionPath)
        guard !disk.isReadOnly, !disk.gate.isClosed, store.state.withLock({ $0.versionRemoval == nil }) else { return .wait(nil) }
        let session = store.session
        let (user, changes) = outbox.current()
        guard user == session.user else {
            lease.release(by: holder, root: root)
            return .wait(nil)
        }
        var heldKinds: Set<String> = []
        var passedOver: [UUID] = []
        var first: OutboxQueue.Change?
        for change in changes {
            if change.isUndecodable {
                heldKinds.insert(change.entry.name)
                noteUndecodable(change, of: user, in: outbox)
            } else if !heldKinds.contains(change.entry.name) {
                first = change
                break
            }
            passedOver.append(change.entry.id)
        }
        guard let head = first else {
            lease.release(by: holder, root: root)
            return .wait(nil)
        }
        let now = outbox.store.configuration.timers.uptime
        let (kind, retryAt, registered, wakes) = outbox.state.withLock {
            ($0.kinds[head.entry.name], $0.sending.retryAt, $0.sending.lastRegistration, $0.sending.wakes)
        }
        if let retryAt, retryAt > now { return .wait(retryAt - now) }
        guard let kind, let mutation = head.mutation, kind.send != nil else {
            lease.release(by: holder, root: root)
            // Waits for its sender (or a version of the app that knows it): reported once the
            // registrations at launch are over.
            guard let registered else { return .wait(nil) }
            let grace = registered + SenderSchedule.registrationGrace
            guard now >= grace else { return .wait(grace - now) }
            let report = outbox.state.withLock { $0.sending.reported.insert("waits \(head.entry.id)").inserted }
            if report {
                store.reportAll([AppCacheError(
                    code: .modelMismatch,
                    message: "The first queued change (kind \"\(head.entry.name)\") cannot be sent: \(head.problem ?? "no sender is registered for its kind"). It waits, and the changes after it, until a sender of this app (or a newer one) can send it.",
                    cacheName: kind?.cacheName, key: head.entry.key,
                    path: disk.store.fileSystem.displayPath(OutboxFile.path(for: user)))])
            }
            return .wait(nil)
        }
        switch lease.acquire(by: holder, root: root) {
        case .held:
            return .send(SendJob(
                session: session, id: head.entry.id, mutation: mutation, kind: kind, key: head.entry.key, passedOver: Set(passedOver),
                wakesBefore: wakes))
        case .heldElsewhere(let seconds):
            return .wait(.seconds(Int(seconds)))
        case .unavailable:
            return .wait(nil)
        }
    }

    /// Records that `job` is being sent, if its change is still the first in its user's queue
    /// but for those the decision passed over (the disk says, under the lock: another process
    /// may have sent it meanwhile, or enqueued nothing before it).
    ///
    /// - Returns: whether to send it.
    func noteAttempt(_ job: SendJob, in outbox: Outbox) -> Bool {
        let store = outbox.store
        /// The job's entry in `log`, if only passed-over changes come before it.
        func entry(in log: OutboxLog) -> OutboxLog.Entry? {
            for entry in log.entries {
                if entry.id == job.id { return entry }
                guard job.passedOver.contains(entry.id) else { return nil }
            }
            return nil
        }
        do {
            let first = try store.withDiskWrites { batch -> Bool in
                guard store.state.withLock({ job.session.isCurrent(in: $0.sessions) }) else { return false }
                let (queue, _) = try OutboxFile.change(for: job.session.user, in: &batch) { log in
                    guard let head = entry(in: log) else { return nil }
                    return OutboxLog.attempted(job.id, attempts: head.attempts + 1, error: head.lastError)
                }
                return entry(in: queue) != nil
            }
            outbox.didChange(cacheName: job.kind.cacheName, key: job.key, everyKey: job.kind.isByID)
            return first
        } catch {
            store.reportAll([AppCacheError(wrapping: error)])
            backOff(outbox, after: job)
            return false
        }
    }

    /// Records what became of a send: an accepted change is folded into its confirmed
    /// collection and leaves the queue, a rejected one leaves it, a failed one stays with its
    /// error and the sender backs off.
    ///
    /// - Returns: how long the sender waits before its next step.
    func finish(_ outcome: SendOutcome, of job: SendJob, in outbox: Outbox) -> Duration? {
        let store = outbox.store
        var problems: [AppCacheError] = []
        let user = job.session.user
        do {
            switch outcome {
            case .accepted:
                // Folded first: were the process to die between the two, the change would be
                // sent again (same id) and applied again on a collection that holds it; the
                // other order would hide it until the next fetch.
                if (try? OutboxFile.read(user, from: store.disk.store))?.log.entries.contains(where: { $0.id == job.id }) ?? true {
                    let type = job.kind.modelType
                    outbox.state.withLock { $0.sending.folds[type, default: 0] &+= 1 }
                    do {
                        try job.kind.fold(outbox, job.mutation, job.session)
                    } catch {
                        problems.append(AppCacheError(wrapping: error, message: "An accepted change could not be folded into its collection."))
                    }
                    outbox.state.withLock { $0.sending.folds[type, default: 0] &+= 1 }
                }
                try markDone(job, in: outbox)
                store.events.record(.mutationAccepted(name: job.kind.name, id: job.id), cacheName: job.kind.cacheName, key: job.key, user: user)
                outbox.state.withLock { $0.sending.accepted += 1 }
            case .rejected(let rejection):
                try markDone(job, in: outbox)
                store.events.record(
                    .mutationRejected(name: job.kind.name, id: job.id, message: "\(rejection)"), cacheName: job.kind.cacheName, key: job.key,
                    user: user)
            case .failed(let error):
                try noteError(String(describing: error), of: job.id, user: user, in: outbox)
                backOff(outbox, after: job)
            }
        } catch {
            problems.append(AppCacheError(wrapping: error))
            backOff(outbox, after: job)
        }
        store.reportAll(problems)
        outbox.didChange(cacheName: job.kind.cacheName, key: job.key, everyKey: job.kind.isByID)
        let retryAt = outbox.state.withLock { $0.sending.retryAt }
        return retryAt.map { max($0 - outbox.store.configuration.timers.uptime, .zero) } ?? .zero
    }

    /// Notes why a change that does not decode waits, as its last error (once per process):
    /// what ``AppCache/pendingMutations`` and the inspector's LAST ERROR show.
    private func noteUndecodable(_ change: OutboxQueue.Change, of user: String?, in outbox: Outbox) {
        guard change.entry.lastError != change.problem,
            outbox.state.withLock({ $0.sending.reported.insert("last error \(change.entry.id)").inserted })
        else { return }
        do {
            try noteError(change.problem, of: change.entry.id, user: user, in: outbox)
            outbox.withState { $0.queue.markStale() }
        } catch {
            outbox.store.reportAll([AppCacheError(wrapping: error)])
        }
    }

    /// Records `error` as the last error of the change `id` in `user`'s queue, its attempts as
    /// they are (nothing when the queue no longer holds it).
    private func noteError(_ error: String?, of id: UUID, user: String?, in outbox: Outbox) throws {
        try outbox.store.withDiskWrites { batch in
            _ = try OutboxFile.change(for: user, in: &batch) { log in
                guard let entry = log.entries.first(where: { $0.id == id }) else { return nil }
                return OutboxLog.attempted(id, attempts: entry.attempts, error: error)
            }
        }
    }

    /// Takes `job`'s change out of its user's queue (if it is still there: another process may
    /// have answered it) and lets the next send start at once.
    private func markDone(_ job: SendJob, in outbox: Outbox) throws {
        try outbox.store.withDiskWrites { batch in
            _ = try OutboxFile.change(for: job.session.user, in: &batch) { log in
                log.entries.contains { $0.id == job.id } ? OutboxLog.done(job.id) : nil
            }
        }
        outbox.state.withLock { $0.sending.retryNow() }
    }

    /// Waits before the next send as ``Configuration/mutationRetry`` says after one more failure
    /// of `job`; not at all when the sender was asked to try at once after `job` was decided
    /// (the failure may predate the network coming back, and the request would be lost).
    private func backOff(_ outbox: Outbox, after job: SendJob) {
        let retry = outbox.store.configuration.mutationRetry
        outbox.state.withLock { state in
            guard state.sending.wakes == job.wakesBefore else { return }
            state.sending.failures += 1
            state.sending.retryAt = outbox.store.configuration.timers.uptime + retry.delay(afterFailures: state.sending.failures, fraction: .random(in: 0.5...1))
        }
    }
}
