; Added to tree-sitter-python's own tags query, which knows definitions and calls but not the names a
; module imports, the classes a class inherits from, or the types in annotations.

(import_from_statement
  name: (dotted_name (identifier) @name .)) @reference.import

(import_from_statement
  name: (aliased_import name: (dotted_name (identifier) @name .))) @reference.import

(class_definition
  superclasses: (argument_list [
    (identifier) @name
    (attribute attribute: (identifier) @name)
  ])) @reference.class

(type (identifier) @name) @reference.type

(decorator [
  (identifier) @name
  (call function: (identifier) @name)
]) @reference.call
