import NearbyFusion
import Foundation

/// Reads a recording on a background thread, in batches, while the caller consumes the
/// previous batch: parsing and fusion overlap on two cores. Errors arrive in order, after
/// the events that preceded them, exactly as a sequential read would raise them.
final class EventPipeline: @unchecked Sendable {
    enum Item {
        /// A batch, with the bytes of the file consumed once it was read.
        case events([RecordingEvent], bytesConsumed: Int)
        case failure(Error)
        case end
    }

    private let condition = NSCondition()
    private var queue: [Item] = []   // guarded by `condition`
    private var cancelled = false    // guarded by `condition`
    private let depth = 4

    /// Hands a reader to the reading thread. The caller gives it up (it never touches the
    /// reader again), so exactly one thread uses it at any time.
    private final class Handover: @unchecked Sendable {
        var reader: RecordingReader
        init(_ reader: RecordingReader) { self.reader = reader }
    }

    /// Starts reading `reader` (positioned after its header) on a new thread; the caller
    /// must not use `reader` afterwards.
    init(reader: RecordingReader, batchSize: Int = 512) {
        let handover = Handover(reader)
        let thread = Thread { [self] in
            var reader = handover.reader
            var batch: [RecordingEvent] = []
            batch.reserveCapacity(batchSize)
            do {
                while let event = try reader.next() {
                    batch.append(event)
                    if batch.count == batchSize {
                        guard push(.events(batch, bytesConsumed: reader.bytesConsumed)) else { return }
                        batch = []
                        batch.reserveCapacity(batchSize)
                    }
                }
                if !batch.isEmpty { guard push(.events(batch, bytesConsumed: reader.bytesConsumed)) else { return } }
                _ = push(.end)
            } catch {
                if !batch.isEmpty { guard push(.events(batch, bytesConsumed: reader.bytesConsumed)) else { return } }
                _ = push(.failure(error))
            }
        }
        thread.name = "nearby-fusion.reader"
        thread.start()
    }

    /// Waits while the queue is full; false once the consumer has cancelled.
    private func push(_ item: Item) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= depth && !cancelled { condition.wait() }
        if cancelled { return false }
        queue.append(item)
        condition.broadcast()
        return true
    }

    /// The next item, waiting for it.
    func next() -> Item {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty { condition.wait() }
        let item = queue.removeFirst()
        condition.broadcast()
        return item
    }

    /// Stops the reader (the consumer failed or finished early).
    func cancel() {
        condition.lock()
        cancelled = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}
