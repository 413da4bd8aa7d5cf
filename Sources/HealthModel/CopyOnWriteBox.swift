/// A value kept in one heap box that copies share until one of them changes it (copy on
/// write). A sample is copied through every stage of the pipeline; a field kept in a box makes
/// such a copy one reference count, not one per string inside it.
///
/// The owner changes `value` only through `change(_:_:)` or after `makeUnique(_:)`, that is
/// while no other copy shares the box, so a box is never changed while another thread can see it.
final class CopyOnWriteBox<Value: Sendable>: @unchecked Sendable {
    @exclusivity(unchecked) var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Gives `box` a box of its own (a copy of the value) when another owner shares it.
    static func makeUnique(_ box: inout CopyOnWriteBox<Value>) {
        if !isKnownUniquelyReferenced(&box) { box = CopyOnWriteBox(box.value) }
    }

    /// Changes the value in a box of the owner's own.
    static func change(_ box: inout CopyOnWriteBox<Value>, _ body: (inout Value) -> Void) {
        makeUnique(&box)
        body(&box.value)
    }
}
