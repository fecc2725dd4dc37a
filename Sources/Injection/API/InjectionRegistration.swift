/// A registration just made, returned by `register` so more can be chained on it.
///
/// ```swift
/// InjectionManager.register(LiveSession.self) { LiveSession() }
///     .implements((any Auth).self) { $0 }
///     .implements((any TokenStore).self) { $0 }
///     .postConstruction { session in session.restore() }
/// ```
/// Chain it right after `register`, at launch: each call registers again (the first registers the
/// other type), so it evicts whatever was built from the registration before it.
///
/// A handle acts only while its registration is the current one for its type. Once the type is
/// registered again (or unregistered), the handle is stale: `.postConstruction` and `.implements` on it
/// change nothing and report the mistake through ``InjectionManager/diagnosticsHandler``; chain on the
/// handle the latest `register` returned. (`.postConstruction` returns a new handle, which is then the
/// current one; `.implements` returns the same handle.)
public struct InjectionRegistration<Value>: Sendable {
    let container: InjectionContainer
    let registration: Registration

    /// Makes `Other` resolve to this registration's instance, through `upcast`: one object under
    /// several protocols.
    ///
    /// ```swift
    /// InjectionManager.register(LiveSession.self) { LiveSession() }.implements((any Auth).self) { $0 }
    /// Inject((any Auth).self) === Inject(LiveSession.self)   // true, in one scope
    /// ```
    /// `Other` gets the same instance in the same scope, with this registration's lifetime, and a reset
    /// evicts that instance once: `Other` keeps nothing of its own, it resolves this registration and
    /// upcasts. The closure is the upcast, so it needs no `as!`. The graph shows `Other` needing this type.
    /// `Other` resolves wherever this type does, since it resolves this registration: for a main-actor or
    /// async registration, a synchronous resolve of `Other` succeeds once the instance is built and fails
    /// with this type's error before, and `resolveAsync` of `Other` hops or awaits as this type's does.
    /// `Other` must be another type than the registered one: `.implements(Self.self)` traps with a message.
    @discardableResult public func implements<Other>(
        _ other: Other.Type, file: StaticString = #fileID, _ upcast: @escaping @Sendable (Value) -> Other
    ) -> Self {
        let primary = registration.type
        if AnyType(exactly: other) == primary {
            let name = TypeNames.literal(other, named: container.names.name(of: other))
            preconditionFailure("""
                Injection: \(name) cannot implement itself: .implements(\(name).self) would replace its own \
                registration with one that resolves it, a cycle. Name another type the instance stands for, \
                such as a protocol it conforms to: .implements((any SomeProtocol).self) { $0 }
                """)
        }
        // The alias resolves the primary through the binding, not a captured container (a copy of the
        // container resolves its own), so the rules of whatever is registered for the primary when it runs
        // apply: a synchronous resolve of the alias succeeds wherever the primary's would (a main-actor or
        // async primary once it is built, say), and fails where the primary's would, naming the primary;
        // `resolveAsync` of the alias runs its async form, which hops or awaits as the primary's does.
        let alias = Registration(alias: AnyType(exactly: other), of: primary, file: file, factory: {
            upcast(try InjectionContainer.resolve(primary, as: Value.self, in: nil, caller: nil))
        }, asyncForm: {
            upcast(try await InjectionManager.currentContainer.asyncResolve(primary).value(as: Value.self))
        })
        if !container.register(alias, whileCurrent: registration) {
            let name = TypeNames.literal(other, named: container.names.name(of: other))
            container.reportStaleHandle(of: primary, call: ".implements(\(name).self) { ... }")
        }
        return self
    }

    /// Adds a `postConstruction` step, run after the ones registered before it, in order.
    ///
    /// ```swift
    /// InjectionManager.register(DataProvider.self) { DataProvider() }
    ///     .postConstruction { $0.delegate = Inject(ViewController.self) }
    ///     .postConstruction { $0.reload() }
    /// ```
    /// It follows the rules of `register`'s `postConstruction:` parameter, which is the first step.
    @discardableResult public func postConstruction(_ body: @escaping @Sendable (Value) throws -> Void) -> Self {
        let chained = registration.adding(postConstruction: body)
        guard container.register(chained, whileCurrent: registration) else {
            container.reportStaleHandle(of: registration.type, call: ".postConstruction { }")
            return self
        }
        return InjectionRegistration(container: container, registration: chained)
    }
}
