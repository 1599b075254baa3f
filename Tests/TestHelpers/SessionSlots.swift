import Testing

/// The test targets' suites run in one process at once, and sessions share what is
/// process-wide: the running-session limit (`NISession.maximumActiveSessions`) — while the
/// test of that limit holds every slot, a session another suite starts is refused — and the
/// discovery tokens, archived and unarchived through Foundation's keyed archiver. The tests
/// that start sessions or archive tokens take this lock, one at a time (a first-come,
/// first-served mutex that suspends, blocking no thread): a suite by ``HoldsSessionSlots``,
/// a single test by ``exclusively(_:)``.
public actor SessionSlots {
    /// The lock every test that starts a session takes.
    public static let shared = SessionSlots()

    private var isHeld = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Waits until the lock is free and takes it.
    public func acquire() async {
        guard isHeld else { isHeld = true; return }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the lock to the next waiting test, or frees it.
    public func release() {
        if waiting.isEmpty { isHeld = false } else { waiting.removeFirst().resume() }
    }

    /// Runs `body` holding the lock.
    public static func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await shared.acquire()
        do {
            let value = try await body()
            await shared.release()
            return value
        } catch {
            await shared.release()
            throw error
        }
    }
}

/// A suite trait: each test case of the suite, nested suites' included, holds ``SessionSlots``
/// while it runs (not the suites around them: the lock is not re-entrant).
public struct HoldsSessionSlots: SuiteTrait, TestTrait, TestScoping {
    public init() {}

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { testCase == nil ? nil : self }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await SessionSlots.exclusively { try await function() }
    }
}
