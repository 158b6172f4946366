/// A weak reference that can cross threads: a load carries its manager this way (in its task,
/// or in the completion handlers of a task-free load), so that the load does not keep the
/// manager alive.
package struct WeakReference<Object: AnyObject & Sendable>: @unchecked Sendable {
    // Unchecked: the object is `Sendable`, and the reference is set once at creation and only
    // loaded afterwards (weak loads are atomic); the checker does not accept `weak var` in a
    // Sendable struct.
    package weak var object: Object?

    package init(_ object: Object?) {
        self.object = object
    }
}
