; Added to tree-sitter-rust's own tags query: an impl block defines its type's methods, so functions
; inside it get the type as their scope.

(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
  ]) @definition.impl
