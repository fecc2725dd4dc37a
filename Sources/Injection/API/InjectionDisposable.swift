/// An instance that wants to know when the container lets it go, e.g. to close a connection at logout.
///
/// ```swift
/// final class ChatSocket: InjectionDisposable {
///     func dispose() { close() }
/// }
/// InjectionManager.register(ChatSocket.self) { ChatSocket() }
/// InjectionManager.resetCurrentContainer()   // calls dispose() on the cached ChatSocket
/// ```
///
/// ``dispose()`` is called once per eviction of a cached `.scoped` or `.singleton` instance: by
/// ``InjectionContainer/reset()``, by ``InjectionContainer/unregister(_:)-(Value.Type)``, and by
/// registering the type again. It runs on the thread that evicted the instance, after the container's
/// lock is released, so it may use the container. Instances that objects still hold stay alive;
/// ``InjectionManager/liveInstancesFromPreviousScopes()`` lists them. `.transient` and `.weak`
/// instances are never owned by the container and are not told.
public protocol InjectionDisposable: AnyObject {
    /// Called when the container evicts this instance; release what the session held.
    func dispose()
}
