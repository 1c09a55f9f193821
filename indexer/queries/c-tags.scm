; Added to the C and C++ grammars' own tags queries, which find definitions only: calls and type uses.

(call_expression
  function: [
    (identifier) @name
    (field_expression field: (field_identifier) @name)
  ]) @reference.call

(type_identifier) @name @reference.type
