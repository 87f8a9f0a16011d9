/// The way back to an object for the closures it hands to things that may outlive it or call back while it is being
/// destroyed (its socket, its timer, its virtual pads), without a weak reference.
///
/// A weak reference to an object gives it a side table, and every retain and release of that object then takes the
/// runtime's slow path. For the link's endpoints, retained and released dozens of times per forwarded frame, weak
/// references cost more than a tenth of a frame's instructions (callgrind in the guest), besides a weak load for
/// every datagram.
///
/// The owner sets `target` to itself when it is made and back to nil first thing in its deinit, before its stored
/// properties (whose closing may call back) are destroyed; a closure checks `target` before anything else.
///
/// Not Sendable: the loop's thread only, as the owner.
package final class OwnerReference<Target: AnyObject> {
    /// unowned(unsafe): no reference counting. Sound because the owner clears it in its deinit, and nothing else
    /// sets it.
    package unowned(unsafe) var target: Target?

    package init() {}
}
